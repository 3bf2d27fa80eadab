import type { ServerResponse } from 'node:http';
import { underDeadline } from '@/db/deadline';
import { DATABASE_RETRY_AFTER_SECONDS } from '@/server/errors';
import { watchingDatabase } from './database-watch';

/**
 * How long past its deadline a render may take to answer before the front door answers for it: the
 * deadline's own failure (the session read's, a prefetch's) needs a moment to become Next's error
 * page, which `serveWithinDeadline` then turns into the 503 page.
 */
const RENDER_GRACE_MS = 300;

/** Headers of the front door's that stay on the 503 page; Next's are dropped with its answer. */
const KEPT_HEADERS = new Set(['content-security-policy', 'strict-transport-security']);

/** Paths Next serves that are not renders: route handlers (REST-like, streams, probes) and built assets. */
export function isPageRender(pathname: string): boolean {
  return !/^\/(api|_next)\//.test(pathname) && !['/metrics', '/readyz', '/healthz'].includes(pathname);
}

/**
 * Serves one page render (`render`: Next's handler) within the request deadline, `budgetMs`
 * (DB_REQUEST_TIMEOUT_MS, the budget REST and tRPC calls have):
 * - the render runs under that deadline (db/deadline.ts): the session read and every procedure it
 *   prefetches through give up by it, whatever the database is doing;
 * - a render that fails because the database could not serve it (a failure noted while it ran,
 *   server/http/database-watch.ts, or any 5xx once the deadline passed) is answered 503 with
 *   Retry-After and a page that says so, not Next's 500 page;
 * - a render that has answered nothing shortly after the deadline is answered the same way, and
 *   whatever it writes later is dropped (a stalled database never holds a page load).
 */
export function serveWithinDeadline(res: ServerResponse, budgetMs: number, render: () => Promise<void>): Promise<void> {
  return underDeadline(budgetMs, (deadline) =>
    watchingDatabase((seen) => {
      const original = { writeHead: res.writeHead, write: res.write, end: res.end, flushHeaders: res.flushHeaders };
      const deadlineReason = `the database did not answer within ${deadline.budgetMs} ms; retry shortly`;
      /** Whether the status about to go out is the database's failure (noted, or any 5xx once the deadline passed). */
      const failedForDatabase = (status: number) => !res.headersSent && status >= 500 && (seen() !== undefined || Date.now() >= deadline.at);
      const answerUnavailable = (reason: string) => {
        clearTimeout(timer);
        for (const name of res.getHeaderNames()) if (!KEPT_HEADERS.has(name)) res.removeHeader(name);
        original.writeHead.call(res, 503, {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-store',
          'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
        });
        (original.end as (chunk: string) => ServerResponse).call(res, unavailablePage(reason));
        dropLaterWrites(res);
      };
      // Next sends its status with writeHead, or sets statusCode and lets its first write or end send
      // it: both are looked at before they reach Node, never from inside Node's own write (which would
      // go on writing Next's body after this answer).
      res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
        if (failedForDatabase(status)) {
          answerUnavailable(seen() ?? deadlineReason);
          return this;
        }
        return (original.writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest);
      } as ServerResponse['writeHead'];
      for (const method of ['write', 'end', 'flushHeaders'] as const) {
        const send = original[method] as (...args: unknown[]) => unknown;
        (res as unknown as Record<string, unknown>)[method] = function (this: ServerResponse, ...args: unknown[]) {
          if (failedForDatabase(res.statusCode)) {
            answerUnavailable(seen() ?? deadlineReason);
            return (res as unknown as Record<string, (...a: unknown[]) => unknown>)[method](...args);
          }
          return send.apply(this, args);
        };
      }
      const timer = setTimeout(
        () => {
          if (!res.headersSent && !res.writableEnded)
            answerUnavailable(seen() ?? `the page could not be rendered within ${deadline.budgetMs} ms; retry shortly`);
        },
        Math.max(0, deadline.at - Date.now()) + RENDER_GRACE_MS,
      );
      res.once('close', () => clearTimeout(timer));
      return render();
    }),
  );
}

/** After the 503 page is out: what the abandoned render still writes goes nowhere (its callbacks still run). */
function dropLaterWrites(res: ServerResponse) {
  const callbackOf = (args: unknown[]) => args.find((a): a is () => void => typeof a === 'function');
  res.writeHead = (() => res) as ServerResponse['writeHead'];
  res.setHeader = (() => res) as ServerResponse['setHeader'];
  res.flushHeaders = () => {};
  res.write = ((...args: unknown[]) => {
    const cb = callbackOf(args);
    if (cb) process.nextTick(cb);
    return true;
  }) as ServerResponse['write'];
  res.end = ((...args: unknown[]) => {
    const cb = callbackOf(args);
    if (cb) process.nextTick(cb);
    return res;
  }) as ServerResponse['end'];
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page a browser gets while the database cannot serve: no script, no style (the page's policy allows neither inline). */
function unavailablePage(reason: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta http-equiv="refresh" content="5"><title>Database unavailable · Meridian</title></head>
<body>
<main>
<h1>Meridian cannot reach its database</h1>
<p>${escapeHtml(reason)}.</p>
<p>This page reloads itself in a few seconds; once the database answers again, it shows what you asked for.</p>
</main>
</body>
</html>
`;
}
