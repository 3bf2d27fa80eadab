import { randomUUID } from 'node:crypto';
import { expect, test, type APIRequestContext, type BrowserContext } from '@playwright/test';
import superjson from 'superjson';
import { signIn } from './fixtures';

/** A read and a mutation through tRPC with exactly the given cookie header (a replayed session cookie). */
async function replay(request: APIRequestContext, cookie: string) {
  const read = await request.get('/api/trpc/projects.list', { headers: { cookie } });
  // Ending a session that does not exist: 404 while signed in (it got past authentication), 401 when not.
  const mutation = await request.post('/api/trpc/sessions.revoke', {
    headers: { cookie, 'content-type': 'application/json', 'x-meridian-csrf': '1' },
    data: superjson.serialize({ id: randomUUID() }),
  });
  const page = await request.get('/projects', { headers: { cookie }, maxRedirects: 0 });
  return { read: read.status(), mutation: mutation.status(), page: page.status(), location: page.headers().location ?? '' };
}

async function sessionCookie(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name.endsWith('authjs.session-token'));
  expect(cookie, 'signed in').toBeDefined();
  return `${cookie!.name}=${cookie!.value}`;
}

test('after sign-out, the old session cookie replayed gets 401 and the sign-in page', async ({ page, context, playwright, baseURL }) => {
  await signIn(page, 'tenant@example.com');
  const cookie = await sessionCookie(context);
  // A clean client (no cookie jar) replays exactly the cookie: it works while the session lives…
  const attacker = await playwright.request.newContext({ baseURL });
  expect(await replay(attacker, cookie)).toEqual({ read: 200, mutation: 404, page: 200, location: '' });

  await page.goto('/projects');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in/);

  // …and not after sign-out, for a read, a mutation or a page.
  const after = await replay(attacker, cookie);
  expect(after.read).toBe(401);
  expect(after.mutation).toBe(401);
  expect(after.page).toBe(307);
  expect(after.location).toContain('/sign-in');
  const session = await (await attacker.get('/api/auth/session', { headers: { cookie } })).json();
  expect(session?.user).toBeUndefined();
  await attacker.dispose();
});

test('the sessions page lists this browser and another, signs the other out, then everywhere', async ({ browser, page }) => {
  await signIn(page, 'viewer@example.com');
  // The other browser claims addresses it does not have: neither header is believed from it.
  const other = await browser.newContext({
    userAgent: 'e2e-other-browser',
    extraHTTPHeaders: { 'x-forwarded-for': '198.51.100.77', 'x-meridian-client-address': '198.51.100.78' },
  });
  const otherPage = await other.newPage();
  await signIn(otherPage, 'viewer@example.com');

  await page.goto('/projects');
  await page.getByRole('link', { name: 'Sessions' }).click();
  await expect(page).toHaveURL(/\/account\/sessions/);
  const rows = page.getByTestId('session-row');
  await expect(rows.filter({ hasText: 'this browser' })).toHaveCount(1);
  // The browser in words, not its raw user-agent string (which stays in the cell's title).
  const thisBrowser = rows.filter({ hasText: 'this browser' }).getByTestId('session-browser');
  await expect(thisBrowser).toHaveText(/^(Headless )?Chrome \d+ on Linux$/);
  await expect(thisBrowser).toHaveAttribute('title', /Mozilla\/5\.0/);
  const otherRow = rows.filter({ hasText: 'e2e-other-browser' });
  await expect(otherRow).toHaveCount(1);
  await expect(otherRow).toContainText(/127\.0\.0\.1|::1/);
  await expect(otherRow).not.toContainText('198.51.100.');

  await otherRow.getByRole('button', { name: 'Sign out' }).click();
  await expect(otherRow).toHaveCount(0);
  await expect(rows.filter({ hasText: 'this browser' })).toHaveCount(1);
  // The other browser is signed out at once.
  await otherPage.goto('/projects');
  await expect(otherPage).toHaveURL(/\/sign-in/);

  await page.getByRole('button', { name: 'Sign out everywhere' }).click();
  await expect(page).toHaveURL(/\/sign-in/);
  await page.goto('/projects');
  await expect(page).toHaveURL(/\/sign-in/);
  await other.close();
});

test('an admin signs a user out everywhere from the Users page', async ({ page, browser }) => {
  const userContext = await browser.newContext({ userAgent: 'e2e-globex-browser' });
  const userPage = await userContext.newPage();
  await signIn(userPage, 'globex@example.com');
  await userPage.goto('/projects');
  await expect(userPage.getByTestId('current-user')).toContainText('globex@example.com');

  await signIn(page, 'admin@example.com');
  await page.goto('/projects');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users', exact: true }).click();
  await page.getByRole('link', { name: 'Sessions of globex@example.com' }).click();
  await expect(page.getByText('Sessions of globex@example.com')).toBeVisible();
  await expect(page.getByTestId('session-row').filter({ hasText: 'e2e-globex-browser' })).toHaveCount(1);
  await page.getByRole('button', { name: 'Sign out everywhere' }).click();
  await expect(page.getByText('No sessions')).toBeVisible();
  // The admin stays signed in; the user is out.
  await expect(page.getByTestId('current-user')).toContainText('admin@example.com');
  await userPage.goto('/projects');
  await expect(userPage).toHaveURL(/\/sign-in/);
  await userContext.close();
});
