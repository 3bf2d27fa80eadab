import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * The address map as a tool: block details on hover and keyboard focus, a cluster's node block
 * opened to its pod addresses, the free-prefixes list whose "Claim this" pins a claim, and IPv6
 * pools on a compressed scale.
 */
const stamp = Date.now().toString(36);
const network = `map-${stamp}`;
const v6network = `map6-${stamp}`;
const cluster = `k-${stamp}`;
// Several steps through the real app on a shared 2-core machine.
test.describe.configure({ timeout: 120_000 });

const map = (page: Page) => page.getByRole('group', { name: /^Address map of / });
const tooltip = (page: Page) => page.getByRole('tooltip');

async function createNetwork(page: Page, name: string, cidr: string) {
  await page.goto('/projects/acme-dev/networks');
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Root CIDR', { exact: true }).fill(cidr);
  await page.getByRole('button', { name: 'Create network' }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/acme-dev/networks/${name}$`));
}

async function claim(page: Page, name: string, prefixLength: string, expected: string) {
  await page.getByLabel('Claim name').fill(name);
  await page.getByLabel('Prefix length', { exact: true }).fill(prefixLength);
  await expect(page.getByTestId('claim-preview')).toContainText(`Would get ${expected}`);
  await page.getByRole('button', { name: 'Create claim' }).click();
  await expect(page.getByTestId('claim-created')).toContainText(expected);
}

test('blocks show their CIDR, owner and size on hover and focus; Claim this pins a free prefix; a node block opens to its pod addresses', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await createNetwork(page, network, '203.0.113.0/24');
  await page.getByRole('radio', { name: 'Proportional' }).click();
  await claim(page, `a-${stamp}`, '26', '203.0.113.0/26');

  // Hover: the tooltip names the block, its owner (the claim's creator) and its size.
  const block = map(page).getByRole('button', { name: new RegExp(`^Claim a-${stamp}, 203\\.0\\.113\\.0/26`) });
  await block.hover();
  await expect(tooltip(page)).toContainText('203.0.113.0/26');
  await expect(tooltip(page)).toContainText('Owner: tenant@example.com');
  await expect(tooltip(page)).toContainText('64 addresses');

  // Keyboard: the focused block is described by the tooltip; arrows move it to the next block.
  await page.mouse.move(0, 0);
  await block.focus();
  const tipId = await tooltip(page).getAttribute('id');
  await expect(block).toHaveAttribute('aria-describedby', tipId!);
  await page.keyboard.press('ArrowRight');
  const next = map(page).getByRole('button', { name: /^Free, 203\.0\.113\.64\/26, 64 addresses/ });
  await expect(next).toBeFocused();
  await expect(tooltip(page)).toContainText('203.0.113.64/26');
  await expect(next).toHaveAttribute('aria-describedby', (await tooltip(page).getAttribute('id'))!);

  // Free prefixes: the largest free blocks of the pool, largest first; Claim this pre-fills the form.
  const free = page.getByRole('list', { name: 'Free prefixes' });
  await expect(free.getByRole('listitem').first()).toContainText('203.0.113.128/25');
  await expect(free.getByRole('listitem').nth(1)).toContainText('203.0.113.64/26');
  await free.getByRole('button', { name: 'Claim 203.0.113.128/25' }).click();
  await expect(page.getByLabel('Pinned address (optional)')).toHaveValue('203.0.113.128/25');
  await expect(page.getByLabel('Pool (optional)')).toHaveValue(`${network}-v4`);
  await expect(page.getByLabel('Claim name')).toBeFocused();
  await page.getByLabel('Claim name').fill(`b-${stamp}`);
  await expect(page.getByTestId('claim-preview')).toContainText('Would get 203.0.113.128/25');
  await page.getByRole('button', { name: 'Create claim' }).click();
  await expect(page.getByTestId('claim-created')).toContainText(`Claim b-${stamp} bound to 203.0.113.128/25`);
  await expect(page.getByRole('table', { name: 'Claims' }).getByRole('row', { name: new RegExp(`b-${stamp}`) })).toContainText('203.0.113.128/25');
  // The list follows: the claimed block is gone.
  await expect(free.getByRole('listitem').first()).toContainText('203.0.113.64/26');
  await expect(free).not.toContainText('203.0.113.128/25');

  // A cluster's pod gets an address: its node block appears on the map and opens to the pod address.
  await page.getByLabel('Cluster name').fill(cluster);
  await page.getByRole('button', { name: 'Register cluster' }).click();
  const secret = await page.getByLabel('Node token').inputValue();
  expect(secret).not.toBe('');
  const add = await page.request.post(`/api/v1/projects/acme-dev/clusters/${cluster}/cni/add`, {
    headers: { authorization: `Bearer ${secret}` },
    data: { cniNetwork: 'k8s-pod-network', containerId: `c${stamp}`, ifname: 'eth0', node: 'node-a', podNamespace: 'shop', podName: 'web-1' },
  });
  expect(add.status()).toBe(200);
  await page.reload();
  const nodeBlock = map(page).getByRole('button', { name: /^Node block .*, 203\.0\.113\.64\/26, 64 addresses/ });
  await nodeBlock.hover();
  await expect(tooltip(page)).toContainText(`Owner: cluster ${cluster}, node node-a`);
  await nodeBlock.click();
  await expect(page.getByRole('button', { name: `← Back to pool ${network}-v4` })).toBeVisible();
  const pod = map(page).getByRole('button', { name: /^Pod address, 203\.0\.113\.\d+\/32, 1 address/ });
  await expect(pod).toHaveCount(1);
  await expect(pod.locator('span').first()).toHaveClass(/bg-teal-500/);
  await pod.hover();
  await expect(tooltip(page)).toContainText('Owner: pod shop/web-1 on node node-a');
  // No free prefixes are offered inside a node block (its addresses are the CNI's).
  await expect(page.getByRole('list', { name: 'Free prefixes' })).toHaveCount(0);
  await page.getByRole('button', { name: `← Back to pool ${network}-v4` }).click();
  await expect(nodeBlock).toBeVisible();
});

test('an IPv6 pool shows its used blocks at a readable width with the free runs collapsed into labelled gaps', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await createNetwork(page, v6network, '2001:db8:e5::/48');
  await page.getByRole('form', { name: 'Create claim' }).getByLabel('Family').selectOption('IPv6');
  await claim(page, `v6-${stamp}`, '64', '2001:db8:e5::/64');

  await expect(page.getByRole('radio', { name: 'Compressed' })).toHaveAttribute('aria-checked', 'true');
  const used = map(page).getByRole('button', { name: new RegExp(`^Claim v6-${stamp}, 2001:db8:e5::/64`) });
  await expect(used).toBeVisible();
  // The /64 is 1/65,536 of the /48, yet its tile is wide enough to read its CIDR.
  const box = await used.boundingBox();
  expect(box!.width).toBeGreaterThanOrEqual(120);
  await expect(used).toContainText('2001:db8:e5::/64');
  // The fifteen free buddies after it are one gap, labelled with their total and count.
  const gap = map(page).getByRole('button', { name: /^Free, 2001:db8:e5:1::\/64 to 2001:db8:e5:8000::\/49, .* addresses in 16 blocks/ });
  await expect(gap).toBeVisible();
  await expect(gap).toContainText('16 blocks');
  await gap.hover();
  await expect(tooltip(page)).toContainText('Free run of 16 blocks');

  // The proportional scale is one switch away.
  await page.getByRole('radio', { name: 'Proportional' }).click();
  await expect(map(page).getByRole('button', { name: /^Free, 2001:db8:e5:8000::\/49,/ })).toBeVisible();
  await expect(map(page).getByRole('button', { name: /in 16 blocks/ })).toHaveCount(0);
});
