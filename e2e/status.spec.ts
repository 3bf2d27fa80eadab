import { expect, test } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * Statuses read the same colour and word on every page (components/ui/status.ts): an Unavailable
 * location is red and offers no green cell, a pool reads Ready in green and Exhausted in red.
 * (A quarantined device read as Not verified is checked in fleet.spec.ts, where one is made.)
 */
test.describe.configure({ timeout: 120_000 });
const network = `st-${Date.now().toString(36)}`;

test('an Unavailable location shows red Unavailable and no green cell in the request form', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-prod/machines');
  const form = page.getByRole('form', { name: 'Request a machine' });
  if (!(await form.isVisible())) await page.getByRole('button', { name: 'Request a machine' }).click();
  const lon1 = form.getByTestId('availability-lon1');
  const status = lon1.locator('[data-status-tone]');
  await expect(status).toHaveText('Unavailable');
  await expect(status).toHaveAttribute('data-status-tone', 'red');
  await expect(lon1.locator('[class*="emerald"]')).toHaveCount(0);
  await expect(lon1.getByRole('button')).toHaveCount(0);
});

test('a pool reads Ready in green, and Exhausted in red once its last block is claimed', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-dev/networks');
  await page.getByLabel('Name', { exact: true }).fill(network);
  await page.getByLabel('Root CIDR', { exact: true }).fill('100.64.1.0/30');
  await page.getByRole('button', { name: 'Create network' }).click();
  await expect(page).toHaveURL(new RegExp(`/networks/${network}$`));
  const status = page
    .getByRole('table', { name: 'Pools' })
    .getByRole('row', { name: new RegExp(`${network}-v4`) })
    .locator('[data-status-tone]');
  await expect(status).toHaveText('Ready');
  await expect(status).toHaveAttribute('data-status-tone', 'green');

  await page.getByLabel('Claim name').fill(`all-${network}`);
  await page.getByLabel('Prefix length', { exact: true }).fill('30');
  await page.getByRole('button', { name: 'Create claim' }).click();
  await expect(page.getByTestId('claim-created')).toContainText('100.64.1.0/30');
  await expect(status).toHaveText('Exhausted');
  await expect(status).toHaveAttribute('data-status-tone', 'red');
});
