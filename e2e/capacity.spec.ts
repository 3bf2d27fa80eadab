import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

const PROJECT = 'acme-dev';

/** A REST v1 client for the tenant, with a token created through the console (shown once). */
async function tenantApi(page: Page) {
  await page.goto(`/projects/${PROJECT}/tokens`);
  await page.getByLabel('Name').fill(`e2e-capacity-${Date.now().toString(36)}`);
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = (await page.getByTestId('new-token').locator('code').textContent())!.trim();
  const headers = { authorization: `Bearer ${secret}` };
  return {
    get: (path: string) => page.request.get(`/api/v1/projects/${PROJECT}${path}`, { headers }),
    post: (path: string, data: unknown) => page.request.post(`/api/v1/projects/${PROJECT}${path}`, { headers, data }),
  };
}

test('a network filled past 80 % shows its history, forecast, a firing alert and its free blocks', async ({ page }) => {
  test.setTimeout(240_000);
  await signIn(page, 'tenant@example.com');
  const api = await tenantApi(page);
  const stamp = Date.now().toString(36);
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
});
