import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * The QA console drives the real simulator that `npm start` supervises for the e2e server
 * (playwright.config.ts: SIMULATOR_PORT 4190, the local provider CA and workload certificates made
 * into the run's data directory). Operations are submitted straight to the simulator's runtime API
 * over mutual TLS with the worker's certificate, as the control plane would — with node:https,
 * because Node's fetch refuses port 4190 ("bad port") before connecting.
 */
const simulatorUrl = `https://127.0.0.1:${process.env.E2E_SIMULATOR_PORT ?? '4190'}`;

/** The worker's workload certificate and the provider CA that `npm start` wrote under DATA_DIR/provider-pki. */
function workerTls(): { ca: string; cert: string; key: string } {
  const dataDir = process.env.E2E_DATA_DIR;
  if (!dataDir) throw new Error('E2E_DATA_DIR is not set (playwright.config.ts sets it for the workers)');
  const file = (name: string) => readFileSync(path.join(dataDir, 'provider-pki', name), 'utf8');
  return { ca: file('ca.crt'), cert: file('worker.crt'), key: file('worker.key') };
}

const assetId = 'dev-e2e-1';

/** The epoch a new binding of the asset must use: 1 on a fresh simulator, one past the current epoch on a re-run. */
/** One runtime API call; rejects when the connection closes without a complete response (a lost response). */
function call(method: 'GET' | 'POST', pathname: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${simulatorUrl}${pathname}`,
      {
        method,
        ...workerTls(),
        headers: payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {},
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.complete
            ? resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') })
            : reject(new Error('incomplete response')),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The epoch a new binding of the asset must use: 1 on a fresh simulator, one past the current epoch on a re-run. */
async function nextEpoch(): Promise<number> {
  const res = await call('GET', `/v1/assets/${assetId}`);
  if (res.status === 404) return 1;
  expect(res.status).toBe(200);
  return (res.json as { epoch: number }).epoch + 1;
}

function installRequest(epoch: number) {
  return {
    kind: 'install' as const,
    id: `e2e-install-${Date.now()}-${randomBytes(3).toString('hex')}`,
    assetId,
    bindingId: randomUUID(),
    epoch,
    fencingToken: 1,
    imageDigest: `sha256:${randomBytes(32).toString('hex')}`,
  };
}

const submit = (body: unknown) => call('POST', '/v1/operations', body);

const loseSwitch = (page: Page) => page.getByRole('switch', { name: 'Lose next responses' });
const loseRow = (page: Page) => page.getByRole('group', { name: 'Lose next responses' });

test('QA loses the next response, sees it consumed in the live log, and switches the fault off', async ({ page }) => {
  await signIn(page, 'qa@example.com');
  await page.goto('/qa/simulator');
  await expect(page.getByTestId('simulator-status')).toContainText('reachable');
  await expect(page.getByTestId('log-live')).toHaveText('live');

  // Start from a clean slate (faults are durable across runs of the same data directory).
  if ((await page.getByRole('switch', { checked: true }).count()) > 0) {
    await page.getByRole('button', { name: 'Clear all faults' }).click();
    await expect(page.getByRole('switch', { checked: true })).toHaveCount(0);
  }

  await expect(loseSwitch(page)).toHaveAttribute('aria-checked', 'false');
  await loseRow(page).getByRole('spinbutton', { name: 'Responses to lose' }).fill('1');
  await loseSwitch(page).click();
  await expect(loseSwitch(page)).toHaveAttribute('aria-checked', 'true');
  await expect(loseRow(page).getByTestId('fault-state')).toHaveText('1 remaining');

  // The next operation takes effect, but its response is dropped: the connection closes without an answer.
  const epoch = await nextEpoch();
  const request = installRequest(epoch);
  await expect(submit(request)).rejects.toThrow(/socket hang up|ECONNRESET|incomplete response/);

  // Without a reload: the log shows the operation with the fault that acted on it, and the switch is off again.
  const row = page.getByTestId('log-row').filter({ hasText: request.id }).filter({ hasText: 'submitted' });
  await expect(row).toContainText('response lost');
  await expect(row).toContainText('dev-e2e-1');
  await expect(row).toContainText('install');
  await expect(row).toContainText('Succeeded');
  await expect(loseSwitch(page)).toHaveAttribute('aria-checked', 'false');
  await expect(loseRow(page).getByTestId('fault-state')).toHaveText('Off');

  // The effect was committed: replaying the identical request returns the retained record, and the asset shows the image.
  const replay = await submit(request);
  expect(replay.status).toBe(200);
  expect((replay.json as { state: string }).state).toBe('Succeeded');
  const asset = page.getByTestId('asset-row').filter({ hasText: 'dev-e2e-1' });
  await expect(asset).toContainText(request.imageDigest.slice(0, 19));
  await expect(asset.getByRole('cell').nth(1)).toHaveText(String(epoch));

  // Switched on again, then off explicitly with "Clear all faults".
  await loseRow(page).getByRole('spinbutton', { name: 'Responses to lose' }).fill('2');
  await loseSwitch(page).click();
  await expect(loseRow(page).getByTestId('fault-state')).toHaveText('2 remaining');
  await page.getByRole('button', { name: 'Clear all faults' }).click();
  await expect(loseSwitch(page)).toHaveAttribute('aria-checked', 'false');
  await expect(loseRow(page).getByTestId('fault-state')).toHaveText('Off');
  await expect(page.getByTestId('log-row').first()).toContainText('fault cleared');

  // Nothing is lost any more: the next operation is answered.
  const answered = await submit({ ...installRequest(epoch), bindingId: request.bindingId, fencingToken: 2 });
  expect(answered.status).toBe(201);

  // Every change is in the audit log, attributed to the QA user.
  const admin = await page.context().browser()!.newContext();
  try {
    const adminPage = await admin.newPage();
    await signIn(adminPage, 'admin@example.com');
    await adminPage.goto('/operator/audit');
    const filters = adminPage.getByRole('form', { name: 'Filter events' });
    // "simulator." is the group of every simulator action.
    await filters.getByLabel('Action').selectOption('simulator.');
    await filters.getByRole('button', { name: 'Filter' }).click();
    // Newest first: the clear, then the two switch-ons of this test.
    const rows = adminPage.getByRole('row');
    await expect(rows.nth(1)).toContainText('simulator.faults.clear');
    await expect(rows.nth(2)).toContainText('simulator.faults.set');
    await expect(rows.nth(2)).toContainText('lose the next 2 responses');
    await expect(rows.nth(3)).toContainText('simulator.faults.set');
    await expect(rows.nth(3)).toContainText('lose the next response');
    for (const i of [1, 2, 3]) await expect(rows.nth(i)).toContainText('qa@example.com');
  } finally {
    await admin.close();
  }
});

test('a tenant opening the simulator page or its log stream gets not-found', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  const response = await page.goto('/qa/simulator');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('switch')).toHaveCount(0);
  const stream = await page.request.get('/api/qa/simulator/log');
  expect(stream.status()).toBe(404);
});

test('a cleanup fault for an asset the simulator does not have is flagged; an idle fault says Off once', async ({ page }) => {
  await signIn(page, 'qa@example.com');
  await page.goto('/qa/simulator');
  await expect(page.getByTestId('simulator-status')).toContainText('reachable');
  const cleanup = page.getByRole('group', { name: 'Cleanup fails for assets' });
  await expect(cleanup.getByTestId('fault-state')).toHaveText('Off');
  // "Off" is said once per idle fault: in its state line, not again beside its switch.
  await expect(cleanup.getByText('Off', { exact: true })).toHaveCount(1);
  const asset = cleanup.getByLabel('Asset', { exact: true });
  // The placeholder is one of the simulator's assets (once they are loaded), not a made-up name.
  await expect(page.getByRole('table', { name: 'Assets' })).toBeVisible();
  await expect(asset).not.toHaveAttribute('placeholder', 'asset id');
  const placeholder = await asset.getAttribute('placeholder');
  await expect(page.getByRole('table', { name: 'Assets' })).toContainText(placeholder!);
  await asset.fill('dev-no-such-asset');
  await expect(cleanup.getByTestId('cleanup-asset-unknown')).toContainText('The simulator has no asset dev-no-such-asset');
  await expect(asset).toHaveAttribute('aria-invalid', 'true');
  await asset.fill(placeholder!);
  await expect(cleanup.getByTestId('cleanup-asset-unknown')).toHaveCount(0);
  await expect(cleanup.getByRole('button', { name: 'Add', exact: true })).toBeEnabled();
});
