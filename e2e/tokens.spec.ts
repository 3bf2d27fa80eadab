import { expect, test } from '@playwright/test';
import { signIn } from './fixtures';

test('an owner creates a cluster token, sees it once, and revokes it', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-prod/tokens');
  await page.getByLabel('Name').fill('e2e-nodes');
  await page.getByLabel('Cluster (optional)').fill('e2e-cluster');
  await page.getByRole('button', { name: 'Create token' }).click();
  const shown = page.getByTestId('new-token');
  await expect(shown).toContainText('shown only once');
  const secret = (await shown.locator('code').textContent())!.trim();
  expect(secret).toMatch(/^mrd_/);
  const row = page.getByRole('row', { name: /e2e-nodes/ });
  await expect(row).toContainText('e2e-cluster');

  // The token authenticates against the API until revoked.
  const before = await page.request.get('/api/v1/whoami', { headers: { authorization: `Bearer ${secret}` } });
  expect(before.status()).toBe(200);
  await row.getByRole('button', { name: 'Revoke e2e-nodes' }).click();
  await page.getByRole('dialog', { name: 'Revoke e2e-nodes?' }).getByRole('button', { name: 'Revoke' }).click();
  await expect(row).toContainText('Revoked');
  const after = await page.request.get('/api/v1/whoami', { headers: { authorization: `Bearer ${secret}` } });
  expect(after.status()).toBe(401);
});

test('the token secret is never shown again after a reload', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-prod/tokens');
  await expect(page.getByTestId('new-token')).toHaveCount(0);
  await expect(page.locator('body')).not.toContainText(/mrd_[A-Za-z0-9_-]{20,}/);
});
