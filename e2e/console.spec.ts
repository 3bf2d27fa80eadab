import { execFileSync } from 'node:child_process';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { demoPassword, signIn } from './fixtures';

/**
 * The console's daily-work details, each as its role meets it: role-aware token actions, the
 * operator's audit log (filters, links, CSV), the number formatter, forms that reset and explain,
 * the skip link and the favicon.
 */
const stamp = Date.now().toString(36);
// Several roles' pages per test, on a shared 2-core machine.
test.describe.configure({ timeout: 120_000 });

async function pageAs(browser: Browser, email: string, password = demoPassword): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, email, password);
  return page;
}

/** The admin CLI against the e2e server's embedded database (playwright.config.ts). */
function cli(...args: string[]): string {
  return execFileSync(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', ...args], {
    env: { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR, EMBEDDED_PG_PORT: process.env.E2E_PG_PORT ?? '54339', DATABASE_URL: '' },
    encoding: 'utf8',
  });
}

test('a viewer is offered no token Create or Revoke, and is told who can', async ({ browser }) => {
  const owner = await pageAs(browser, 'tenant@example.com');
  await owner.goto('/projects/acme-dev/tokens');
  await owner.getByLabel('Name').fill(`seen-by-viewer-${stamp}`);
  await owner.getByRole('button', { name: 'Create token' }).click();
  await expect(owner.getByTestId('new-token')).toBeVisible();

  const viewer = await pageAs(browser, 'viewer@example.com');
  await viewer.goto('/projects/acme-dev/tokens');
  await expect(viewer.getByRole('table', { name: 'Tokens' }).getByRole('row', { name: new RegExp(`seen-by-viewer-${stamp}`) })).toBeVisible();
  await expect(viewer.getByTestId('tokens-owner-only')).toHaveText('Only an owner of this project can create or revoke tokens.');
  await expect(viewer.getByRole('button', { name: 'Create token' })).toHaveCount(0);
  await expect(viewer.getByRole('button', { name: /^Revoke/ })).toHaveCount(0);
});

test('the token form returns to its defaults after a create; a refused revoke is shown next to its button', async ({ browser }) => {
  const email = `owner-${stamp}@example.com`;
  const password = `pw-${stamp}-long-enough`;
  cli('user', 'create', '--email', email, '--name', 'Owner for a while', '--password', password, '--project', 'acme-dev', '--project-role', 'owner');
  const page = await pageAs(browser, email, password);
  await page.goto('/projects/acme-dev/tokens');
  await page.getByLabel('Name').fill(`short-lived-${stamp}`);
  await page.getByLabel('Access').selectOption('viewer');
  await page.getByRole('button', { name: 'Create token' }).click();
  await expect(page.getByTestId('new-token')).toContainText(`short-lived-${stamp}`);
  await expect(page.getByLabel('Name')).toHaveValue('');
  await expect(page.getByLabel('Access')).toHaveValue('editor');

  // The owner loses the project while the page is open: the Revoke is refused, and says so in the row.
  cli('member', 'remove', '--email', email, '--project', 'acme-dev', '--force');
  const row = page.getByRole('row', { name: new RegExp(`short-lived-${stamp}`) });
  await row.getByRole('button', { name: `Revoke short-lived-${stamp}` }).click();
  await page
    .getByRole('dialog', { name: `Revoke short-lived-${stamp}?` })
    .getByRole('button', { name: 'Revoke' })
    .click();
  await expect(row.getByTestId('revoke-error')).toBeVisible();
  await expect(row.getByTestId('revoke-error')).not.toBeEmpty();
});

test('an operator finds a release in the audit log by project, kind and action, opens the machine and exports the filtered set', async ({ browser }) => {
  test.setTimeout(120_000);
  const machine = `audit-m-${stamp}`;
  const tenant = await pageAs(browser, 'tenant@example.com');
  await tenant.goto('/projects/acme-prod/machines');
  const form = tenant.getByRole('form', { name: 'Request a machine' });
  if (!(await form.isVisible())) await tenant.getByRole('button', { name: 'Request a machine' }).click();
  await form.getByLabel('Name', { exact: true }).fill(machine);
  await form.getByLabel('Class', { exact: true }).selectOption('c1.small');
  await form.getByLabel('Profile', { exact: true }).selectOption('ubuntu-24.04');
  await form.getByLabel('Location', { exact: true }).selectOption('ams1');
  await form.getByRole('button', { name: 'Request machine' }).click();
  await expect(tenant).toHaveURL(new RegExp(`/machines/${machine}$`));
  await expect(tenant.getByTestId('phase').first()).toHaveAttribute('data-phase', 'Ready', { timeout: 60_000 });
  await tenant.getByRole('button', { name: 'Release' }).click();
  await tenant
    .getByRole('dialog', { name: `Release machine ${machine}?` })
    .getByRole('button', { name: 'Release' })
    .click();
  await expect(tenant.getByRole('list', { name: 'Timeline' })).toContainText('Release requested');

  const operator = await pageAs(browser, 'operator@example.com');
  await operator.goto('/operator/audit');
  const filters = operator.getByRole('form', { name: 'Filter events' });
  // Each select sits in its label, so a label's text includes its options ("project.create" under
  // Action): match the label's start, or "Project" would also find the kind and action selects.
  await filters.getByLabel(/^Project/).selectOption({ label: 'acme-prod' });
  await filters.getByLabel(/^Object kind/).selectOption({ label: 'Machine' });
  await filters.getByLabel(/^Action/).selectOption('machine.release.requested');
  await filters.getByRole('button', { name: 'Filter' }).click();
  const table = operator.getByRole('table', { name: 'Audit events' });
  const row = table.getByRole('row', { name: new RegExp(machine) });
  await expect(row).toContainText('acme-prod');
  await expect(row).toContainText('tenant@example.com');
  await expect(row).toContainText('machine.release.requested');
  // Every row shown matches the filters.
  const actions = await table.locator('tbody tr td:nth-child(5)').allTextContents();
  expect(actions.length).toBeGreaterThan(0);
  expect(new Set(actions)).toEqual(new Set(['machine.release.requested']));

  // The CSV is the filtered set.
  const href = await operator.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
  const csv = await operator.request.get(href!);
  expect(csv.status()).toBe(200);
  expect(csv.headers()['content-type']).toContain('text/csv');
  const lines = (await csv.text()).trimEnd().split('\r\n');
  expect(lines[0]).toBe('time,project,actor_type,actor,action,object_type,object_id,object_name,reason');
  expect(lines.some((l) => l.includes(`,${machine},`))).toBe(true);
  expect(lines.slice(1).every((l) => l.includes(',acme-prod,') && l.includes(',machine.release.requested,machine,'))).toBe(true);

  // A time range in the future matches nothing.
  await filters.getByLabel('From').fill('2099-01-01T00:00');
  await filters.getByRole('button', { name: 'Filter' }).click();
  await expect(operator.getByTestId('empty-state')).toContainText('No events match');
  await filters.getByLabel('From').fill('');
  await filters.getByRole('button', { name: 'Filter' }).click();

  // The event links to where an operator finds such objects (the fleet), and that page opens.
  await row.getByRole('link', { name: machine }).click();
  await expect(operator).toHaveURL(/\/operator\/fleet$/);
  await expect(operator.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(operator.getByTestId('inventory-ams1')).toBeVisible();

  // In the project's own timeline the event links to the machine's page.
  await tenant.goto('/projects/acme-prod/activity');
  await tenant
    .getByRole('table', { name: 'Audit events' })
    .getByRole('row', { name: new RegExp(machine) })
    .first()
    .getByRole('link', { name: machine })
    .click();
  await expect(tenant).toHaveURL(new RegExp(`/projects/acme-prod/machines/${machine}$`));
  await expect(tenant.getByRole('heading', { level: 1, name: machine })).toBeVisible();

  // A tenant cannot export the whole log.
  expect((await tenant.request.get('/api/audit/export')).status()).toBe(403);
});

test('a quota increase request says it was sent, the form resets, and a too-large amount is explained', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  // acme-prod: e2e/quota.spec.ts asks for IP claims in acme-dev, and one request per type may be pending.
  await page.goto('/projects/acme-prod/quota');
  const form = page.getByRole('form', { name: 'Request an increase' });
  // Resource types in words, the API name in the value.
  await expect(form.getByLabel('Resource type').getByRole('option', { name: 'IP claims' })).toHaveCount(1);
  await form.getByLabel('Amount').fill('99999999999999999999');
  await form.getByLabel('Reason').fill(`e2e ${stamp}: a large ask`);
  await form.getByRole('button', { name: 'Request increase' }).click();
  await expect(page.getByTestId('increase-amount-error')).toHaveText('Amount must be at most 1,000,000,000.');
  // Changing the value clears the old error.
  await form.getByLabel('Amount').fill('2');
  await expect(page.getByTestId('increase-amount-error')).toHaveCount(0);
  await form.getByLabel('Resource type').selectOption({ label: 'IP claims' });
  await form.getByRole('button', { name: 'Request increase' }).click();
  await expect(page.getByTestId('increase-sent')).toHaveText('Your request for 2 more IP claims was sent: an operator will approve or reject it.');
  await expect(form.getByLabel('Amount')).toHaveValue('10');
  await expect(form.getByLabel('Reason')).toHaveValue('');
});

test('a claim form returns to Delete after a Retain claim; the skip link jumps to the content; the favicon is served', async ({ page }) => {
  const errors: string[] = [];
  page.on('response', (r) => r.status() === 404 && /icon/.test(r.url()) && errors.push(r.url()));
  await signIn(page, 'tenant@example.com');
  const network = `reset-vpc-${stamp}`;
  await page.goto('/projects/acme-dev/networks');
  await page.getByLabel('Name', { exact: true }).fill(network);
  await page.getByLabel('Root CIDR', { exact: true }).fill('192.0.2.0/24');
  await page.getByRole('button', { name: 'Create network' }).click();
  await expect(page).toHaveURL(new RegExp(`/networks/${network}$`));
  await page.getByLabel('Claim name').fill(`kept-${stamp}`);
  await page.getByLabel('Prefix length', { exact: true }).fill('28');
  await page.getByLabel('Reclaim policy').selectOption('Retain');
  await page.getByRole('button', { name: 'Create claim' }).click();
  await expect(page.getByRole('table', { name: 'Claims' }).getByRole('row', { name: new RegExp(`kept-${stamp}`) })).toBeVisible();
  await expect(page.getByLabel('Reclaim policy')).toHaveValue('Delete');
  await expect(page.getByLabel('Claim name')).toHaveValue('');
  await expect(page.getByLabel('Prefix length', { exact: true })).toHaveValue('');

  // Skip link: the first Tab stop of a fresh page, and it moves focus to the main content.
  await page.reload();
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press('Enter');
  await expect(page.locator('main#main')).toBeFocused();

  const icon = await page.locator('link[rel="icon"]').first().getAttribute('href');
  expect(icon).toBeTruthy();
  expect((await page.request.get(icon!)).status()).toBe(200);
  expect(errors).toEqual([]);
});

test('a location marked Unavailable shows none of its machines as available', async ({ page }) => {
  await signIn(page, 'operator@example.com');
  await page.goto('/operator/fleet');
  const lon1 = page.getByTestId('inventory-lon1');
  await expect(lon1).toContainText('power maintenance');
  await expect(lon1).toContainText(/0 of \d+ available \(location unavailable\)/);
  const cells = (await lon1.getByRole('cell').allTextContents()).filter((text) => text.trim() !== 'none');
  expect(cells.length).toBeGreaterThan(0);
  for (const text of cells) expect(text).toMatch(/^0 of \d+ available \(location unavailable\)/);
});

test('fleet evidence agrees with state: closed locations, bound devices and the Available total', async ({ browser }) => {
  test.setTimeout(120_000);
  const tenant = await (await browser.newContext()).newPage();
  await signIn(tenant, 'tenant@example.com');
  await tenant.goto('/projects/acme-prod/machines');
  const form = tenant.getByRole('form', { name: 'Request a machine' });
  if (!(await form.isVisible())) await tenant.getByRole('button', { name: 'Request a machine' }).click();
  const machine = `evidence-${Date.now().toString(36)}`;
  await form.getByLabel('Name', { exact: true }).fill(machine);
  await form.getByLabel('Class', { exact: true }).selectOption('c1.small');
  await form.getByLabel('Profile', { exact: true }).selectOption('ubuntu-24.04');
  await form.getByLabel('Location', { exact: true }).selectOption('ams1');
  await form.getByRole('button', { name: 'Request machine' }).click();
  await expect(tenant).toHaveURL(new RegExp(`/machines/${machine}$`));
  await expect(tenant.getByTestId('device-ref')).toHaveText(/dev-/, { timeout: 60_000 });
  const device = (await tenant.getByTestId('device-ref').textContent())!.trim();

  const page = await (await browser.newContext()).newPage();
  await signIn(page, 'operator@example.com');
  await page.goto('/operator/fleet');
  // lon1 takes no machines: its idle devices are not counted as Available, and the summary says so.
  await expect(page.getByTestId('closed-available')).toContainText(/\d+ idle in unavailable locations/);
  const capacity = page.getByRole('table', { name: 'Capacity' });
  await page.getByLabel('Capacity location').selectOption('lon1');
  await expect(capacity.getByTestId('capacity-row').first()).toContainText('lon1');
  const lon1 = await capacity.getByTestId('capacity-evidence').allTextContents();
  expect(lon1.length).toBeGreaterThan(0);
  for (const text of lon1) expect(text).toContain('location unavailable: power maintenance');
  // The tenant's device is bound: its evidence says since when, never "available".
  await page.getByLabel('Capacity location').selectOption('');
  await page.getByLabel('Search devices').fill(device);
  const row = capacity.getByTestId('capacity-row').filter({ hasText: device });
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('capacity-evidence')).toHaveText(/^bound since /);
});
