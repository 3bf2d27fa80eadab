import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

/** A webhook receiver on loopback (allowed by WEBHOOK_ALLOWED_CIDRS in playwright.config.ts): records each request with its body. */
async function webhookReceiver() {
  const received: { headers: IncomingMessage['headers']; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close: () => new Promise((r) => server.close(r)) };
}

const PROJECT = 'acme-dev';

/** A REST v1 client for the tenant, with a token created through the console (shown once). */
async function tenantApi(page: Page) {
  await page.goto(`/projects/${PROJECT}/tokens`);
  await page.getByLabel('Name').fill(`e2e-capacity-${Date.now().toString(36)}`);
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = (await page.getByTestId('new-token').locator('code').first().textContent())!.trim();
  const headers = { authorization: `Bearer ${secret}` };
  return {
    get: (path: string) => page.request.get(`/api/v1/projects/${PROJECT}${path}`, { headers }),
    post: (path: string, data: unknown) => page.request.post(`/api/v1/projects/${PROJECT}${path}`, { headers, data }),
  };
}

test('a network filled past 80 % shows its history, forecast, a firing alert delivered to a webhook, its free blocks and its address audit', async ({
  page,
}) => {
  test.setTimeout(300_000);
  await signIn(page, 'tenant@example.com');
  const api = await tenantApi(page);
  const stamp = Date.now().toString(36);

  // A webhook for the project's alerts, registered in the console: its secret is shown once.
  const receiver = await webhookReceiver();
  const hook = `e2e-hook-${stamp}`;
  await page.goto(`/projects/${PROJECT}/webhooks`);
  await page.getByLabel('Name').fill(hook);
  await page.getByLabel('URL').fill(receiver.url);
  await page.getByRole('button', { name: 'Register webhook' }).click();
  const secret = (await page.getByTestId('new-webhook-secret').locator('code').textContent())!.trim();
  expect(secret).toMatch(/^whsec_/);
  await expect(page.getByRole('table', { name: 'Webhooks' })).toContainText(hook);

  const network = `e2e-cap-${stamp}`;
  let created = false;
  for (let i = 0; i < 8 && !created; i++) {
    const cidr = `10.${100 + Math.floor(Math.random() * 150)}.${Math.floor(Math.random() * 256)}.0/26`;
    created = (await api.post('/networks', { metadata: { name: network }, spec: { cidrs: [{ cidr, maxPrefixLength: 32 }] } })).status() === 201;
  }
  expect(created).toBe(true);
  // 32 + 16 + 8 of 64 addresses: 87.5 %, past the default warning threshold.
  for (const [name, prefixLength] of [
    ['a', 27],
    ['b', 28],
    ['c', 29],
  ] as const)
    expect((await api.post('/ipclaims', { metadata: { name: `${network}-${name}` }, spec: { network, prefixLength } })).status()).toBe(201);

  const available = await (await api.get(`/networks/${network}/pools/${network}-v4/available?prefixLength=30&limit=2`)).json();
  expect(available.items).toHaveLength(2);
  expect(available.items[0]).toMatchObject({ prefixLength: 30, size: '4', claimable: true });

  // The worker samples once a minute and evaluates the alerts with each sample.
  await expect
    .poll(async () => (await (await api.get(`/networks/${network}/utilization?from=-10m&step=1m`)).json()).items?.[0]?.points?.length ?? 0, {
      timeout: 150_000,
      intervals: [5_000],
    })
    .toBeGreaterThan(0);

  await page.goto(`/projects/${PROJECT}/networks/${network}`);
  const history = page.getByTestId('utilization-history');
  await expect(history.getByTestId('utilization-chart').first()).toBeVisible();
  await expect(history.getByTestId('forecast').first()).not.toBeEmpty();
  await history.getByRole('button', { name: '7d' }).click();
  await expect(history.getByRole('button', { name: '7d' })).toHaveAttribute('aria-pressed', 'true');
  await expect(history.getByTestId('utilization-chart').first()).toBeVisible();

  const banner = page.getByTestId('capacity-alerts-banner');
  await expect(banner).toBeVisible({ timeout: 70_000 });
  await banner.locator('summary').click();
  await expect(banner.getByRole('list', { name: 'Capacity notifications' })).toContainText(`network ${network} IPv4 at 87.5 % (warning at 80 %)`);
  const alerts = await (await api.get('/capacityalerts?firing=true')).json();
  expect(alerts.items.map((a: { object: string; condition: string }) => `${a.object}:${a.condition}`)).toContain(`${network}:warning`);

  // The alert reached the receiver, signed with the endpoint's secret, and shows in the delivery log.
  await expect.poll(() => receiver.received.some((r) => r.body.includes(network)), { timeout: 60_000 }).toBe(true);
  const delivery = receiver.received.find((r) => r.body.includes(network))!;
  const id = String(delivery.headers['meridian-webhook-id']);
  const ts = String(delivery.headers['meridian-webhook-timestamp']);
  expect(delivery.headers['meridian-webhook-signature']).toBe(`v1=${createHmac('sha256', secret).update(`${id}.${ts}.${delivery.body}`).digest('hex')}`);
  await page.goto(`/projects/${PROJECT}/webhooks`);
  await page
    .getByRole('row', { name: new RegExp(hook) })
    .getByRole('button', { name: 'Deliveries' })
    .click();
  const log = page.getByRole('table', { name: `Deliveries to ${hook}` });
  await expect(log).toContainText('capacity.alert.firing');
  await expect(log).toContainText('Delivered');
  await receiver.close();

  // The address audit: every block with its owner, pools balanced, and the CSV download.
  await page.goto(`/projects/${PROJECT}/networks/${network}`);
  await page.getByRole('link', { name: 'Address audit' }).click();
  await expect(page.getByRole('heading', { name: 'Address audit' })).toBeVisible();
  const pools = page.getByRole('table', { name: 'Pool totals' });
  await expect(pools.getByRole('row', { name: new RegExp(`${network}-v4`) })).toContainText('match');
  const rows = page.getByRole('table', { name: 'Address audit' });
  await expect(rows).toContainText(`${network}-a`);
  await expect(rows).toContainText('Free');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
  expect(download.suggestedFilename()).toMatch(new RegExp(`^address-audit-${PROJECT}-${network}-.*\\.csv$`));
  const csv = await readFile((await download.path())!, 'utf8');
  expect(csv.split('\r\n')[0]).toBe('pool,pool_cidr,cidr,kind,addresses,owner_kind,owner,detail,created_at');
  expect(csv).toContain(`,Claim,32,IPClaim,${network}-a,`);
  expect(csv).not.toContain('INCONSISTENT');
});

test('webhooks in the console: owners register (bad URLs refused) and delete, viewers only see, operators have their own', async ({ page }) => {
  const stamp = Date.now().toString(36);
  await signIn(page, 'tenant@example.com');
  await page.goto(`/projects/${PROJECT}/webhooks`);
  await page.getByLabel('Name').fill(`e2e-bad-${stamp}`);
  await page.getByLabel('URL').fill('http://8.8.8.8/meridian');
  await page.getByRole('button', { name: 'Register webhook' }).click();
  await expect(page.getByTestId('webhook-url-error')).toContainText('https://');
  // The cloud metadata address (and any other non-public one) is refused, with the reason.
  await page.getByLabel('URL').fill('https://169.254.169.254/latest/meta-data/');
  await page.getByRole('button', { name: 'Register webhook' }).click();
  await expect(page.getByTestId('webhook-url-error')).toContainText('link-local');
  await expect(page.getByRole('table', { name: 'Webhooks' })).not.toContainText(`e2e-bad-${stamp}`);

  const name = `e2e-ok-${stamp}`;
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('URL').fill('https://8.8.8.8/meridian');
  await page.getByRole('button', { name: 'Register webhook' }).click();
  await expect(page.getByTestId('new-webhook-secret')).toContainText(name);
  const row = page.getByRole('row', { name: new RegExp(name) });
  await expect(row).toContainText('https://8.8.8.8/meridian');
  await row.getByRole('button', { name: 'Deliveries' }).click();
  await expect(page.getByText('No deliveries yet')).toBeVisible();
  await row.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Delete webhook' }).click();
  await expect(page.getByRole('row', { name: new RegExp(name) })).toHaveCount(0);

  await page.context().clearCookies();
  await signIn(page, 'viewer@example.com');
  await page.goto(`/projects/${PROJECT}/webhooks`);
  await expect(page.getByTestId('webhooks-owner-only')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Register webhook' })).toHaveCount(0);

  await page.context().clearCookies();
  await signIn(page, 'operator@example.com');
  await page.goto('/operator/webhooks');
  await page.getByLabel('Name').fill(`e2e-ops-${stamp}`);
  await page.getByLabel('URL').fill('https://8.8.8.8/operators');
  await page.getByRole('button', { name: 'Register webhook' }).click();
  await expect(page.getByTestId('new-webhook-secret')).toBeVisible();
  await expect(page.getByRole('table', { name: 'Webhooks' })).toContainText(`e2e-ops-${stamp}`);

  // The operators' overview charts the fleet's addresses with the range picker.
  await page.goto('/operator/networks');
  const fleet = page.getByTestId('fleet-utilization-history');
  await expect(fleet.getByTestId('fleet-current').first()).toContainText('in use now');
  await fleet.getByRole('button', { name: '7d' }).click();
  await expect(fleet.getByRole('button', { name: '7d' })).toHaveAttribute('aria-pressed', 'true');
});

test('alert thresholds: the console says what triggers an alert; editors set them, contradictions are refused, viewers only read', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-dev/webhooks');
  const card = page.getByTestId('alert-rule-sentence');
  await expect(card).toContainText('reaches 80 % used (warning) or 95 % (critical)');
  await expect(card).toContainText('within 7 days');
  const form = page.getByRole('form', { name: 'Alert thresholds' });
  // A warning above the critical threshold is refused with a sentence.
  await form.getByLabel('Warning at (%)').fill('97');
  await form.getByRole('button', { name: 'Save thresholds' }).click();
  await expect(form.getByTestId('alert-rule-error')).toContainText('at most the critical one');
  await form.getByLabel('Warning at (%)').fill('70');
  await form.getByLabel('Full within (days, 0: off)').fill('14');
  await form.getByRole('button', { name: 'Save thresholds' }).click();
  await expect(form.getByTestId('alert-rule-saved')).toBeVisible();
  await expect(card).toContainText('reaches 70 % used (warning) or 95 % (critical)');
  await expect(card).toContainText('within 14 days');

  // The viewer reads the same thresholds and has no form.
  await page.context().clearCookies();
  await signIn(page, 'viewer@example.com');
  await page.goto('/projects/acme-dev/webhooks');
  await expect(page.getByTestId('alert-rule-sentence')).toContainText('reaches 70 % used (warning)');
  await expect(page.getByRole('form', { name: 'Alert thresholds' })).toHaveCount(0);
});
