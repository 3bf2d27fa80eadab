import { expect, test, type Page } from '@playwright/test';
import { signIn } from './fixtures';

/**
 * Every page of every role at a phone's width (the `phone-*` projects in playwright.config.ts set
 * the viewport): the page itself never scrolls sideways — wide tables scroll inside their card —
 * and the navigation, Sessions and Sign out are reachable through the Menu button. Tenants' pages
 * never show an API type name.
 *
 * The pages are found by following the console's own links from the start page (each route
 * pattern once), so a page added later is visited without editing this file.
 */
const roles = ['tenant@example.com', 'viewer@example.com', 'operator@example.com', 'qa@example.com', 'admin@example.com'];
/** Roles without a platform role: they see the console as a tenant does. */
const tenantRoles = ['tenant@example.com', 'viewer@example.com'];
const stamp = Date.now().toString(36);

/** One representative per route: `/projects/acme-prod/machines/web-1` and `…/web-2` are the same page. */
function routePattern(path: string): string {
  return path
    .replace(/^\/projects\/[^/]+/, '/projects/:project')
    .replace(/\/(machines|networks|users)\/[^/]+/, '/$1/:name')
    .replace(/\/$/, '');
}

/** The elements that stick out past the right edge of the viewport, for the failure message. */
async function overflowingElements(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const out: string[] = [];
    for (const el of Array.from(document.body.querySelectorAll<HTMLElement>('*'))) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.right <= width + 1) continue;
      // Report the outermost offender only: skip children of an already reported element.
      const parent = el.parentElement;
      if (parent && parent.getBoundingClientRect().right > width + 1) continue;
      out.push(
        `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}.${String(el.className).slice(0, 80)} right=${Math.round(r.right)} "${(el.textContent ?? '').trim().slice(0, 60)}"`,
      );
    }
    return out.slice(0, 8);
  });
}

async function expectNoHorizontalOverflow(page: Page, path: string) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  const detail = scrollWidth > innerWidth ? (await overflowingElements(page)).join('\n  ') : '';
  expect(scrollWidth, `${path} is ${scrollWidth} px wide in a ${innerWidth} px window:\n  ${detail}`).toBeLessThanOrEqual(innerWidth);
}

test.describe.serial('phone viewport', () => {
  test('a tenant creates a network and requests a machine from a phone', async ({ page }) => {
    await signIn(page, 'tenant@example.com');
    await page.goto('/projects/acme-prod/networks');
    // Each phone project makes its own network and machine (one range each: roots of a project may not overlap).
    const narrow = test.info().project.name === 'phone-360';
    const tag = `${narrow ? 360 : 390}-${stamp}`;
    const network = `phone-vpc-${tag}`;
    await page.getByLabel('Name', { exact: true }).fill(network);
    await page.getByLabel('Root CIDR', { exact: true }).fill(narrow ? '203.0.113.128/25' : '203.0.113.0/25');
    await page.getByRole('button', { name: 'Create network' }).click();
    await expect(page).toHaveURL(new RegExp(`/networks/${network}$`));
    await page.getByLabel('Claim name').fill(`phone-claim-${tag}`);
    await page.getByLabel('Prefix length', { exact: true }).fill('28');
    await page.getByRole('button', { name: 'Create claim' }).click();
    await expect(page.getByRole('table', { name: 'Claims' }).getByRole('row', { name: new RegExp(`phone-claim-${tag}`) })).toBeVisible();
    await expectNoHorizontalOverflow(page, page.url());
    // Every range of the utilization chart is on screen whole (the picker wraps below its caption) and works.
    const picker = page.getByRole('group', { name: 'Time range' }).first();
    await picker.scrollIntoViewIfNeeded();
    for (const r of ['1h', '24h', '7d', '30d', '90d', '3y']) await expect(picker.getByRole('button', { name: r, exact: true })).toBeInViewport({ ratio: 1 });
    await picker.getByRole('button', { name: '3y', exact: true }).click();
    await expect(picker.getByRole('button', { name: '3y', exact: true })).toHaveAttribute('aria-pressed', 'true');

    await page.goto('/projects/acme-prod/machines');
    const form = page.getByRole('form', { name: 'Request a machine' });
    if (!(await form.isVisible())) await page.getByRole('button', { name: 'Request a machine' }).click();
    const machine = `phone-m-${tag}`;
    await form.getByLabel('Name', { exact: true }).fill(machine);
    await form.getByLabel('Class', { exact: true }).selectOption('c1.small');
    await form.getByLabel('Profile', { exact: true }).selectOption('ubuntu-24.04');
    await form.getByLabel('Location', { exact: true }).selectOption('ams1');
    await expectNoHorizontalOverflow(page, page.url());
    await form.getByRole('button', { name: 'Request machine' }).click();
    await expect(page).toHaveURL(new RegExp(`/machines/${machine}$`));
  });

  test('the Menu button opens the navigation, and Sign out is on screen', async ({ page }) => {
    await signIn(page, 'operator@example.com');
    await page.goto('/projects');
    // The sidebar is hidden at this width; the Menu button shows the same links.
    await expect(page.getByRole('navigation', { name: 'Main' })).toBeHidden();
    const menu = page.getByRole('button', { name: 'Menu' });
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await menu.click();
    const nav = page.getByRole('navigation', { name: 'Menu' });
    await expect(nav.getByRole('link', { name: 'Allocation queue' })).toBeInViewport();
    await nav.getByRole('link', { name: 'Fleet', exact: true }).click();
    await expect(page).toHaveURL(/\/operator\/fleet$/);
    await expect(page.getByRole('navigation', { name: 'Menu' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeInViewport();
    await expect(page.getByRole('link', { name: 'Sessions' })).toBeInViewport();
  });

  for (const email of roles) {
    test(`every page ${email} can reach fits the screen`, async ({ page }) => {
      test.setTimeout(240_000);
      await signIn(page, email);
      const seen = new Set<string>(['']);
      const queue = ['/'];
      const visited: string[] = [];
      while (queue.length > 0 && visited.length < 40) {
        const path = queue.shift()!;
        const response = await page.goto(path);
        expect(response?.status(), path).toBeLessThan(400);
        await expect(page.locator('main#main')).toBeVisible();
        await page.waitForLoadState('load');
        // Client queries render after hydration; give them a moment to fill tables.
        await page.waitForTimeout(400);
        await expectNoHorizontalOverflow(page, path);
        // Tenants read what things are, never the API's type names (`ipam.miloapis.com/ipclaims`).
        if (tenantRoles.includes(email)) expect(await page.locator('body').innerText(), path).not.toMatch(/\b[\w.-]+\.(miloapis|datumapis)\.com\//);
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
      test.info().annotations.push({ type: 'pages', description: visited.join(' ') });
    });
  }
});
