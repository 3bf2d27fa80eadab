import { expect, test } from '@playwright/test';
import { createNetwork, signIn } from './fixtures';

/**
 * "Any pool" never silently means a child pool carved for a purpose: after carving one, a claim
 * that names no pool comes from the root pool, and the preview says which pool and why; a child
 * pool marked as the network's default is used first, and the pools table says which one it is.
 */
test('a claim on "Any IPv4 pool" comes from the root, not a carved child pool, unless that child is the default', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  const network = `e2e-any-${Date.now().toString(36)}`;
  await createNetwork(page, 'acme-dev', network);
  const root = `${network}-v4`;

  // Carve a /26 for a purpose (not default).
  await page.locator('summary', { hasText: 'Carve a child pool' }).click();
  const carve = page.getByRole('form', { name: 'Carve a child pool' });
  await carve.getByLabel('Parent pool').selectOption(root);
  await carve.getByLabel('Pool name').fill('web-tier');
  await carve.getByLabel('or prefix length').fill('26');
  await carve.getByRole('button', { name: 'Carve pool' }).click();
  await expect(page.getByTestId('carve-created')).toContainText('web-tier');
  const webTierRow = page.getByRole('row').filter({ has: page.getByRole('button', { name: 'Show pool web-tier on the map' }) });
  await expect(webTierRow).toContainText('Child pool');
  // (the "default" badge, not the prefix-length column's "default /28")
  await expect(webTierRow.getByText('default', { exact: true })).toHaveCount(0);

  // A claim naming no pool: the preview names the root pool and why; the claim lands there.
  const form = page.getByRole('form', { name: 'Create claim' });
  await form.getByLabel('Claim name').fill('any-1');
  await form.getByLabel('Prefix length').fill('28');
  await expect(page.getByTestId('claim-preview')).toContainText(`from pool ${root}`);
  await expect(page.getByTestId('claim-preview-reason')).toContainText('a child pool is used only when named or marked as default');
  await form.getByRole('button', { name: 'Create claim' }).click();
  await expect(page.getByTestId('claim-created')).toContainText(`from pool ${root}`);

  // A child pool marked as the default takes the next one, and says so in the pools table.
  await carve.getByLabel('Parent pool').selectOption(root);
  await carve.getByLabel('Pool name').fill('general');
  await carve.getByLabel('or prefix length').fill('27');
  await carve.getByLabel(/Default for this network/).check();
  await carve.getByRole('button', { name: 'Carve pool' }).click();
  await expect(page.getByTestId('carve-created')).toContainText('general');
  const generalRow = page.getByRole('row').filter({ has: page.getByRole('button', { name: 'Show pool general on the map' }) });
  await expect(generalRow.getByText('default', { exact: true })).toBeVisible();
  await form.getByLabel('Claim name').fill('any-2');
  await form.getByLabel('Prefix length').fill('28');
  await expect(page.getByTestId('claim-preview-reason')).toHaveText(`child pool general is marked as the default of network ${network}`);
  await form.getByRole('button', { name: 'Create claim' }).click();
  await expect(page.getByTestId('claim-created')).toContainText('from pool general');
});
