import { expect, test, type Browser, type Page } from '@playwright/test';
import { createNetwork, signIn } from './fixtures';

/**
 * Live updates from the change feed: a change made elsewhere — a second browser, the CNI plugin's
 * REST calls — appears on an open page without a reload (components/fleet/live.ts, docs/watch.md).
 */

const suffix = Date.now().toString(36);
const project = 'acme-dev';
const network = `live-${suffix}`;

async function tenantPage(browser: Browser): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, 'tenant@example.com');
  return page;
}

test.describe.serial('live updates', () => {
  test('a claim made in a second browser appears in the first without a reload', async ({ browser }) => {
    const first = await tenantPage(browser);
    await createNetwork(first, project, network);
    const claims = first.getByRole('table', { name: 'Claims' });
    // Nothing reloads the first page from here on: a navigation would fail this.
    let navigations = 0;
    first.on('framenavigated', (frame) => frame === first.mainFrame() && navigations++);

    const second = await tenantPage(browser);
    await second.goto(`/projects/${project}/networks/${network}`);
    await second.getByLabel('Claim name').fill(`web-${suffix}`);
    await second.getByLabel('Prefix length', { exact: true }).fill('28');
    await second.getByRole('button', { name: 'Create claim' }).click();
    await expect(second.getByRole('table', { name: 'Claims' }).getByRole('row', { name: new RegExp(`web-${suffix}`) })).toBeVisible();

    await expect(claims.getByRole('row', { name: new RegExp(`web-${suffix}`) })).toBeVisible({ timeout: 5_000 });
    expect(navigations).toBe(0);
  });

  test('a pod lease the CNI plugin takes appears on the open network page without a reload', async ({ browser }) => {
    const first = await tenantPage(browser);
    await first.goto(`/projects/${project}/networks/${network}`);
    await expect(first.getByRole('heading', { level: 1, name: network })).toBeVisible();
    // A reload would lose this mark; client-side URL updates (history API) keep it.
    await first.evaluate(() => Object.assign(window, { __sameDocument: true }));

    // Elsewhere: an owner makes a token, registers a cluster and the plugin ADDs a pod.
    const second = await tenantPage(browser);
    await second.goto(`/projects/${project}/tokens`);
    await second.getByLabel('Name').fill(`live-${suffix}`);
    await second.getByRole('button', { name: 'Create token' }).click();
    const secret = (await second.getByTestId('new-token').locator('code').first().textContent())!.trim();
    const cluster = await second.request.post(`/api/v1/projects/${project}/clusters`, {
      headers: { authorization: `Bearer ${secret}` },
      data: { name: `k-${suffix}`, network },
    });
    expect(cluster.status()).toBe(201);
    const clusterToken = (await cluster.json()).token.secret as string;
    const add = await second.request.post(`/api/v1/projects/-/clusters/k-${suffix}/cni/add`, {
      headers: { authorization: `Bearer ${clusterToken}` },
      data: { cniNetwork: 'meridian', containerId: `c-${suffix}`, ifname: 'eth0', node: 'node-1', podNamespace: 'default', podName: `pod-${suffix}` },
    });
    expect(add.status()).toBe(200);

    await expect(first.getByText(`pod-${suffix}`).first()).toBeVisible({ timeout: 5_000 });
    expect(await first.evaluate(() => '__sameDocument' in window)).toBe(true);
  });
});
