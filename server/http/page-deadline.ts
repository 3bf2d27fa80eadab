import type { ServerResponse } from 'node:http';
import { underDeadline } from '@/db/deadline';
import { DATABASE_RETRY_AFTER_SECONDS } from '@/server/errors';
import { watchingDatabase } from './database-watch';

/**
 * How often, from its deadline on, a render that has answered nothing is looked at: the deadline's
 * own failure (the session read's, a prefetch's) becomes Next's error page within moments, which
 * `serveWithinDeadline` turns into the 503 page; a render that has not got there by then is
 * answered for.
 */
const RENDER_GRACE_MS = 250;

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
 * - a render that fails because the database could not serve it (a failure noted while it ran:
 *   server/http/database-watch.ts; the session read and the tRPC procedures note theirs, their
 *   deadline's included) is answered 503 with Retry-After and a page that says so, not Next's 500
 *   page;
 * - a render that has answered nothing by the deadline while a database failure was noted is
 *   answered the same way within RENDER_GRACE_MS, and whatever it writes later is dropped (a
 *   stalled database never holds a page load). A render slow for any other reason (a busy CPU)
 *   is not cut off: a 503 would then blame a database that answered.
 */
export function serveWithinDeadline(res: ServerResponse, budgetMs: number, render: () => Promise<void>): Promise<void> {
  return underDeadline(budgetMs, (deadline) =>
    watchingDatabase((seen) => {
      const original = { writeHead: res.writeHead, write: res.write, end: res.end, flushHeaders: res.flushHeaders };
      let watchdog: NodeJS.Timeout | undefined;
      /** The database's failure, when one was noted and the status about to go out is a 5xx. */
      const failedForDatabase = (status: number) => (!res.headersSent && status >= 500 ? seen() : undefined);
      const answerUnavailable = (reason: string) => {
        clearTimeout(timer);
        clearInterval(watchdog);
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
        const reason = failedForDatabase(status);
        if (reason) {
          answerUnavailable(reason);
          return this;
        }
        return (original.writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest);
      } as ServerResponse['writeHead'];
      for (const method of ['write', 'end', 'flushHeaders'] as const) {
        const send = original[method] as (...args: unknown[]) => unknown;
        (res as unknown as Record<string, unknown>)[method] = function (this: ServerResponse, ...args: unknown[]) {
          const reason = failedForDatabase(res.statusCode);
          if (reason) {
            answerUnavailable(reason);
            return (res as unknown as Record<string, (...a: unknown[]) => unknown>)[method](...args);
          }
          return send.apply(this, args);
        };
      }
      const timer = setTimeout(
        () => {
          watchdog = setInterval(() => {
            const reason = seen();
            if (res.headersSent || res.writableEnded) clearInterval(watchdog);
            else if (reason) answerUnavailable(reason);
          }, RENDER_GRACE_MS);
        },
        Math.max(0, deadline.at - Date.now()),
      );
      res.once('close', () => {
        clearTimeout(timer);
        clearInterval(watchdog);
      });
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
