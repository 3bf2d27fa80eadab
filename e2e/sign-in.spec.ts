import { expect, test } from '@playwright/test';
import { signIn, signInWithForm } from './fixtures';

const roles = [
  { email: 'tenant@example.com', sees: ['Projects'], notSees: ['Allocation queue', 'Simulator'] },
  { email: 'viewer@example.com', sees: ['Projects'], notSees: ['Allocation queue', 'Simulator'] },
  { email: 'globex@example.com', sees: ['Projects'], notSees: ['Allocation queue', 'Simulator'] },
  { email: 'operator@example.com', sees: ['Allocation queue', 'Fleet', 'Quota admin', 'Audit log'], notSees: ['Simulator'] },
  { email: 'qa@example.com', sees: ['Simulator'], notSees: ['Allocation queue', 'Audit log'] },
  { email: 'admin@example.com', sees: ['Projects', 'Allocation queue', 'Fleet', 'Quota admin', 'Audit log', 'Simulator'], notSees: [] },
];

for (const role of roles) {
  test(`${role.email} signs in and sees their navigation`, async ({ page }) => {
    await signInWithForm(page, role.email);
    await expect(page.getByTestId('current-user')).toContainText(role.email);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const label of role.sees) await expect(nav.getByRole('link', { name: label, exact: true })).toBeVisible();
    for (const label of role.notSees) await expect(nav.getByRole('link', { name: label, exact: true })).toHaveCount(0);
  });
}

test('a wrong password is refused', async ({ page }) => {
  await signInWithForm(page, 'tenant@example.com', 'not-the-password');
  await expect(page.getByTestId('sign-in-error')).toHaveText('Wrong e-mail or password.');
  await expect(page).toHaveURL(/\/sign-in/);
  const session = await (await page.request.get('/api/auth/session')).json();
  expect(session?.user).toBeUndefined();
});

test('a globex tenant opening an acme project gets not-found and no data', async ({ page }) => {
  await signIn(page, 'globex@example.com');
  const response = await page.goto('/projects/acme-prod');
  expect(response?.status()).toBe(404);
  await expect(page.getByText('This page could not be found')).toBeVisible();
  const html = await page.content();
  expect(html).not.toContain('Acme production');
  expect(html).not.toContain('acme-prod</span>');
  // The tenant's own project opens.
  await page.goto('/projects/globex-web');
  await expect(page.getByTestId('project-title')).toContainText('Globex web');
});

test('a viewer cannot reach staff pages', async ({ page }) => {
  await signIn(page, 'viewer@example.com');
  const response = await page.goto('/operator/audit');
  expect(response?.status()).toBe(404);
});

test('signed out, the console sends you to sign in', async ({ page }) => {
  await page.goto('/projects/acme-prod');
  await expect(page).toHaveURL(/\/sign-in/);
});

test('sign out ends the session', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in/);
  const session = await (await page.request.get('/api/auth/session')).json();
  expect(session?.user).toBeUndefined();
});
