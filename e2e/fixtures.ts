import { expect, type Page } from '@playwright/test';

export const demoPassword = process.env.E2E_DEMO_PASSWORD ?? 'e2e-demo-password';

/** Signs in through the sign-in form, as a person would. */
export async function signInWithForm(page: Page, email: string, password = demoPassword) {
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Signs in through the auth API (fast path for tests about something else); cookies land in the page's context. */
export async function signIn(page: Page, email: string, password = demoPassword) {
  const csrf = await (await page.request.get('/api/auth/csrf')).json();
  const res = await page.request.post('/api/auth/callback/credentials', {
    form: { email, password, csrfToken: csrf.csrfToken, callbackUrl: '/' },
    maxRedirects: 0,
  });
  expect([200, 302]).toContain(res.status());
  const session = await (await page.request.get('/api/auth/session')).json();
  expect(session?.user?.email).toBe(email);
}

/** Creates a network in a project through its networks page, trying a few free /24s (other specs share the project). */
export async function createNetwork(page: Page, project: string, name: string) {
  for (let i = 0; i < 6; i++) {
    await page.goto(`/projects/${project}/networks`);
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Root CIDR', { exact: true }).fill(`10.${60 + Math.floor(Math.random() * 40)}.${Math.floor(Math.random() * 256)}.0/24`);
    await page.getByRole('button', { name: 'Create network' }).click();
    try {
      await expect(page).toHaveURL(new RegExp(`/projects/${project}/networks/${name}$`), { timeout: 10_000 });
      return;
    } catch {
      // An overlapping root: try another range.
    }
  }
  throw new Error(`could not create network ${name}`);
}
