import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * axe-core on every page each role can reach, signed out and signed in: no serious or critical
 * finding (WCAG 2.x A and AA rules). The pages are found by following the console's own links from
 * the start page (each route pattern once), so a page added later is checked without editing this
 * file.
 */
const roles = ['tenant@example.com', 'viewer@example.com', 'operator@example.com', 'qa@example.com', 'admin@example.com'];

/** One representative per route: `/projects/acme-prod/machines/web-1` and `…/web-2` are the same page. */
function routePattern(path: string): string {
  return path
    .replace(/^\/projects\/[^/]+/, '/projects/:project')
    .replace(/^\/organizations\/[^/]+/, '/organizations/:organization')
    .replace(/\/(machines|networks|users)\/[^/]+/, '/$1/:name')
    .replace(/\/$/, '');
}

/** The serious and critical findings of axe on the page as it is, one line each. */
async function seriousFindings(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 4)
          .join(', ')}`,
    );
}

test('the sign-in page has no serious or critical accessibility finding', async ({ page }) => {
  await page.goto('/sign-in');
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(await seriousFindings(page)).toEqual([]);
});

test('the not-found page has no serious or critical accessibility finding', async ({ page }) => {
  await signIn(page, 'tenant@example.com');
  await page.goto('/projects/no-such-project');
  await expect(page.getByRole('link', { name: /projects/i }).first()).toBeVisible();
  expect(await seriousFindings(page)).toEqual([]);
});

for (const email of roles) {
  test(`every page ${email} can reach has no serious or critical accessibility finding`, async ({ page }) => {
    test.setTimeout(300_000);
    await signIn(page, email);
    const seen = new Set<string>(['']);
    const queue = ['/'];
    const findings: string[] = [];
    const visited: string[] = [];
    while (queue.length > 0 && visited.length < 40) {
      const path = queue.shift()!;
      const response = await page.goto(path);
      expect(response?.status(), path).toBeLessThan(400);
      await expect(page.locator('main#main')).toBeVisible();
      await page.waitForLoadState('load');
      // Client queries render after hydration; let tables fill before checking them.
      await page.waitForTimeout(400);
      for (const f of await seriousFindings(page)) findings.push(`${path}: ${f}`);
      visited.push(new URL(page.url()).pathname);
      const links = await page.evaluate(() => Array.from(document.querySelectorAll('a[href]'), (a) => (a as HTMLAnchorElement).href));
      for (const href of links) {
        const url = new URL(href);
        if (url.origin !== new URL(page.url()).origin || url.pathname.startsWith('/api') || url.pathname.startsWith('/sign-in')) continue;
        const pattern = routePattern(url.pathname);
        if (seen.has(pattern)) continue;
        seen.add(pattern);
        queue.push(url.pathname);
      }
    }
    expect(visited.length).toBeGreaterThan(2);
    expect(findings).toEqual([]);
  });
}
