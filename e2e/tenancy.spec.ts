import { expect, test } from '@playwright/test';
import { freePort } from '../test/free-port';
import { startSmtpServer, type TestSmtpServer } from '../test/smtp';
import { createNetwork, signIn } from './fixtures';
import { startWebProcess, type WebProcess } from './web-process';

const PROJECT = 'acme-dev';

/**
 * Invitations are mailed: a second web process on the same database with SMTP_URL naming a real
 * SMTP server (smtp-server) that this spec runs on loopback and reads, as the invited person reads
 * their mail. The main e2e web server stays without mail.
 */
test.describe('invitations by mail', () => {
  let smtp: TestSmtpServer;
  let web: WebProcess;

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    smtp = await startSmtpServer();
    const port = await freePort();
    web = await startWebProcess(port, { SMTP_URL: smtp.url, SMTP_FROM: 'Meridian <meridian@example.com>', AUTH_URL: `http://127.0.0.1:${port}` });
  });

  test.afterAll(async () => {
    await web?.stop();
    await smtp?.close();
  });

  test('a new user accepts a mailed invitation, creates an organization, a project, a network and a claim (quota 1 of 100); demoted to viewer, their next write is refused', async ({
    browser,
  }) => {
    // Two people, three projects' pages and a build-cold server: longer than the default budget.
    test.setTimeout(240_000);
    const stamp = Date.now().toString(36);
    const email = `new-${stamp}@example.com`;
    const owner = await (await browser.newContext({ baseURL: web.base })).newPage();
    const member = await (await browser.newContext({ baseURL: web.base })).newPage();
    await signIn(owner, 'tenant@example.com');

    // The owner invites a new address as editor: it is mailed, and the owner's own link is shown once.
    await owner.goto(`/projects/${PROJECT}/members`);
    await owner.getByLabel('E-mail').fill(email);
    await owner.getByLabel('Role', { exact: true }).selectOption('editor');
    await owner.getByRole('button', { name: 'Create invitation' }).click();
    await expect(owner.getByTestId('invitation-link')).toContainText(`An invitation was mailed to ${email}.`);
    const link = (await owner.getByTestId('invitation-url').textContent())!.trim();
    expect(link).toMatch(/\/invite\/inv_/);

    // The owner's link creates no account: whoever holds it may not hold the address.
    await member.goto(link);
    await expect(member.getByTestId('invitation-summary')).toContainText(`${email} is invited to project ${PROJECT} as editor`);
    await expect(member.getByTestId('invitation-needs-proof')).toContainText(`use the invitation link mailed to ${email}`);
    await expect(member.getByRole('button', { name: 'Create account and join' })).toHaveCount(0);

    // The mailed link (another secret, only in the mail) lets the holder of the address set a password;
    // they are signed in and land on the project they were invited to.
    const mailed = await smtp.nextInvitationLink(email);
    expect(mailed.startsWith(`${web.base}/invite/inm_`)).toBe(true);
    await member.goto(mailed);
    await expect(member.getByTestId('invitation-summary')).toContainText(`${email} is invited to project ${PROJECT} as editor`);
    await member.getByLabel('Your name').fill('New Member');
    await member.getByLabel('Choose a password').fill('a good password');
    await member.getByRole('button', { name: 'Create account and join' }).click();
    await expect(member).toHaveURL(new RegExp(`/projects/${PROJECT}$`));
    await expect(member.getByTestId('current-user')).toContainText(email);

    // The invitation was single use, through either link.
    const again = await (await browser.newContext({ baseURL: web.base })).newPage();
    await again.goto(link);
    await expect(again.getByTestId('invitation-error')).toContainText('already used');
    await again.goto(mailed);
    await expect(again.getByTestId('invitation-error')).toContainText('already used');

    // From the project switcher: a new organization, then its first project.
    await member.getByRole('link', { name: 'New organization' }).click();
    await member.getByLabel('Name').fill('Member Org');
    await member.getByLabel('Slug').fill(`org-${stamp}`);
    await member.getByRole('button', { name: 'Create organization' }).click();
    await expect(member).toHaveURL(new RegExp(`/projects/new\\?organization=org-${stamp}$`));
    const project = `prj-${stamp}`;
    await member.getByLabel('Name').fill('Member project');
    await member.getByLabel('Slug').fill(project);
    await member.getByRole('button', { name: 'Create project' }).click();
    await expect(member).toHaveURL(new RegExp(`/projects/${project}$`));

    // A network and a claim in it: the quota bucket reads 1 of 100.
    await createNetwork(member, project, 'vpc');
    await member.getByLabel('Claim name').fill('first');
    await member.getByLabel('Prefix length', { exact: true }).fill('28');
    await member.getByRole('button', { name: 'Create claim' }).click();
    await expect(member.getByRole('table', { name: 'Claims' }).getByRole('row', { name: /first/ })).toContainText('/28');
    await member.goto(`/projects/${project}/quota`);
    await expect(member.getByRole('meter', { name: 'IP claims quota' })).toHaveAttribute('aria-valuetext', /^1 of 100 claims used · 99 available/);

    // As an editor of the invited project the member can write there.
    await createNetwork(member, PROJECT, `e2e-ten-${stamp}`);

    // The owner makes them a viewer; their next write is refused.
    await owner.goto(`/projects/${PROJECT}/members`);
    await owner.getByLabel(`Role of ${email}`).selectOption('viewer');
    await owner
      .getByRole('dialog', { name: `Make ${email} a viewer?` })
      .getByRole('button', { name: 'Change role' })
      .click();
    await expect(owner.getByLabel(`Role of ${email}`)).toHaveValue('viewer');
    // The console no longer offers the viewer a create form, and the write itself is refused.
    await member.goto(`/projects/${PROJECT}/networks`);
    await expect(member.getByRole('button', { name: 'Create network' })).toHaveCount(0);
    const refused = await member.request.post('/api/trpc/ipam.networks.create', {
      headers: { 'x-meridian-csrf': '1', 'content-type': 'application/json' },
      data: { json: { project: PROJECT, name: `e2e-ten2-${stamp}`, cidrs: [{ cidr: '10.250.0.0/24' }] } },
    });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('editor role');
  });
});

test('a user token made on the Account page creates a project over REST (201); revoked, it is refused (401)', async ({ page }) => {
  const stamp = Date.now().toString(36);
  await signIn(page, 'tenant@example.com');
  await page.goto('/account/tokens');
  // What the token may do follows the user's roles: the demo tenant owns "acme".
  await expect(page.getByTestId('user-token-rights')).toContainText('acme');
  await page.getByLabel('Name').fill(`e2e-laptop-${stamp}`);
  await page.getByRole('button', { name: 'Create user token' }).click();
  const shown = page.getByTestId('new-token');
  await expect(shown).toContainText('shown only once');
  const secret = (await shown.locator('code').textContent())!.trim();
  expect(secret).toMatch(/^mrd_/);
  const row = page.getByRole('table', { name: 'User tokens' }).getByRole('row', { name: new RegExp(`e2e-laptop-${stamp}`) });
  await expect(row).toBeVisible();

  const create = (slug: string) =>
    page.request.post('/api/v1/projects', {
      headers: { authorization: `Bearer ${secret}` },
      data: { metadata: { name: slug, organization: 'acme' }, spec: { displayName: 'Made with a user token' } },
    });
  const made = await create(`e2e-ut-${stamp}`);
  expect(made.status()).toBe(201);
  expect(await made.json()).toMatchObject({ kind: 'Project', metadata: { name: `e2e-ut-${stamp}`, organization: 'acme' } });

  // Revoking asks first; then the token stops at once.
  await row.getByRole('button', { name: `Revoke e2e-laptop-${stamp}` }).click();
  await page
    .getByRole('dialog', { name: `Revoke e2e-laptop-${stamp}?` })
    .getByRole('button', { name: 'Revoke' })
    .click();
  await expect(row).toContainText('Revoked');
  expect((await create(`e2e-ut2-${stamp}`)).status()).toBe(401);
  // After a reload the secret is not shown again.
  await page.reload();
  await expect(page.getByTestId('new-token')).toHaveCount(0);
});

test('an owner renames a project on Settings, sees what deleting it will release, and deletes it', async ({ page }) => {
  test.setTimeout(120_000);
  const stamp = Date.now().toString(36);
  const slug = `e2e-set-${stamp}`;
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/new?organization=acme');
  await page.getByLabel('Name').fill('Settings test');
  await page.getByLabel('Slug').fill(slug);
  await page.getByRole('button', { name: 'Create project' }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${slug}$`));
  await createNetwork(page, slug, 'vpc');

  await page.goto(`/projects/${slug}/settings`);
  // A blank name is refused under its field; nothing changes.
  await page.getByLabel('Display name').fill('   ');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('project-name-error')).toBeVisible();
  await expect(page.getByTestId('project-display-name')).toHaveText('Settings test');
  await page.getByLabel('Display name').fill('Settings test, renamed');
  await page.getByLabel('Description (optional)').fill('Renamed in the console');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('project-display-name')).toHaveText('Settings test, renamed');
  await expect(page.getByTestId('project-description')).toHaveText('Renamed in the console');

  // What deleting releases: the network and the quota grant the project was born with.
  const released = page.getByTestId('to-be-released').first();
  await expect(released).toContainText('1 network');
  await expect(released).toContainText('1 grant');
  await page.getByLabel(`Type ${slug} to confirm`).fill(slug);
  await page.getByRole('button', { name: 'Delete project' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText(`Delete project ${slug}?`);
  await expect(dialog.getByTestId('to-be-released')).toContainText('1 network');
  await dialog.getByRole('button', { name: 'Delete project' }).click();
  // The worker releases everything and the project is gone (the page follows it: deleting, then not found).
  await expect(dialog).toBeHidden();
  await expect
    .poll(async () => (await page.request.get(`/api/trpc/projects.get?input=${encodeURIComponent(JSON.stringify({ json: { project: slug } }))}`)).status(), {
      timeout: 60_000,
    })
    .toBe(404);
});
