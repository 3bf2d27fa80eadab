import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { signIn } from './fixtures';

const IPCLAIMS = 'ipam.miloapis.com/ipclaims';
const PROJECT = 'acme-dev';

/** A REST v1 client for the tenant, with a token created through the console (shown once). */
async function tenantApi(page: Page) {
  await page.goto(`/projects/${PROJECT}/tokens`);
  await page.getByLabel('Name').fill(`e2e-quota-${Date.now().toString(36)}`);
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = (await page.getByTestId('new-token').locator('code').first().textContent())!.trim();
  const request: APIRequestContext = page.request;
  const headers = { authorization: `Bearer ${secret}` };
  return {
    get: (path: string) => request.get(`/api/v1/projects/${PROJECT}${path}`, { headers }),
    post: (path: string, data: unknown) => request.post(`/api/v1/projects/${PROJECT}${path}`, { headers, data }),
    delete: (path: string) => request.delete(`/api/v1/projects/${PROJECT}${path}`, { headers }),
  };
}

/** Sets the ipclaims amount of the project's default grant from the operator console. */
async function setDefaultGrant(page: Page, amount: number) {
  await page.goto('/operator/quota');
  await page.getByLabel('Filter grants by project').fill(PROJECT);
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
  const row = page.getByTestId('grant-row').filter({ hasText: `default-${PROJECT}` });
  await row.getByRole('button', { name: `Edit default-${PROJECT}` }).click();
  await row.getByLabel(`${IPCLAIMS} amount`).fill(String(amount));
  await row.getByRole('button', { name: 'Save' }).click();
  await expect(row).toContainText(`${IPCLAIMS}: ${amount}`);
}

test('a tenant hits the limit and sees why, asks for more, the operator approves, and the create then succeeds', async ({ browser }) => {
  // Three browsers and a dozen steps: more than the default minute on a loaded machine.
  test.setTimeout(120_000);
  const tenant = await (await browser.newContext()).newPage();
  const operator = await (await browser.newContext()).newPage();
  await signIn(tenant, 'tenant@example.com');
  await signIn(operator, 'operator@example.com');
  const api = await tenantApi(tenant);
  const stamp = Date.now().toString(36);
  const network = `e2e-quota-${stamp}`;
  const claimName = `q-${stamp}`;

  // A network of our own (another spec may hold ranges in this project: pick a free /24).
  let created = false;
  for (let i = 0; i < 8 && !created; i++) {
    const cidr = `10.${100 + Math.floor(Math.random() * 150)}.${Math.floor(Math.random() * 256)}.0/24`;
    const res = await api.post('/networks', { metadata: { name: network }, spec: { cidrs: [{ cidr }] } });
    created = res.status() === 201;
  }
  expect(created).toBe(true);

  // The operator shrinks the default grant to exactly what the project holds: the bucket is full.
  const before = (await (await api.get('/allowancebuckets')).json()).items.find((b: { spec: { resourceType: string } }) => b.spec.resourceType === IPCLAIMS);
  const held: number = before.status.allocated;
  await setDefaultGrant(operator, held);

  // The tenant's create is refused with the numbers, and stores nothing.
  const denied = await api.post('/ipclaims', { metadata: { name: claimName }, spec: { network, prefixLength: 28 } });
  expect(denied.status()).toBe(403);
  const body = await denied.json();
  expect(body.error).toMatchObject({ code: 'QuotaExceeded', message: `requested 1 ${IPCLAIMS}, available 0, limit ${held}` });
  expect((await api.get(`/ipclaims/${claimName}`)).status()).toBe(404);

  // The console shows the bucket full and the denial with its reason.
  await tenant.goto(`/projects/${PROJECT}/quota`);
  await expect(tenant.getByTestId(`bucket-${IPCLAIMS}`)).toHaveAttribute('data-tone', 'red');
  await expect(tenant.getByRole('meter', { name: 'IP claims quota' })).toHaveAttribute(
    'aria-valuetext',
    new RegExp(`^${held} of ${held} claims used · 0 available`),
  );
  const deniedRow = tenant.getByTestId('claim-row').filter({ hasText: `ipclaim-${claimName}` });
  await expect(deniedRow).toContainText('Denied');
  await expect(deniedRow).toContainText(`Not enough quota. Requested 1 IP claims, available 0, limit ${held}.`);

  // The tenant asks for one more.
  const reason = `e2e ${stamp}: launch needs one more claim`;
  await tenant.getByLabel('Resource type').selectOption(IPCLAIMS);
  await tenant.getByLabel('Amount').fill('1');
  await tenant.getByLabel('Reason').fill(reason);
  await tenant.getByRole('button', { name: 'Request increase' }).click();
  await expect(tenant.getByTestId('increase-sent')).toContainText('an operator will approve or reject it');
  await expect(tenant.getByTestId('increase-row').filter({ hasText: reason })).toContainText('Pending');

  // The operator approves it from the queue.
  await operator.goto('/operator/quota');
  const queued = operator.getByTestId('queue-row').filter({ hasText: reason });
  await expect(queued).toContainText(PROJECT);
  await expect(queued).toContainText(`${held} of ${held}`);
  await queued.getByRole('button', { name: 'Approve' }).click();
  // The approval is confirmed first, and says what it changes.
  const confirm = operator.getByRole('dialog', { name: `Approve 1 more IP claims for ${PROJECT}?` });
  await expect(confirm).toContainText(`${PROJECT}'s IP claims limit goes from ${held} to ${held + 1}`);
  await confirm.getByRole('button', { name: 'Approve' }).click();
  await expect(operator.getByTestId('approval-done')).toHaveText(`Approved: ${PROJECT}'s IP claims limit went from ${held} to ${held + 1}.`);
  await expect(operator.getByTestId('queue-row').filter({ hasText: reason })).toHaveCount(0);

  // The tenant sees the outcome, and the same create now succeeds.
  await tenant.reload();
  await expect(tenant.getByTestId('increase-row').filter({ hasText: reason })).toContainText('Approved');
  await expect(tenant.getByTestId('increase-row').filter({ hasText: reason })).toContainText('granted 1');
  const ok = await api.post('/ipclaims', { metadata: { name: claimName }, spec: { network, prefixLength: 28 } });
  expect(ok.status()).toBe(201);
  await tenant.reload();
  await expect(tenant.getByRole('meter', { name: 'IP claims quota' })).toHaveAttribute('aria-valuetext', new RegExp(`^${held + 1} of ${held + 1} claims used`));
  await expect(
    tenant
      .getByTestId('claim-row')
      .filter({ hasText: `ipclaim-${claimName}` })
      .first(),
  ).toContainText('Granted');

  // Leave the project as we found it for other specs.
  expect((await api.delete(`/ipclaims/${claimName}`)).status()).toBe(200);
  expect((await api.delete(`/networks/${network}`)).status()).toBe(200);
  await setDefaultGrant(operator, 100);
});
