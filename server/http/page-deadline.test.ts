/**
 * The page deadline over real HTTP, with page handlers in Next's place that behave as a render does
 * when the database stalls or fails: whatever they do, the browser has an answer by the deadline,
 * a 503 page with Retry-After, when the database is why; a render slow for another reason is left
 * to finish.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, describe, expect, test } from 'vitest';
import { currentDeadline, withDeadline } from '@/db/deadline';
import { noteDatabaseFailure, notingDatabaseFailure } from './database-watch';
import { isPageRender, serveWithinDeadline } from './page-deadline';

const BUDGET_MS = 600;
const SLACK_MS = 700;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const servers: Server[] = [];

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** A server whose every request is `render`, served within BUDGET_MS; answers how long it took. */
async function serve(render: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server = createServer((req, res) => {
    res.setHeader('content-security-policy', "default-src 'self'");
    void serveWithinDeadline(res, BUDGET_MS, () => render(req, res)).catch(() => {});
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${port}/projects`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, headers: res.headers, body: await res.text(), ms: Date.now() - started };
}

describe('a page render within the request deadline', () => {
  test('a render whose database read gave up and that answers nothing: a 503 page with Retry-After shortly after the deadline; what it writes later goes nowhere', async () => {
    let lateWrite: Promise<void> | undefined;
    const answer = await serve(async (_req, res) => {
      // As a prefetch through a procedure (server/trpc/init.ts): its read gives up at the deadline
      // and notes why; the render goes on waiting for something else.
      await notingDatabaseFailure(() => withDeadline(60_000, () => sleep(60_000))).catch(() => {});
      await sleep(1_000);
      lateWrite = (async () => {
        res.setHeader('x-late', '1');
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('late page');
      })();
    });
    expect(answer.ms).toBeLessThan(BUDGET_MS + SLACK_MS);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('2');
    expect(answer.headers.get('content-security-policy')).toBe("default-src 'self'");
    expect(answer.body).toContain('cannot reach its database');
    expect(answer.body).toContain(`within ${BUDGET_MS} ms`);
    await sleep(1_200);
    await expect(lateWrite).resolves.toBeUndefined();
  });

  test('a render slow for another reason (no database read failed) is not cut off at the deadline', async () => {
    const answer = await serve(async (_req, res) => {
      await sleep(BUDGET_MS + 500);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('the page, late');
    });
    expect([answer.status, answer.body]).toEqual([200, 'the page, late']);
  });

  test("a render whose database read gives up at the deadline: Next's 500 becomes the 503 page", async () => {
    const answer = await serve(async (_req, res) => {
      // As currentSession: the read runs within the request's deadline, which the front door set.
      expect(currentDeadline()?.budgetMs).toBe(BUDGET_MS);
      try {
        await notingDatabaseFailure(() => withDeadline(60_000, () => sleep(60_000)));
      } catch {
        res.setHeader('set-cookie', 'leaked=1');
        res.writeHead(500, { 'content-type': 'text/html' });
        res.end('Internal Server Error');
      }
    });
    expect(answer.ms).toBeLessThan(BUDGET_MS + SLACK_MS);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('set-cookie')).toBeNull();
    expect(answer.body).toContain('did not answer within');
  });

  test('a render that failed at once on a database that refuses connections: 503 at once, with the reason', async () => {
    const answer = await serve(async (_req, res) => {
      noteDatabaseFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      res.statusCode = 500;
      res.end('Internal Server Error');
    });
    expect(answer.ms).toBeLessThan(BUDGET_MS);
    expect(answer.status).toBe(503);
    expect(answer.body).toContain('the database is unreachable');
  });

  test("a render that answers in time, and a 500 that is not the database's, are left as they are", async () => {
    const ok = await serve(async (_req, res) => {
      await sleep(50);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('the page');
    });
    expect([ok.status, ok.body]).toEqual([200, 'the page']);
    const broken = await serve(async (_req, res) => {
      res.writeHead(500);
      res.end('a bug');
    });
    expect([broken.status, broken.body]).toEqual([500, 'a bug']);
  });
});

test.each([
  ['/projects/acme/networks', true],
  ['/', true],
  ['/sign-in', true],
  ['/api/auth/session', false],
  ['/api/trpc/projects.list', false],
  ['/api/live', false],
  ['/_next/static/chunks/app.js', false],
  ['/readyz', false],
  ['/healthz', false],
  ['/metrics', false],
])('%s is a page render: %s', (path, page) => {
  expect(isPageRender(path)).toBe(page);
});
