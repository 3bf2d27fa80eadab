import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

// One network per run (the e2e database is fresh per run; the name is unique anyway).
const suffix = Date.now().toString(36);
const network = `e2e-vpc-${suffix}`;
const released = `web-${suffix}`;
const kept = `vip-${suffix}`;
const v6network = `e2e-v6-${suffix}`;
const retained = `keep-${suffix}`;

const map = (page: Page) => page.getByRole('group', { name: /^Address map of / });
const claimsTable = (page: Page) => page.getByRole('table', { name: 'Claims' });
const claimBlock = (page: Page, name: string) => map(page).getByRole('button', { name: new RegExp(`^Claim ${name}, `) });

test.describe.serial('IPAM console', () => {
  test('a tenant creates a network and claims, sees them on the map and in the table, and releases one', async ({ page }) => {
    await signIn(page, 'tenant@example.com');
    await page.goto('/projects/acme-dev/networks');
    await page.getByLabel('Name', { exact: true }).fill(network);
    await page.getByLabel('Root CIDR', { exact: true }).fill('198.51.100.0/24');
    await page.getByRole('button', { name: 'Create network' }).click();

    await expect(page).toHaveURL(new RegExp(`/projects/acme-dev/networks/${network}$`));
    await expect(page.getByRole('heading', { level: 1, name: network })).toBeVisible();
    // An empty root is one free block on the map.
    await expect(map(page).getByRole('button', { name: /^Free, 198\.51\.100\.0\/24, 256 addresses/ })).toBeVisible();
    await expect(page.getByRole('meter', { name: 'IPv4 utilization' })).toHaveAttribute('aria-valuenow', '0');

    // The live preview runs the allocator as the form is filled in: a rejected prefix first, then the block.
    await page.getByLabel('Claim name').fill(released);
    await page.getByLabel('Prefix length', { exact: true }).fill('20');
    const preview = page.getByTestId('claim-preview');
    await expect(preview).toContainText('That block size is not allowed here.');
    await page.getByLabel('Prefix length', { exact: true }).fill('28');
    await expect(preview).toContainText(`Would get 198.51.100.0/28 from pool ${network}-v4`);
    await page.getByRole('button', { name: 'Create claim' }).click();

    const releasedRow = claimsTable(page).getByRole('row', { name: new RegExp(released) });
    await expect(releasedRow).toContainText('198.51.100.0/28');
    await expect(claimBlock(page, released)).toHaveAccessibleName(new RegExp(`^Claim ${released}, 198\\.51\\.100\\.0/28, 16 addresses`));
    await expect(page.getByRole('meter', { name: 'IPv4 utilization' })).toHaveAttribute('aria-valuenow', '6.25');

    // A pinned address: the preview names exactly that block.
    await page.getByLabel('Claim name').fill(kept);
    await page.getByLabel('Prefix length', { exact: true }).fill('');
    await page.getByLabel('Pinned address (optional)').fill('198.51.100.200');
    await expect(preview).toContainText('Would get 198.51.100.200/32');
    await page.getByRole('button', { name: 'Create claim' }).click();
    await expect(claimsTable(page).getByRole('row', { name: new RegExp(kept) })).toContainText('198.51.100.200/32');
    await expect(claimBlock(page, kept)).toBeVisible();

    // Clicking a claim on the map selects it in the table.
    await claimBlock(page, released).click();
    await expect(page.getByLabel('Search claims')).toHaveValue(released);
    await expect(claimsTable(page).getByRole('row')).toHaveCount(2); // header + the selected claim

    // Release with confirmation: gone from the table and the map, the block is free again.
    await releasedRow.getByRole('button', { name: `Release ${released}` }).click();
    const dialog = page.getByRole('dialog', { name: `Release claim ${released}?` });
    await expect(dialog).toContainText('198.51.100.0/28');
    await dialog.getByRole('button', { name: 'Release' }).click();
    await expect(dialog).toBeHidden();
    await expect(claimBlock(page, released)).toHaveCount(0);
    await expect(claimsTable(page).getByRole('row', { name: new RegExp(released) })).toHaveCount(0);
    await expect(map(page).getByRole('button', { name: /^Free, 198\.51\.100\.0\/25,/ })).toBeVisible();
    await expect(claimBlock(page, kept)).toBeVisible();
    await expect(page.getByRole('meter', { name: 'IPv4 utilization' })).toHaveAttribute('aria-valuenow', '0.3906');

    // The network cannot be deleted while a claim remains; the refusal is shown in the dialog.
    await page.getByRole('button', { name: 'Delete network' }).click();
    const del = page.getByRole('dialog', { name: `Delete network ${network}?` });
    // The dialog says beforehand that the network is in use, in words with the right number.
    await expect(del.getByTestId('network-in-use')).toHaveText(/^It is in use: a claim holds addresses of it/);
    await expect(del).toContainText('The network, its pool and their reservations are removed.');
    await del.getByRole('button', { name: 'Delete network' }).click();
    await expect(del.getByTestId('confirm-error')).toContainText('is in use: 1 claim(s)');
    await del.getByRole('button', { name: 'Cancel' }).click();
    await expect(del).toBeHidden();
  });

  test('a viewer sees the network and its claims but no create, release or delete controls', async ({ page }) => {
    await signIn(page, 'viewer@example.com');
    await page.goto('/projects/acme-dev/networks');
    const link = page.getByRole('link', { name: network });
    await expect(link).toBeVisible();
    await expect(page.getByRole('button', { name: 'Create network' })).toHaveCount(0);
    await expect(page.getByLabel('Root CIDR', { exact: true })).toHaveCount(0);

    await link.click();
    await expect(page.getByRole('heading', { level: 1, name: network })).toBeVisible();
    await expect(claimsTable(page).getByRole('row', { name: new RegExp(kept) })).toContainText('198.51.100.200/32');
    await expect(claimBlock(page, kept)).toBeVisible();
    await expect(page.getByRole('button', { name: /^Release / })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Create claim' })).toHaveCount(0);
    await expect(page.getByLabel('Claim name')).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Delete network' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Carve pool' })).toHaveCount(0);
  });
  test('a /64 reservation shows as its own figure; a retained block is released with confirmation, then the network can be deleted', async ({ page }) => {
    await signIn(page, 'tenant@example.com');
    await page.goto('/projects/acme-dev/networks');
    await page.getByLabel('Name', { exact: true }).fill(v6network);
    await page.getByLabel('Root CIDR', { exact: true }).fill('2001:db8:e2::/48');
    await page.getByText('Allocation rules (optional)').click();
    // 2^64 addresses: beyond a JSON number's exact range, sent and shown exactly.
    await page.getByLabel('Reserve leading').fill('18446744073709551616');
    await page.getByRole('button', { name: 'Create network' }).click();
    await expect(page).toHaveURL(new RegExp(`/projects/acme-dev/networks/${v6network}$`));

    // capacity = allocated + reserved + free, the reserved space as its own figure.
    await expect(page.getByTestId('IPv6-figures')).toContainText('0 % · 0 allocated · 2⁶⁴ reserved · 1.2 × 10²⁴ free of 2⁸⁰');
    await expect(page.getByRole('meter', { name: 'IPv6 utilization' })).toHaveAttribute(
      'aria-valuetext',
      '0 % (0 allocated, 18,446,744,073,709,551,616 reserved, 1,208,907,372,870,555,465,154,560 free of 1,208,925,819,614,629,174,706,176 addresses)',
    );
    const poolRow = page.getByRole('table', { name: 'Pools' }).getByRole('row', { name: new RegExp(`${v6network}-v6`) });
    await expect(poolRow.getByRole('cell').nth(6)).toHaveText('2⁶⁴');
    await expect(map(page).getByRole('button', { name: /^Reserved, 2001:db8:e2::\/64/ })).toBeVisible();

    // A Retain claim takes the first /64 after the reservation; deleting it leaves the block retained.
    await page.getByLabel('Claim name').fill(retained);
    await page.getByLabel('Prefix length', { exact: true }).fill('64');
    await page.getByLabel('Reclaim policy').selectOption('Retain');
    await expect(page.getByTestId('claim-preview')).toContainText('Would get 2001:db8:e2:1::/64');
    await page.getByRole('button', { name: 'Create claim' }).click();
    const claimRow = claimsTable(page).getByRole('row', { name: new RegExp(retained) });
    await expect(claimRow).toContainText('2001:db8:e2:1::/64');
    await claimRow.getByRole('button', { name: `Release ${retained}` }).click();
    await page
      .getByRole('dialog', { name: `Release claim ${retained}?` })
      .getByRole('button', { name: 'Release' })
      .click();
    await expect(claimRow).toHaveCount(0);

    const section = page.getByRole('region', { name: 'Retained allocations' });
    const retainedRow = section.getByRole('row', { name: new RegExp(retained) });
    await expect(retainedRow).toContainText('2001:db8:e2:1::/64');
    await expect(page.getByTestId('IPv6-figures')).toContainText('2⁶⁴ allocated · 2⁶⁴ reserved');

    // While it is retained the network cannot be deleted.
    await page.getByRole('button', { name: 'Delete network' }).click();
    const del = page.getByRole('dialog', { name: `Delete network ${v6network}?` });
    await del.getByRole('button', { name: 'Delete network' }).click();
    await expect(del.getByTestId('confirm-error')).toContainText('1 retained allocation(s)');
    await del.getByRole('button', { name: 'Cancel' }).click();

    // Release asks first: cancelling changes nothing, confirming returns the block.
    await retainedRow.getByRole('button', { name: `Release ${retained} (2001:db8:e2:1::/64)` }).click();
    const confirm = page.getByRole('dialog', { name: 'Release 2001:db8:e2:1::/64?' });
    await expect(confirm).toContainText(`The block retained for ${retained} in acme-dev/${v6network} returns to pool ${v6network}-v6`);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect(confirm).toBeHidden();
    await expect(retainedRow).toBeVisible();
    await retainedRow.getByRole('button', { name: `Release ${retained} (2001:db8:e2:1::/64)` }).click();
    await confirm.getByRole('button', { name: 'Release', exact: true }).click();
    await expect(confirm).toBeHidden();
    await expect(section.getByTestId('retained-notice')).toHaveText(`Released 2001:db8:e2:1::/64 (${retained}).`);
    await expect(retainedRow).toHaveCount(0);
    await expect(page.getByTestId('IPv6-figures')).toContainText('0 allocated · 2⁶⁴ reserved');

    await page.getByRole('button', { name: 'Delete network' }).click();
    await page
      .getByRole('dialog', { name: `Delete network ${v6network}?` })
      .getByRole('button', { name: 'Delete network' })
      .click();
    // The deletion lands on the list, which says what was deleted.
    await expect(page).toHaveURL(new RegExp(`/projects/acme-dev/networks\\?deleted=${v6network}$`));
    await expect(page.getByTestId('deleted-notice')).toContainText(v6network);
    await expect(page.getByRole('link', { name: v6network })).toHaveCount(0);
  });
});
