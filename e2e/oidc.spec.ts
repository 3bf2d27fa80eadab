import { expect, test, type Browser, type Page } from '@playwright/test';
import postgres from 'postgres';
import { createNetwork, signIn } from './fixtures';
import { startOpenIdProvider, type TestOpenIdProvider } from '../test/oidc-provider';
import { freePort } from '../test/free-port';
import { e2eDatabaseUrls, startWebProcess, type WebProcess } from './web-process';

/**
 * Single sign-on through an invitation, for real: Chromium → a Meridian web process configured
 * for OIDC → a real OpenID provider (oidc-provider, e2e/oidc-provider.ts) → back to Meridian. The
 * main e2e web server stays without OIDC (other specs check the plain sign-in page), so this spec
 * starts a second web process on the same database, with AUTH_OIDC_* naming the provider.
 */

const PROJECT = 'acme-dev';
const PROVIDER_NAME = 'Example ID';
const stamp = Date.now().toString(36);
/** The provider's accounts, by the username typed on its sign-in page. */
const accounts = {
  [`new-person-${stamp}`]: { email: `new-person-${stamp}@example.com`, emailVerified: true, name: 'New Person' },
  [`someone-else-${stamp}`]: { email: `someone-else-${stamp}@example.com`, emailVerified: true, name: 'Someone Else' },
  [`unverified-${stamp}`]: { email: `unverified-${stamp}@example.com`, emailVerified: false, name: 'Not Verified' },
  [`squatted-${stamp}`]: { email: `squatted-${stamp}@example.com`, emailVerified: true, name: 'Real Holder' },
};

let provider: TestOpenIdProvider;
let web: WebProcess;
let sql: postgres.Sql;

test.describe.configure({ mode: 'serial', timeout: 120_000 });

test.beforeAll(async () => {
  test.setTimeout(180_000);
  const port = await freePort();
  provider = await startOpenIdProvider({ redirectUri: `http://127.0.0.1:${port}/api/auth/callback/oidc`, accounts });
  web = await startWebProcess(port, {
    AUTH_OIDC_ISSUER: provider.issuer,
    AUTH_OIDC_CLIENT_ID: provider.clientId,
    AUTH_OIDC_CLIENT_SECRET: provider.clientSecret,
    AUTH_OIDC_NAME: PROVIDER_NAME,
    // The provider is plain http on loopback: allowed only when said so.
    AUTH_OIDC_ALLOW_HTTP: '1',
  });
  sql = postgres(e2eDatabaseUrls().owner, { max: 1, onnotice: () => {} });
});

test.afterAll(async () => {
  await sql?.end();
  await web?.stop();
  await provider?.close();
});

test.afterEach(async () => {
  const info = test.info();
  if (info.status !== info.expectedStatus) await info.attach('web process output', { body: web.output(), contentType: 'text/plain' });
});

/** A page in a fresh browser context on the OIDC web process. */
async function freshPage(browser: Browser): Promise<Page> {
  return (await browser.newContext({ baseURL: web.base })).newPage();
}

/** The project owner (demo seed) invites `email` to the project as `role`; returns the link, shown once. */
async function invite(browser: Browser, email: string, role: 'editor' | 'viewer'): Promise<{ owner: Page; link: string }> {
  const owner = await freshPage(browser);
  await signIn(owner, 'tenant@example.com');
  await owner.goto(`/projects/${PROJECT}/members`);
  await owner.getByLabel('E-mail').fill(email);
  await owner.getByLabel('Role', { exact: true }).selectOption(role);
  await owner.getByRole('button', { name: 'Create invitation' }).click();
  const link = (await owner.getByTestId('invitation-url').textContent())!.trim();
  expect(link.startsWith(`${web.base}/invite/inv_`)).toBe(true);
  return { owner, link };
}

/** On an invitation's page: "Continue with" the provider, sign in there as `username`, allow Meridian. */
async function continueWithProvider(page: Page, link: string, username: string) {
  await page.goto(link);
  await page.getByRole('button', { name: `Continue with ${PROVIDER_NAME}` }).click();
  await expect(page).toHaveURL(new RegExp(`^${provider.issuer}/interaction/`));
  await page.getByLabel('Username').fill(username);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
}

/** The invitation's state in the database (by its e-mail: each test invites an address of its own). */
async function invitationOf(email: string) {
  const rows = await sql<{ accepted_at: Date | null; revoked_at: Date | null }[]>`
    select accepted_at, revoked_at from invitations where email = ${email}`;
  expect(rows).toHaveLength(1);
  return rows[0];
}

test('a new person continues with the provider from an invitation and lands on the project as an editor', async ({ browser }) => {
  const { email } = accounts[`new-person-${stamp}`];
  const { owner, link } = await invite(browser, email, 'editor');

  const person = await freshPage(browser);
  await person.goto(link);
  await expect(person.getByTestId('invitation-summary')).toContainText(`${email} is invited to project ${PROJECT} as editor`);
  await continueWithProvider(person, link, `new-person-${stamp}`);

  // Back from the provider, signed in as the invited address: the invitation is accepted and they land on the project.
  await expect(person).toHaveURL(new RegExp(`^${web.base}/projects/${PROJECT}$`));
  await expect(person.getByTestId('current-user')).toContainText(email);
  expect((await invitationOf(email)).accepted_at).not.toBeNull();

  // The member list shows them as an editor, and an editor's write succeeds.
  await owner.goto(`/projects/${PROJECT}/members`);
  await expect(owner.getByLabel(`Role of ${email}`)).toHaveValue('editor');
  await createNetwork(person, PROJECT, `e2e-oidc-${stamp}`);
  await expect(person.getByTestId('current-user')).toContainText(email);
});

test('signed in at the provider as another address, the invitation says whom it is for and stays pending', async ({ browser }) => {
  const invited = `invited-${stamp}@example.com`;
  const other = accounts[`someone-else-${stamp}`].email;
  const { owner, link } = await invite(browser, invited, 'viewer');

  const person = await freshPage(browser);
  await continueWithProvider(person, link, `someone-else-${stamp}`);
  await expect(person).toHaveURL(new RegExp(`/invite/inv_[^?]+\\?accept=1$`));
  await expect(person.getByTestId('accept-error')).toHaveText(
    `You are signed in as ${other}, but this invitation is for ${invited}: sign in with that address to accept it.`,
  );

  // Nothing was accepted: the owner still sees the invitation pending, and the database agrees.
  await owner.goto(`/projects/${PROJECT}/members`);
  await expect(owner.getByRole('row', { name: new RegExp(invited) })).toContainText('viewer');
  await expect(owner.getByTestId(`member-${invited}`)).toHaveCount(0);
  await expect(owner.getByTestId(`member-${other}`)).toHaveCount(0);
  expect(await invitationOf(invited)).toMatchObject({ accepted_at: null, revoked_at: null });
});

test('a provider that says the e-mail is not verified is refused with a clear message, and no user is created', async ({ browser }) => {
  const { email } = accounts[`unverified-${stamp}`];
  const { link } = await invite(browser, email, 'editor');

  const person = await freshPage(browser);
  await continueWithProvider(person, link, `unverified-${stamp}`);
  await expect(person.getByTestId('sign-in-error')).toHaveText(
    `${PROVIDER_NAME} has not verified the e-mail address of the account you signed in with, so Meridian cannot sign you in with it. Verify it there, or sign in another way.`,
  );
  const session = await (await person.request.get('/api/auth/session')).json();
  expect(session?.user).toBeUndefined();

  expect(await sql`select 1 from users where email = ${email}`).toHaveLength(0);
  expect(await invitationOf(email)).toMatchObject({ accepted_at: null, revoked_at: null });
});

test("the provider's verified e-mail never lands in a password account someone made for that address without verifying it", async ({ browser }) => {
  const { email } = accounts[`squatted-${stamp}`];
  // The squatter's account: made from an invitation link they held, with a password they chose; nobody verified the address.
  const [squatter] = await sql<{ id: string }[]>`
    insert into users (email, name, password_hash, created_via) values (${email}, 'Squatter', 'scrypt$16384$8$1$c2FsdA$aGFzaA', 'invitation') returning id`;
  const { link } = await invite(browser, email, 'editor');

  const person = await freshPage(browser);
  await continueWithProvider(person, link, `squatted-${stamp}`);
  await expect(person.getByTestId('sign-in-error')).toHaveText(
    `A Meridian account with your e-mail address exists, but nobody verified that the address is its holder's, so ${PROVIDER_NAME} cannot sign you into it. Ask an administrator to review the account.`,
  );
  const session = await (await person.request.get('/api/auth/session')).json();
  expect(session?.user).toBeUndefined();
  // No session for the squatter's account, no membership, and the invitation is still pending.
  expect(await sql`select 1 from sessions where user_id = ${squatter.id}`).toHaveLength(0);
  expect(await sql`select 1 from memberships where user_id = ${squatter.id}`).toHaveLength(0);
  expect(await invitationOf(email)).toMatchObject({ accepted_at: null, revoked_at: null });
});
