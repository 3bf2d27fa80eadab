import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { signIn } from './fixtures';

const run = promisify(execFile);

test('an owner downloads a kubeconfig with a new token, and stock kubectl lists the project with it', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-prod/tokens');
  await page.getByLabel('Name').fill('e2e-kubectl');
  await page.getByRole('button', { name: 'Create token' }).click();
  const shown = page.getByTestId('new-token');
  await expect(shown).toContainText('shown only once');
  const secret = (await shown.locator('code').first().textContent())!.trim();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-kubeconfig').click()]);
  expect(download.suggestedFilename()).toBe('acme-prod.kubeconfig');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'meridian-e2e-kubeconfig-'));
  try {
    const file = path.join(dir, 'config');
    await download.saveAs(file);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain(`token: ${secret}`);
    expect(text).toContain('/apis/resourcemanager.miloapis.com/v1alpha1/projects/acme-prod/control-plane');
    // No flags but the file: the CA, the server and the token are all in it.
    const env = { ...process.env, KUBECONFIG: file, HOME: dir };
    const manifest = 'apiVersion: ipam.miloapis.com/v1alpha1\nkind: Network\nmetadata: {name: e2e-kubeconfig}\nspec: {cidrs: [{cidr: 10.231.0.0/16}]}\n';
    const applied = run('kubectl', ['apply', '-f', '-'], { env });
    applied.child.stdin!.end(manifest);
    expect((await applied).stdout).toBe('network.ipam.miloapis.com/e2e-kubeconfig created\n');
    expect((await run('kubectl', ['get', 'networks', '-o', 'name'], { env })).stdout).toContain('network.ipam.miloapis.com/e2e-kubeconfig\n');
    // The same network through REST v1 with the same token, and on the console.
    const rest = await page.request.get('/api/v1/projects/acme-prod/networks/e2e-kubeconfig', { headers: { authorization: `Bearer ${secret}` } });
    expect(rest.status()).toBe(200);
    await page.goto('/projects/acme-prod/networks');
    await expect(page.getByRole('link', { name: 'e2e-kubeconfig' })).toBeVisible();
    expect((await run('kubectl', ['delete', 'network', 'e2e-kubeconfig'], { env })).stdout).toBe('network.ipam.miloapis.com "e2e-kubeconfig" deleted\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cluster token (the CNI plugin’s) is offered no kubeconfig', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/acme-prod/tokens');
  await page.getByLabel('Name').fill('e2e-cni-only');
  await page.getByLabel('Cluster (optional)').fill('e2e-kubeconfig-cluster');
  await page.getByRole('button', { name: 'Create token' }).click();
  await expect(page.getByTestId('new-token')).toContainText('shown only once');
  await expect(page.getByTestId('download-kubeconfig')).toHaveCount(0);
});
