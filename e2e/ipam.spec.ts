import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

// One network per run (the e2e database is fresh per run; the name is unique anyway).
const suffix = Date.now().toString(36);
const network = `e2e-vpc-${suffix}`;
const released = `web-${suffix}`;
const kept = `vip-${suffix}`;

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
    await expect(preview).toContainText('PrefixLengthRejected');
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
});
