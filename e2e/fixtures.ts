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
