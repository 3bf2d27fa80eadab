import { expect, test } from '@playwright/test';
import { demoPassword, signIn, signInWithForm } from './fixtures';

const roles = [
  { email: 'tenant@example.com', sees: ['Projects'], notSees: ['All projects', 'Allocation queue', 'Simulator'] },
  { email: 'viewer@example.com', sees: ['Projects'], notSees: ['Allocation queue', 'Simulator'] },
  { email: 'globex@example.com', sees: ['Projects'], notSees: ['Allocation queue', 'Simulator'] },
  { email: 'operator@example.com', sees: ['All projects', 'Allocation queue', 'Fleet', 'Quota admin', 'Audit log'], notSees: ['Simulator', 'Users'] },
  { email: 'qa@example.com', sees: ['Simulator'], notSees: ['Allocation queue', 'Audit log'] },
  {
    email: 'admin@example.com',
    sees: ['Projects', 'All projects', 'Allocation queue', 'Fleet', 'Quota admin', 'Audit log', 'Simulator', 'Users'],
    notSees: [],
  },
];

for (const role of roles) {
  test(`${role.email} signs in and sees their navigation`, async ({ page }) => {
    await signInWithForm(page, role.email);
    await expect(page.getByTestId('current-user')).toContainText(role.email);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const label of role.sees) await expect(nav.getByRole('link', { name: label, exact: true })).toBeVisible();
    for (const label of role.notSees) await expect(nav.getByRole('link', { name: label, exact: true })).toHaveCount(0);
  });
}

test('a wrong password is refused', async ({ page }) => {
  await signInWithForm(page, 'tenant@example.com', 'not-the-password');
  await expect(page.getByTestId('sign-in-error')).toHaveText('Wrong e-mail or password.');
  await expect(page).toHaveURL(/\/sign-in/);
  const session = await (await page.request.get('/api/auth/session')).json();
  expect(session?.user).toBeUndefined();
});

test('a globex tenant opening an acme project gets not-found and no data', async ({ page }) => {
  await signIn(page, 'globex@example.com');
  const response = await page.goto('/projects/acme-prod');
  expect(response?.status()).toBe(404);
  await expect(page.getByTestId('not-found')).toContainText('This page does not exist');
  const html = await page.content();
  expect(html).not.toContain('Acme production');
  expect(html).not.toContain('acme-prod</span>');
  // The tenant's own project opens.
  await page.goto('/projects/globex-web');
  await expect(page.getByTestId('project-title')).toContainText('Globex web');
});

test('a viewer cannot reach staff pages', async ({ page }) => {
  await signIn(page, 'viewer@example.com');
  const response = await page.goto('/operator/audit');
  expect(response?.status()).toBe(404);
});

test('signed out, the console sends you to sign in', async ({ page }) => {
  await page.goto('/projects/acme-prod');
  await expect(page).toHaveURL(/\/sign-in/);
});

test('sign out ends the session', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in/);
  const session = await (await page.request.get('/api/auth/session')).json();
  expect(session?.user).toBeUndefined();
});

test('the session and CSRF cookies are HttpOnly and SameSite=Lax, out of reach of page scripts', async ({ page, context }) => {
  await signInWithForm(page, 'tenant@example.com');
  await expect(page.getByTestId('current-user')).toContainText('tenant@example.com');
  const cookies = await context.cookies();
  // Served over plain http (no proxy, no AUTH_URL): no Secure flag, no __Secure- name.
  expect(cookies.find((c) => c.name === 'authjs.session-token')).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });
  expect(cookies.find((c) => c.name === 'authjs.csrf-token')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
  expect(await page.evaluate(() => document.cookie)).not.toContain('authjs');
});

test('behind a TLS-terminating proxy (X-Forwarded-Proto: https) the cookies are Secure, __Secure-/__Host- named, and the session works', async ({
  baseURL,
}) => {
  // Plain fetch, no cookie jar: the test sends exactly the cookies a browser would over https.
  const proxied = { 'x-forwarded-proto': 'https' };
  const setCookies = (res: Response) =>
    res.headers.getSetCookie().map((header) => {
      const [pair, ...attributes] = header.split(';').map((s) => s.trim());
      return { name: pair.slice(0, pair.indexOf('=')), pair, attributes: attributes.map((a) => a.toLowerCase()) };
    });
  const csrfResponse = await fetch(`${baseURL}/api/auth/csrf`, { headers: proxied });
  const csrf = setCookies(csrfResponse).find((c) => c.name === '__Host-authjs.csrf-token');
  expect(csrf?.attributes).toEqual(expect.arrayContaining(['httponly', 'secure', 'samesite=lax', 'path=/']));
  const { csrfToken } = (await csrfResponse.json()) as { csrfToken: string };

  const signedIn = await fetch(`${baseURL}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...proxied, 'content-type': 'application/x-www-form-urlencoded', cookie: csrf!.pair },
    body: new URLSearchParams({ email: 'tenant@example.com', password: demoPassword, csrfToken, callbackUrl: '/' }),
  });
  const session = setCookies(signedIn).find((c) => c.name === '__Secure-authjs.session-token');
  expect(session?.attributes).toEqual(expect.arrayContaining(['httponly', 'secure', 'samesite=lax', 'path=/']));
  expect(setCookies(signedIn).some((c) => c.name === 'authjs.session-token')).toBe(false);

  const me = await fetch(`${baseURL}/api/auth/session`, { headers: { ...proxied, cookie: session!.pair } });
  expect(((await me.json()) as { user?: { email?: string } }).user?.email).toBe('tenant@example.com');
  // The console's own server-side session lookup reads the same cookie.
  const page = await fetch(`${baseURL}/projects`, { headers: { ...proxied, cookie: session!.pair }, redirect: 'manual' });
  expect(page.status).toBe(200);
});
