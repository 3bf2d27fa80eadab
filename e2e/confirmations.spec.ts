import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * Destructive and privilege-changing actions ask first, in one kind of dialog that names what will
 * happen; Cancel changes nothing. An admin cannot take away their own admin role or disable
 * themselves (the console does not offer it and the server refuses it).
 */

/** Opens the dialog with `name` and cancels it; the dialog closes. */
async function cancelDialog(page: Page, name: string | RegExp, says: string | RegExp) {
  const dialog = page.getByRole('dialog', { name });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(says);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
}

test('an organization owner is asked before leaving or changing a role, and Cancel keeps everything', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/organizations/acme');
  await page.getByRole('button', { name: 'Leave organization' }).click();
  await cancelDialog(page, 'Leave acme?', 'Only an owner of the organization can add you back.');
  await expect(page).toHaveURL(/\/organizations\/acme$/);
  const own = page.getByLabel('Role of tenant@example.com');
  await own.selectOption('member');
  await cancelDialog(page, 'Make tenant@example.com a member?', 'tenant@example.com is an owner of acme.');
  await expect(own).toHaveValue('owner');
  await page.reload();
  await expect(page.getByLabel('Role of tenant@example.com')).toHaveValue('owner');
});

test('an admin is asked before disabling a user or changing a platform role, and cannot do either to themselves', async ({ page }) => {
  await signIn(page, 'admin@example.com');
  await page.goto('/operator/users');
  const viewer = page.getByTestId('user-viewer@example.com');

  // Disable: asked, cancelled, nothing changed; then confirmed, and enabled again (asked too).
  await viewer.getByRole('button', { name: 'Disable viewer@example.com' }).click();
  await cancelDialog(page, 'Disable viewer@example.com?', 'signed out everywhere at once');
  await expect(viewer).toContainText('Active');
  await viewer.getByRole('button', { name: 'Disable viewer@example.com' }).click();
  await page.getByRole('dialog', { name: 'Disable viewer@example.com?' }).getByRole('button', { name: 'Disable' }).click();
  await expect(viewer).toContainText('Disabled');
  await viewer.getByRole('button', { name: 'Enable viewer@example.com' }).click();
  await page.getByRole('dialog', { name: 'Enable viewer@example.com?' }).getByRole('button', { name: 'Enable' }).click();
  await expect(viewer).toContainText('Active');

  // A platform role: asked first; Cancel leaves the box as it was.
  const operatorRole = page.getByLabel('admin role of operator@example.com');
  await operatorRole.click();
  await cancelDialog(page, 'Make operator@example.com an admin?', 'Admins manage users');
  await expect(operatorRole).not.toBeChecked();
  await page.reload();
  await expect(page.getByLabel('admin role of operator@example.com')).not.toBeChecked();

  // Oneself: no Disable button, and the own admin box cannot be cleared.
  const me = page.getByTestId('user-admin@example.com');
  await expect(me.getByRole('button', { name: /Disable/ })).toHaveCount(0);
  await expect(me).toContainText('You cannot disable yourself.');
  await expect(page.getByLabel('admin role of admin@example.com')).toBeDisabled();
});

test('revoking a token asks in the console dialog, not the browser', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-dev/tokens');
  const name = `e2e-confirm-${Date.now().toString(36)}`;
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create token' }).click();
  await expect(page.getByTestId('new-token')).toBeVisible();
  let browserDialog = false;
  page.on('dialog', (d) => {
    browserDialog = true;
    void d.dismiss();
  });
  await page.getByRole('button', { name: `Revoke ${name}` }).click();
  await cancelDialog(page, `Revoke ${name}?`, /stops? working|revoke/i);
  await expect(page.getByRole('button', { name: `Revoke ${name}` })).toBeVisible();
  await page.getByRole('button', { name: `Revoke ${name}` }).click();
  await page
    .getByRole('dialog', { name: `Revoke ${name}?` })
    .getByRole('button', { name: 'Revoke' })
    .click();
  await expect(page.getByRole('button', { name: `Revoke ${name}` })).toHaveCount(0);
  expect(browserDialog).toBe(false);
});

test('rejecting a quota increase is confirmed, and the rejection replaces any earlier success message', async ({ browser }) => {
  const tenant = await (await browser.newContext()).newPage();
  const operator = await (await browser.newContext()).newPage();
  await signIn(tenant, 'tenant@example.com');
  await signIn(operator, 'operator@example.com');
  const reason = `e2e reject ${Date.now().toString(36)}`;
  await tenant.goto('/projects/acme-dev/quota');
  await tenant.getByLabel('Resource type').selectOption('ipam.miloapis.com/ipclaims');
  await tenant.getByLabel('Amount').fill('3');
  await tenant.getByLabel('Reason').fill(reason);
  await tenant.getByRole('button', { name: 'Request increase' }).click();
  await expect(tenant.getByTestId('increase-sent')).toBeVisible();

  await operator.goto('/operator/quota');
  const row = operator.getByTestId('queue-row').filter({ hasText: reason });
  await row.getByLabel('Reason').fill('not this quarter');
  await row.getByRole('button', { name: 'Reject' }).click();
  await cancelDialog(operator, "Reject acme-dev's request for 3 more IP claims?", 'not this quarter');
  await expect(row).toBeVisible();
  await row.getByRole('button', { name: 'Reject' }).click();
  await operator
    .getByRole('dialog', { name: /^Reject acme-dev/ })
    .getByRole('button', { name: 'Reject' })
    .click();
  await expect(operator.getByTestId('approval-done')).toHaveText("Rejected acme-dev's request for 3 more IP claims.");
  await expect(operator.getByTestId('queue-row').filter({ hasText: reason })).toHaveCount(0);
});
