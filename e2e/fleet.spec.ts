import { expect, test, type Browser, type Page } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * The fleet console end to end, against the stack `npm start` runs for the e2e server (real
 * worker, real simulator, the seeded demo fleet: ams1/fra1 usable, lon1 Unavailable; a1.medium
 * needs operator approval). Nothing is reloaded by hand: the pages follow the machine live.
 */
const PROJECT = 'acme-prod';
const stamp = Date.now().toString(36);
const approved = `e2e-arm-${stamp}`;
const rejected = `e2e-rej-${stamp}`;

async function pageAs(browser: Browser, email: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, email);
  return page;
}

/** The machines page with the request form open. */
async function openRequestForm(page: Page) {
  await page.goto(`/projects/${PROJECT}/machines`);
  const form = page.getByRole('form', { name: 'Request a machine' });
  if (!(await form.isVisible())) await page.getByRole('button', { name: 'Request a machine' }).click();
  await expect(form).toBeVisible();
  return form;
}

async function requestArmMachine(page: Page, name: string) {
  const form = await openRequestForm(page);
  await form.getByLabel('Name', { exact: true }).fill(name);
  await form.getByLabel('Class', { exact: true }).selectOption('a1.medium');
  await form.getByLabel('Profile', { exact: true }).selectOption('ubuntu-24.04');
  await form.getByLabel('Location', { exact: true }).selectOption('ams1');
  await expect(form.getByTestId('availability-summary')).toContainText(/a1\.medium in ams1: \d+ free/);
  await expect(form.getByTestId('availability-summary')).toContainText('needs an operator');
  await form.getByRole('button', { name: 'Request machine' }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${PROJECT}/machines/${name}$`));
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

const phase = (page: Page) => page.getByTestId('phase').first();

test('the request form shows live availability per location and class, and lon1 as unusable with its reason', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  const form = await openRequestForm(page);
  const lon1 = form.getByTestId('availability-lon1');
  await expect(lon1).toContainText('Unavailable');
  await expect(lon1).toContainText('power maintenance');
  await expect(form.getByRole('option', { name: /^lon1 / })).toBeDisabled();
  await expect(form.getByRole('option', { name: /^lon1 / })).toHaveText(/unavailable: .*power maintenance/);
  // Usable cells select their location and class.
  await form.getByRole('button', { name: /^c1\.large in fra1: \d+ of 3 free$/ }).click();
  await expect(form.getByLabel('Class', { exact: true })).toHaveValue('c1.large');
  await expect(form.getByLabel('Location', { exact: true })).toHaveValue('fra1');
  await expect(form.getByTestId('availability-summary')).toContainText('c1.large in fra1');
  // A disabled "Request machine" says why, and the hint goes once the name is given.
  const submit = form.getByRole('button', { name: 'Request machine' });
  await expect(submit).toBeDisabled();
  await expect(form.getByTestId('request-machine-why')).toHaveText('Give the machine a name to request it.');
  await expect(submit).toHaveAccessibleDescription('Give the machine a name to request it.');
  await form.getByLabel('Name', { exact: true }).fill('named');
  await expect(form.getByTestId('request-machine-why')).toHaveCount(0);
  await expect(submit).toBeEnabled();
});

test('request → operator approval → Ready; a failed cleanup quarantines the device for the operator', async ({ browser }) => {
  // Two requests through approval, install, release and a failed cleanup: minutes on a loaded machine.
  test.setTimeout(300_000);
  const tenant = await pageAs(browser, 'tenant@example.com');
  const operator = await pageAs(browser, 'operator@example.com');
  const qa = await pageAs(browser, 'qa@example.com');

  // The operator has the queue open before the requests arrive: they appear without a reload,
  // well inside the pages' 60 s safety refetch — the change notifications drive it.
  await operator.goto('/operator/queue');
  await expect(operator.getByTestId('live-indicator')).toHaveAttribute('data-state', 'live');

  // Two requests for the class that needs approval: both wait for an operator.
  await requestArmMachine(tenant, rejected);
  await expect(phase(tenant)).toHaveAttribute('data-phase', 'AwaitingApproval');
  await requestArmMachine(tenant, approved);
  await expect(phase(tenant)).toHaveAttribute('data-phase', 'AwaitingApproval');
  await expect(tenant.getByTestId('phase-reason')).toContainText('Waiting for an operator to approve the request.');
  await expect(tenant.getByTestId('live-indicator')).toHaveAttribute('data-state', 'live');

  // The operator's queue shows both with the matching free capacity; one is rejected (a reason is required), one approved in bulk.
  const rejectRow = operator.getByTestId('queue-row').filter({ hasText: rejected });
  const approveRow = operator.getByTestId('queue-row').filter({ hasText: approved });
  await expect(approveRow).toContainText(PROJECT);
  await expect(approveRow).toContainText(/\d+ free/);
  await rejectRow.getByRole('button', { name: `Reject ${rejected}` }).click();
  const dialog = operator.getByRole('dialog', { name: `Reject ${rejected}?` });
  await expect(dialog.getByRole('button', { name: 'Reject request' })).toBeDisabled();
  await dialog.getByLabel('Reason').fill('e2e: arm64 capacity is reserved');
  await dialog.getByRole('button', { name: 'Reject request' }).click();
  await expect(dialog).toBeHidden();
  await expect(rejectRow).toHaveCount(0);
  await approveRow.getByRole('checkbox', { name: `Select ${approved}` }).check();
  await operator.getByRole('button', { name: 'Approve selected (1)' }).click();
  await expect(operator.getByTestId('queue-outcome')).toContainText(`Approved ${approved}`);
  await expect(approveRow).toHaveCount(0);

  // Without a reload, the tenant's page follows the machine through allocation and installation to
  // Ready — inside the 60 s safety refetch, so by the live notifications.
  await expect(phase(tenant)).toHaveAttribute('data-phase', 'Ready', { timeout: 30_000 });
  const device = (await tenant.getByTestId('device-ref').textContent())!.trim();
  expect(device).toMatch(/^dev-ams1-a1medium-\d+$/);
  await expect(tenant.getByTestId('allocation')).toContainText('Binding id');
  const timeline = tenant.getByRole('list', { name: 'Timeline' });
  // The timeline tells what happened: the installation sent to the provider, then its success.
  // (queued, then sent when the provider answers "in progress"; a provider that finishes at once answers with the outcome)
  await expect(
    timeline
      .getByTestId('timeline-entry')
      .filter({ hasText: /Installation (queued for|sent to) the provider/ })
      .first(),
  ).toBeVisible();
  await expect(timeline.getByTestId('timeline-entry').filter({ hasText: 'Installation succeeded' })).toContainText('Succeeded');
  await expect(timeline.getByTestId('timeline-entry').filter({ hasText: /Installing → Ready/ })).toHaveCount(1);
  await expect(timeline).toContainText(`approved by operator@example.com`);

  // The rejected request ended with the operator's reason in its timeline.
  await tenant.goto(`/projects/${PROJECT}/machines/${rejected}`);
  await expect(phase(tenant)).toHaveAttribute('data-phase', 'Released', { timeout: 30_000 });
  await expect(tenant.getByRole('list', { name: 'Timeline' })).toContainText('e2e: arm64 capacity is reserved');
  // Its lifecycle shows the steps it took, never the ones it did not (no allocation, no installation).
  const lifecycle = tenant.getByRole('list', { name: 'Lifecycle' });
  await expect(lifecycle).toContainText('Awaiting approval');
  await expect(lifecycle).toContainText('Released');
  for (const never of ['Allocating', 'Bound', 'Installing', 'Ready', 'Releasing']) await expect(lifecycle).not.toContainText(never);
  await expect(tenant.getByRole('list', { name: 'Timeline' }).getByTestId('timeline-entry').filter({ hasText: 'Installation' })).toHaveCount(0);

  // QA makes the provider fail the cleanup of exactly that device.
  await qa.goto('/qa/simulator');
  await expect(qa.getByTestId('simulator-status')).toContainText('reachable');
  const cleanupFault = qa.getByRole('group', { name: 'Cleanup fails for assets' });
  await cleanupFault.getByLabel('Asset', { exact: true }).fill(device);
  await cleanupFault.getByRole('button', { name: 'Add', exact: true }).click();
  await expect(cleanupFault.getByTestId('fault-state')).toContainText(device);

  // The tenant releases the machine (with confirmation); the cleanup fails, so the machine is released and the device quarantined.
  await tenant.goto(`/projects/${PROJECT}/machines/${approved}`);
  await tenant.getByRole('button', { name: 'Release' }).click();
  const confirm = tenant.getByRole('dialog', { name: `Release machine ${approved}?` });
  await expect(confirm).toContainText(device);
  await confirm.getByRole('button', { name: 'Release' }).click();
  await expect(confirm).toBeHidden();
  await expect(phase(tenant)).toHaveAttribute('data-phase', 'Released', { timeout: 60_000 });
  await expect(tenant.getByTestId('phase-reason')).toContainText('quarantined');
  // The tenant reads plain sentences; the provider's fault text stays under the entry's Details.
  await expect(tenant.getByTestId('phase-reason')).toContainText('nothing more is needed from you');
  const cleanupEntry = tenant.getByRole('list', { name: 'Timeline' }).getByTestId('timeline-entry').filter({ hasText: 'Clean-up failed' });
  await expect(cleanupEntry).toContainText('Failed');
  await expect(cleanupEntry).toContainText('Wiping the machine failed at the provider: an operator will check the hardware.');
  for (const jargon of ['cleanupFailAssets', 'stays open', 'resolving by lookup', 'fencing token', 'epoch']) {
    await expect(tenant.getByTestId('phase-reason')).not.toContainText(jargon, { useInnerText: true });
    await expect(tenant.getByRole('list', { name: 'Timeline' })).not.toContainText(jargon, { useInnerText: true });
  }
  await cleanupEntry.getByText('Details').click();
  await expect(cleanupEntry.getByText(/cleanupFailAssets fault.*stays open/)).toBeVisible();

  // Released, the machine leaves the tenant's default list; the Released filter shows it, and its name can be requested again.
  await tenant.goto(`/projects/${PROJECT}/machines`);
  const machineRows = tenant.getByTestId('machine-row');
  await expect(tenant.getByLabel('Phase')).toHaveValue('');
  await expect(machineRows.filter({ hasText: approved })).toHaveCount(0);
  await tenant.getByLabel('Phase').selectOption('Released');
  await expect(machineRows.filter({ hasText: approved })).toHaveCount(1);
  await requestArmMachine(tenant, approved);
  await expect(phase(tenant)).toHaveAttribute('data-phase', 'AwaitingApproval');
  await tenant.getByRole('button', { name: 'Withdraw request' }).click();
  await tenant
    .getByRole('dialog', { name: `Release machine ${approved}?` })
    .getByRole('button', { name: 'Withdraw request' })
    .click();
  await expect(phase(tenant)).toHaveAttribute('data-phase', 'Released', { timeout: 30_000 });
  await tenant.goto(`/projects/${PROJECT}/machines`);
  await tenant.getByLabel('Phase').selectOption('Released');
  await expect(machineRows.filter({ hasText: approved })).toHaveCount(2);
  // Each released machine keeps its own page and timeline: the first one (the older, listed last) still shows its failed cleanup.
  await machineRows.filter({ hasText: approved }).last().getByRole('link', { name: approved }).click();
  await expect(tenant).toHaveURL(/\?uid=/);
  await expect(tenant.getByRole('list', { name: 'Timeline' }).getByTestId('timeline-entry').filter({ hasText: 'Clean-up failed' })).toContainText('Failed');

  // The operator finds the device quarantined, with the cleanup failure as the reason, and the failed cleanup among the operations needing attention.
  await operator.goto('/operator/fleet');
  await operator.getByLabel('Capacity state').selectOption('Quarantined');
  const capacityRow = operator.getByTestId('capacity-row').filter({ hasText: device });
  await expect(capacityRow).toContainText('Quarantined');
  await expect(capacityRow).toContainText('cleanup failed');
  // A quarantined device is never called Healthy: its health reads Not verified, in amber.
  await expect(capacityRow.locator('[data-status-tone]').filter({ hasText: /^(Healthy|Not verified)$/ })).toHaveText('Not verified');
  await expect(capacityRow.locator('[data-status-tone]').filter({ hasText: 'Not verified' })).toHaveAttribute('data-status-tone', 'amber');
  const operationRows = operator.getByTestId('operation-row').filter({ hasText: device });
  const releaseCleanup = operationRows.filter({ hasText: 'cleanup-' });
  await expect(releaseCleanup).toContainText('Failed');

  // Returning it to the pool re-runs the wipe through the provider: with the fault still on, it fails and the device stays quarantined.
  await capacityRow.getByRole('button', { name: `Return to pool ${device}` }).click();
  const back = operator.getByRole('dialog', { name: `Return to pool ${device}?` });
  await expect(back).toContainText('verified');
  await back.getByRole('textbox', { name: /^Reason/ }).fill('e2e: wipe again');
  await back.getByRole('button', { name: 'Return to pool' }).click();
  await expect(back).toBeHidden();
  await expect(capacityRow).toContainText('returned to the pool, but the cleanup failed', { timeout: 30_000 });
  await expect(operationRows.filter({ hasText: 'return-' })).toContainText('Failed');

  // The release's failed cleanup is acknowledged with a note (required) and leaves the list.
  await releaseCleanup.getByRole('button', { name: /^Acknowledge / }).click();
  const ack = operator.getByRole('dialog', { name: `Acknowledge cleanup on ${device}?` });
  await expect(ack.getByRole('button', { name: 'Acknowledge' })).toBeDisabled();
  await ack.getByLabel('Note').fill('e2e: known bad disk, ticket OPS-1');
  await ack.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(ack).toBeHidden();
  await expect(releaseCleanup).toHaveCount(0);

  // A forced return skips the provider: a reason is required, and the device is back at once.
  await capacityRow.getByRole('button', { name: `Return to pool ${device}` }).click();
  await back.getByRole('checkbox', { name: /^Force/ }).check();
  await expect(back.getByRole('button', { name: 'Force return to pool' })).toBeDisabled();
  await back.getByRole('textbox', { name: /^Reason/ }).fill('e2e: disk replaced on site');
  await back.getByRole('button', { name: 'Force return to pool' }).click();
  await expect(back).toBeHidden();
  await expect(capacityRow).toHaveCount(0);
  await operator.goto('/operator/audit');
  await expect(operator.getByText('e2e: disk replaced on site').first()).toBeVisible();
  await expect(operator.getByText('e2e: known bad disk, ticket OPS-1').first()).toBeVisible();

  // Clean up for later runs: the fault off.
  await cleanupFault.getByRole('button', { name: `Stop failing cleanups of ${device}` }).click();
  await expect(cleanupFault.getByTestId('fault-state')).toHaveText('Off');
});

test('a viewer sees machines but cannot request or release', async ({ page }) => {
  await signIn(page, 'viewer@example.com');
  await page.goto('/projects/acme-dev/machines');
  await expect(page.getByRole('heading', { level: 1, name: 'Machines' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Request a machine' })).toHaveCount(0);
  await expect(page.getByRole('form', { name: 'Request a machine' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Release' })).toHaveCount(0);
});
