import { expect, test, type Locator, type Page } from '@playwright/test';
import superjson from 'superjson';
import { signIn } from './fixtures';

/**
 * The list views share one search box and one pager (components/ui): each search is a labelled
 * searchbox that narrows the list on the server once typing pauses, and each server-paginated list
 * pages with a navigation landmark "<list> pages" saying "Showing a–b of n".
 */

const PROJECT = 'globex-web';

/** An operator tRPC mutation through the signed-in page's session (as the console sends it). */
async function mutate(page: Page, path: string, input: unknown) {
  const res = await page.request.post(`/api/trpc/${path}`, {
    headers: { 'content-type': 'application/json', 'x-meridian-csrf': '1' },
    data: superjson.serialize(input),
  });
  expect(res.status(), await res.text()).toBe(200);
}

const searches: { list: string; path: string; box: string; text: string; rows: (page: Page) => Locator; prepare?: (page: Page) => Promise<void> }[] = [
  {
    list: 'operator projects',
    path: '/operator/projects',
    box: 'Search projects',
    text: PROJECT,
    rows: (page) =>
      page
        .getByRole('table')
        .getByRole('row')
        .filter({ has: page.getByRole('cell') }),
  },
  {
    list: 'fleet capacity',
    path: '/operator/fleet',
    box: 'Search devices',
    text: 'dev-ams1-c1large',
    rows: (page) => page.getByTestId('capacity-row'),
  },
  {
    list: 'quota buckets',
    path: '/operator/quota',
    box: 'Search buckets',
    text: PROJECT,
    rows: (page) => page.getByRole('list', { name: 'All buckets' }).getByRole('listitem'),
    prepare: (page) => page.getByRole('checkbox', { name: 'only ≥ 80 % or over' }).uncheck(),
  },
];

for (const s of searches) {
  test(`the ${s.list} search is a labelled search box that narrows the list on the server`, async ({ page }) => {
    await signIn(page, 'operator@example.com');
    await page.goto(s.path);
    await s.prepare?.(page);
    const rows = s.rows(page);
    await expect(rows.filter({ hasNotText: s.text }).first()).toBeVisible();

    await page.getByRole('searchbox', { name: s.box }).fill(s.text);
    await expect(rows.filter({ hasNotText: s.text })).toHaveCount(0);
    await expect(rows.first()).toContainText(s.text);
  });
}

const pagers: { list: string; path: string; nav: string; pageSize: number; prepare?: (page: Page) => Promise<void> }[] = [
  // The demo fleet has 30 devices.
  { list: 'fleet capacity', path: '/operator/fleet', nav: 'Capacity pages', pageSize: 25 },
  {
    list: 'quota grants',
    path: '/operator/quota',
    nav: 'Grants pages',
    pageSize: 25,
    prepare: async (page) => {
      // 26 grants of nothing (amount 0: the project's limits do not move), besides the project's default grant.
      const stamp = Date.now().toString(36);
      for (let i = 0; i < 26; i++) {
        await mutate(page, 'quota.admin.grants.create', {
          project: PROJECT,
          name: `e2e-pager-${stamp}-${i}`,
          allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 0 }],
        });
      }
      await page.getByLabel('Filter grants by project').fill(PROJECT);
      await page.getByRole('button', { name: 'Filter', exact: true }).click();
    },
  },
];

for (const p of pagers) {
  test(`the ${p.list} list pages with Previous and Next and says which rows it shows`, async ({ page }) => {
    await signIn(page, 'operator@example.com');
    await page.goto(p.path);
    await p.prepare?.(page);
    const nav = page.getByRole('navigation', { name: p.nav });
    await expect(nav).toContainText(new RegExp(`^Showing 1–${p.pageSize} of \\d+`));
    const total = Number(/of (\d+)/.exec((await nav.textContent()) ?? '')![1]);
    expect(total).toBeGreaterThan(p.pageSize);
    await expect(nav.getByRole('button', { name: 'Previous' })).toBeDisabled();

    await nav.getByRole('button', { name: 'Next' }).click();
    await expect(nav).toContainText(`Showing ${p.pageSize + 1}–${Math.min(total, 2 * p.pageSize)} of ${total}`);
    await expect(nav.getByRole('button', { name: 'Next' })).toBeEnabled({ enabled: total > 2 * p.pageSize });

    await nav.getByRole('button', { name: 'Previous' }).click();
    await expect(nav).toContainText(`Showing 1–${p.pageSize} of ${total}`);
  });
}
