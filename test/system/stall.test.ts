/**
 * One web process's database stalls (its connections go through a TCP proxy that stops forwarding,
 * test/tcp-proxy.ts: queries get no answer, new connections no handshake) for 16 s, while the
 * worker and the test reach the database directly. Whatever a browser or a load balancer asks of
 * that process answers within the request deadline (DB_REQUEST_TIMEOUT_MS) — pages and auth
 * routes included, not only REST and tRPC data calls:
 * - a signed-in console page, the sign-in page of a signed-in browser, `/api/auth/session` and a
 *   credentials sign-in: 503 with Retry-After, in two waves (at the stall's start, and midway, when
 *   the first wave's stalled statements hold the pool's connections);
 * - the sign-in page without a session: the form, as ever;
 * - `/readyz`: 503 within its check budget, naming the database check, every time it is asked
 *   during the stall (never a late "ok"); `/healthz`: 200, as it never touches the database.
 * Afterwards the process serves again, and the browser is still signed in: a stall is not a
 * sign-out.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createUser } from '@/server/tenancy/users';
import { TcpProxy } from '@/test/tcp-proxy';
import { freshDatabase, startSystem, type System } from './harness';

const REQUEST_BUDGET_MS = 5_000;
/** What an answer may take beyond its budget: its own way back on a busy machine. */
const ANSWER_SLACK_MS = 1_500;
/** `/readyz` gives each check at most 1 s at this request budget (server/observability/readiness.ts). */
const READYZ_LIMIT_MS = 1_000 + 1_000;
const STALL_MS = 16_000;
const PASSWORD = 'stall-test-password';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let system: System;
let proxy: TcpProxy;
let base: string;
let email: string;

/** The cookies one browser holds. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  has(prefix: string): boolean {
    return [...this.cookies.keys()].some((k) => k.includes(prefix));
  }
}

interface Answer {
  what: string;
  status: number;
  ms: number;
  retryAfter: string | null;
  setCookie: string[];
  body: string;
}

/** One request to the web process, timed; a client-side limit far beyond the stall, so a hang shows as its length. */
async function call(
  what: string,
  path: string,
  options: { jar?: Jar; method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`${base}${path}`, {
    method: options.method ?? 'GET',
    redirect: 'manual',
    headers: {
      ...(options.jar ? { cookie: options.jar.header() } : {}),
      ...(options.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...options.headers,
    },
    body: options.form ? new URLSearchParams(options.form).toString() : undefined,
    signal: AbortSignal.timeout(STALL_MS + 30_000),
  }).catch((e: unknown) => e as Error);
  if (res instanceof Error) return { what, status: 0, ms: Date.now() - started, retryAfter: null, setCookie: [], body: String(res) };
  const body = await res.text();
  options.jar?.take(res);
  return { what, status: res.status, ms: Date.now() - started, retryAfter: res.headers.get('retry-after'), setCookie: res.headers.getSetCookie(), body };
}

/** A browser that fetched a CSRF token (no database involved), ready to post the sign-in form. */
async function signInForm(): Promise<{ jar: Jar; csrfToken: string }> {
  const jar = new Jar();
  const { csrfToken } = JSON.parse((await call('csrf', '/api/auth/csrf', { jar })).body) as { csrfToken: string };
  return { jar, csrfToken };
}

function postSignIn(form: { jar: Jar; csrfToken: string }) {
  return call('credentials sign-in', '/api/auth/callback/credentials', {
    jar: form.jar,
    method: 'POST',
    form: { email, password: PASSWORD, csrfToken: form.csrfToken, callbackUrl: '/' },
    // As next-auth/react's signIn posts it: the answer is JSON naming where to go.
    headers: { 'x-auth-return-redirect': '1' },
  });
}

beforeAll(async () => {
  const database = await freshDatabase();
  const target = new URL(database.appUrl ?? database.url);
  proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
  const proxied = new URL(target);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  system = await startSystem({
    webs: 1,
    workers: 1,
    database,
    env: { DB_REQUEST_TIMEOUT_MS: String(REQUEST_BUDGET_MS) },
    webEnv: { DATABASE_URL: proxied.toString() },
  });
  base = system.webBases[0];
  email = `stall-${Date.now()}@example.com`;
  await createUser(system.db, { email, name: 'Stall test', password: PASSWORD, createdVia: 'admin', emailVerifiedBy: 'admin' }, systemActor('stall test'));
}, 300_000);

afterAll(async () => {
  proxy?.resume();
  await system?.stop();
  await proxy?.close();
}, 60_000);

test('pages, auth routes and probes answer within the deadline while the database stalls; the browser stays signed in', async () => {
  const browser = await signInForm();
  const signedIn = await postSignIn(browser);
  expect(signedIn.status, signedIn.body).toBe(200);
  expect(browser.jar.has('session-token')).toBe(true);
  // Before the stall: all is well (the worker's heartbeat makes /readyz ok).
  expect((await call('page', '/projects', { jar: browser.jar })).status).toBe(200);
  expect(JSON.parse((await call('session', '/api/auth/session', { jar: browser.jar })).body)?.user?.email).toBe(email);
  let ready = await call('readyz', '/readyz');
  for (let i = 0; i < 40 && ready.status !== 200; i++) {
    await sleep(500);
    ready = await call('readyz', '/readyz');
  }
  expect(ready.status, ready.body).toBe(200);

  const stalledAt = Date.now();
  proxy.stall();
  let resumedAt = 0;
  const resumed = sleep(STALL_MS).then(() => {
    proxy.resume();
    resumedAt = Date.now();
  });
  const probes: Promise<Answer>[] = [];
  let probing = true;
  const probeLoop = (async () => {
    while (probing) {
      probes.push(call('readyz', '/readyz'));
      probes.push(call('healthz', '/healthz'));
      await sleep(1_000);
    }
  })();
  const wave = async () => {
    const form = await signInForm();
    return Promise.all([
      call('signed-in console page', '/projects', { jar: browser.jar }),
      call('signed-in home', '/', { jar: browser.jar }),
      call('sign-in page, signed in', '/sign-in', { jar: browser.jar }),
      call('session', '/api/auth/session', { jar: browser.jar }),
      postSignIn(form),
      call('sign-in page, signed out', '/sign-in'),
    ]);
  };
  await sleep(500);
  const first = wave();
  await sleep(7_500);
  const second = wave();
  await sleep(Math.max(0, STALL_MS - 1_500 - (Date.now() - stalledAt)));
  probing = false;
  const answers = [...(await first), ...(await second)];
  await probeLoop;
  const probeAnswers = await Promise.all(probes);
  await resumed;

  const summary = [...answers, ...probeAnswers].map((a) => `${a.what}: ${a.status} in ${a.ms} ms`).join('\n');
  process.stdout.write(`stall answers:\n${summary}\n`);
  for (const a of answers) {
    expect(a.ms, `${a.what} answered within the deadline\n${summary}`).toBeLessThan(REQUEST_BUDGET_MS + ANSWER_SLACK_MS);
    if (a.what === 'sign-in page, signed out') {
      expect(a.status, a.what).toBe(200);
      continue;
    }
    expect(a.status, `${a.what}: ${a.body.slice(0, 300)}`).toBe(503);
    expect(a.retryAfter, a.what).toBe('2');
    // The stall is not a sign-out: nothing clears the session cookie.
    expect(
      a.setCookie.filter((c) => c.includes('session-token')),
      a.what,
    ).toEqual([]);
    if (a.what === 'session' || a.what === 'credentials sign-in') {
      expect(JSON.parse(a.body).error.code, a.what).toBe('DatabaseUnavailable');
    } else {
      expect(a.body, a.what).toContain('cannot reach its database');
    }
  }
  expect(answers.find((a) => a.what === 'credentials sign-in')?.body).toContain('error=DatabaseUnavailable');

  const readyz = probeAnswers.filter((a) => a.what === 'readyz');
  expect(readyz.length).toBeGreaterThan(10);
  for (const a of readyz) {
    expect(a.ms, `readyz answered within its check budget\n${summary}`).toBeLessThan(READYZ_LIMIT_MS);
    expect(a.status, a.body).toBe(503);
    const report = JSON.parse(a.body) as { dependencies: { name: string; status: string; detail: string }[] };
    expect(report.dependencies.find((d) => d.name === 'database')).toMatchObject({ status: 'failing', detail: expect.stringMatching(/within \d+ ms/) });
  }
  for (const a of probeAnswers.filter((p) => p.what === 'healthz')) {
    expect(a.status).toBe(200);
    expect(a.ms).toBeLessThan(1_000);
  }

  // After the stall: ready again, and the same browser is still signed in.
  let after = await call('readyz', '/readyz');
  while (after.status !== 200 && Date.now() - resumedAt < 20_000) {
    await sleep(500);
    after = await call('readyz', '/readyz');
  }
  expect(after.status, after.body).toBe(200);
  expect(JSON.parse((await call('session', '/api/auth/session', { jar: browser.jar })).body)?.user?.email).toBe(email);
  expect((await call('page', '/projects', { jar: browser.jar })).status).toBe(200);
}, 120_000);
