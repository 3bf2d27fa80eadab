import { expect, test } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * The network, register-cluster and machine-request forms: an error sits under its field as a
 * sentence, goes away as soon as that value changes, and after a success the form is back at its
 * defaults.
 */
const stamp = Date.now().toString(36);
test.describe.configure({ timeout: 120_000 });

test('the network form clears a field error when the value changes, and is empty again after a create', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-dev/networks');
  const name = page.getByLabel('Name', { exact: true });
  const cidr = page.getByLabel('Root CIDR', { exact: true });
  await name.fill(`fm-${stamp}`);
  await cidr.fill('100.64.0.0/33');
  await page.getByRole('button', { name: 'Create network' }).click();
  const cidrError = page.getByTestId('network-cidr-0-error');
  await expect(cidrError).toBeVisible();
  await expect(cidrError).toHaveText(/^[A-Z].*\.$/);
  await expect(cidrError).not.toContainText('cidrs.0');
  await expect(cidr).toHaveAttribute('aria-invalid', 'true');
  await cidr.fill('100.64.0.0/2');
  await expect(cidrError).toHaveCount(0);
  await expect(cidr).not.toHaveAttribute('aria-invalid', 'true');

  await name.fill('Not_A_Name');
  await cidr.fill('100.64.0.0/26');
  await page.getByRole('button', { name: 'Create network' }).click();
  const nameError = page.getByTestId('network-name-error');
  await expect(nameError).toHaveText(/^Name .*\.$/);
  await name.fill(`fm-${stamp}`);
  await expect(nameError).toHaveCount(0);

  await page.getByRole('button', { name: 'Create network' }).click();
  await expect(page).toHaveURL(new RegExp(`/networks/fm-${stamp}$`));
  await page.goBack();
  await expect(page).toHaveURL(/\/networks$/);
  await expect(page.getByLabel('Name', { exact: true })).toHaveValue('');
  await expect(page.getByLabel('Root CIDR', { exact: true })).toHaveValue('');
});

test('the register-cluster form clears its error on change and returns to empty after the token is dismissed', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-dev/networks');
  await page.getByLabel('Name', { exact: true }).fill(`fc-${stamp}`);
  await page.getByLabel('Root CIDR', { exact: true }).fill('100.64.0.64/26');
  await page.getByRole('button', { name: 'Create network' }).click();
  await expect(page).toHaveURL(new RegExp(`/networks/fc-${stamp}$`));

  const clusterName = page.getByLabel('Cluster name');
  await clusterName.fill('Not_A_Name');
  await page.getByRole('button', { name: 'Register cluster' }).click();
  const error = page.getByTestId('cluster-name-error');
  await expect(error).toHaveText(/^Cluster name .*\.$/);
  await clusterName.fill(`kc-${stamp}`);
  await expect(error).toHaveCount(0);
  await expect(clusterName).not.toHaveAttribute('aria-invalid', 'true');

  await page.getByRole('button', { name: 'Register cluster' }).click();
  await expect(page.getByTestId('cluster-registered')).toContainText(`kc-${stamp}`);
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByLabel('Cluster name')).toHaveValue('');
  await expect(page.getByTestId('cluster-name-error')).toHaveCount(0);
});

test('the machine-request form clears a field error on change and opens at its defaults after a request', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-prod/machines');
  const form = page.getByRole('form', { name: 'Request a machine' });
  if (!(await form.isVisible())) await page.getByRole('button', { name: 'Request a machine' }).click();
  const defaults = {
    class: await form.getByLabel('Class', { exact: true }).inputValue(),
    profile: await form.getByLabel('Profile', { exact: true }).inputValue(),
  };
  const name = form.getByLabel('Name', { exact: true });
  await name.fill('Not_A_Name');
  await form.getByLabel('Class', { exact: true }).selectOption('c1.small');
  await form.getByLabel('Location', { exact: true }).selectOption('ams1');
  await form.getByRole('button', { name: 'Request machine' }).click();
  const error = form.getByTestId('machine-name-error');
  await expect(error).toHaveText(/^Name .*\.$/);
  await name.fill(`fm-${stamp}`);
  await expect(error).toHaveCount(0);

  await form.getByRole('button', { name: 'Request machine' }).click();
  await expect(page).toHaveURL(new RegExp(`/machines/fm-${stamp}$`));
  await page.goto('/projects/acme-prod/machines');
  const again = page.getByRole('form', { name: 'Request a machine' });
  if (!(await again.isVisible())) await page.getByRole('button', { name: 'Request a machine' }).click();
  await expect(again.getByLabel('Name', { exact: true })).toHaveValue('');
  await expect(again.getByLabel('Class', { exact: true })).toHaveValue(defaults.class);
  await expect(again.getByLabel('Profile', { exact: true })).toHaveValue(defaults.profile);
});
