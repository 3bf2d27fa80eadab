/**
 * The web process's edge, in the real app (`npm start`, bound to 0.0.0.0 as by default):
 * - pages carry a Content-Security-Policy whose script-src is a fresh nonce without
 *   'unsafe-inline', Next's scripts carry the nonce, nothing is refused and the page hydrates;
 * - sign-in and sign-out send the browser to the host it asked for, never to the bound 0.0.0.0;
 * - sign-in and tRPC bodies are bounded like REST's (413, reading stops at the limit), and so are
 *   pages': 50 MB declared is 413 before any is read, 50 MB streamed is never read to its end;
 * - a session holds at most 8 live-update streams, and a closed one frees its slot;
 * - `/metrics` is closed to anonymous callers; `npm start` put its token in the data directory.
 */
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { expect, test, type BrowserContext } from '@playwright/test';
import { demoPassword, signIn } from './fixtures';

const scriptSrc = (policy: string) =>
  policy
    .split(';')
    .map((d) => d.trim())
    .find((d) => d.startsWith('script-src')) ?? '';

async function cookieHeader(context: BrowserContext): Promise<string> {
  return (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
}

test('a signed-in page has a nonce CSP without unsafe-inline scripts, reports no violation, and is interactive', async ({ page, baseURL }) => {
  const refused: string[] = [];
  page.on('console', (m) => {
    if (/content security policy|refused to/i.test(m.text())) refused.push(m.text());
  });
  page.on('pageerror', (e) => refused.push(`page error: ${e.message}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`));
  });
  await signIn(page, 'tenant@example.com');

  const responses = [await page.goto('/projects'), await page.goto('/projects')];
  const policies = responses.map((r) => r!.headers()['content-security-policy'] ?? '');
  for (const policy of policies) {
    expect(scriptSrc(policy)).toMatch(/'nonce-[A-Za-z0-9+/=]+'/);
    expect(scriptSrc(policy)).not.toContain("'unsafe-inline'");
  }
  expect(policies[0]).not.toBe(policies[1]);
  // Next's inline scripts carry this response's nonce.
  const nonce = /'nonce-([^']+)'/.exec(policies[1])![1];
  const html = await responses[1]!.text();
  expect(html).toContain(`nonce="${nonce}"`);
  expect(html.match(/<script(?![^>]*\bnonce=)[^>]*>/g) ?? []).toEqual([]);

  // Interactive: the header's button works only once React has hydrated; it signs out.
  await expect(page.getByTestId('current-user')).toHaveText(/tenant@example.com/);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(`${baseURL}/sign-in`);
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(refused).toEqual([]);
});

test('sign-in and sign-out redirect to the host the browser asked for, not the bound 0.0.0.0', async ({ page, baseURL }) => {
  const csrf = (await (await page.request.get('/api/auth/csrf')).json()).csrfToken as string;
  const signedIn = await page.request.post('/api/auth/callback/credentials', {
    form: { email: 'viewer@example.com', password: demoPassword, csrfToken: csrf, callbackUrl: '/projects' },
    maxRedirects: 0,
  });
  expect(signedIn.status()).toBe(302);
  expect(signedIn.headers().location).toBe(`${baseURL}/projects`);

  // What next-auth's client does on "Sign out" (it follows `url`).
  const signedOut = await page.request.post('/api/auth/signout', {
    form: { csrfToken: csrf, callbackUrl: '/sign-in' },
    headers: { 'x-auth-return-redirect': '1' },
  });
  expect(signedOut.status()).toBe(200);
  expect((await signedOut.json()).url).toBe(`${baseURL}/sign-in`);

  // Another name for the same server (as a DNS name or proxy would give) is kept as asked.
  const cookie = await cookieHeader(page.context());
  const url = new URL(baseURL!);
  const viaName = await new Promise<string>((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/api/auth/signout',
        headers: { host: 'console.example.com', cookie, 'x-auth-return-redirect': '1', 'content-type': 'application/x-www-form-urlencoded' },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve(body));
      },
    );
    req.on('error', reject);
    req.end(new URLSearchParams({ csrfToken: csrf, callbackUrl: '/sign-in' }).toString());
  });
  expect(JSON.parse(viaName).url).toBe('http://console.example.com/sign-in');
});

test('sign-in and tRPC bodies over 64 KiB are 413 with a clear JSON body', async ({ page }) => {
  const big = 'x'.repeat(100 * 1024);
  const signInPost = await page.request.post('/api/auth/callback/credentials', { form: { email: 'viewer@example.com', password: big }, maxRedirects: 0 });
  expect(signInPost.status()).toBe(413);
  expect(await signInPost.json()).toEqual({ error: { code: 'PayloadTooLarge', message: 'body exceeds 65536 bytes', field: 'body' } });

  await signIn(page, 'viewer@example.com');
  const trpcPost = await page.request.post('/api/trpc/sessions.revokeAll', {
    headers: { 'content-type': 'application/json', 'x-meridian-csrf': '1' },
    data: JSON.stringify({ json: { userId: big } }),
  });
  expect(trpcPost.status()).toBe(413);
  expect((await trpcPost.json()).error.json).toMatchObject({ message: 'body exceeds 65536 bytes', data: { domainCode: 'PayloadTooLarge', field: 'body' } });

  const batch = Array.from({ length: 17 }, () => 'projects.list').join(',');
  const tooMany = await page.request.get(`/api/trpc/${batch}?batch=1&input={}`);
  expect(tooMany.status()).toBe(400);
  expect((await tooMany.json()).error.json.message).toBe('a batch may carry at most 16 calls; this one has 17');
});

test('a 20 MB sign-in body streamed without a length is refused at the limit, not read to the end', async ({ baseURL }) => {
  const url = new URL(baseURL!);
  const total = 20 * 1024 * 1024;
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let written = 0;
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/api/auth/callback/credentials',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        req.destroy();
      },
    );
    req.on('error', (e) => (written >= total ? reject(e) : undefined));
    const pump = () => {
      while (written < total) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  console.log(`413 after ${(written / 1024 / 1024).toFixed(1)} MiB handed to the socket`);
  expect(status).toBe(413);
  expect(written).toBeLessThan(total);
});

test('a session holds at most 8 live-update streams: the 9th is 429 with Retry-After; closing one frees its slot', async ({ page, context, baseURL }) => {
  await signIn(page, 'operator@example.com');
  const cookie = await cookieHeader(context);
  const url = new URL(baseURL!);
  const open = () =>
    new Promise<{ status: number; retryAfter?: string; req: http.ClientRequest; res: http.IncomingMessage }>((resolve, reject) => {
      const req = http.get({ host: url.hostname, port: url.port, path: '/api/live', headers: { cookie, accept: 'text/event-stream' } }, (res) => {
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], req, res });
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
    });
  const streams = [];
  for (let i = 0; i < 8; i++) streams.push(await open());
  try {
    expect(streams.map((s) => s.status)).toEqual(Array(8).fill(200));
    const ninth = await open();
    expect(ninth.status).toBe(429);
    expect(ninth.retryAfter).toBe('10');
    ninth.res.resume();

    // Another session of the same user has its own slots.
    const other = await context.browser()!.newContext({ baseURL });
    const otherPage = await other.newPage();
    await signIn(otherPage, 'operator@example.com');
    const otherCookie = await cookieHeader(other);
    const otherStream = await new Promise<http.IncomingMessage>((resolve) => {
      http.get({ host: url.hostname, port: url.port, path: '/api/live', headers: { cookie: otherCookie } }, resolve);
    });
    expect(otherStream.statusCode).toBe(200);
    otherStream.destroy();
    await other.close();

    // Closing a stream (the browser going away) frees its slot.
    streams.shift()!.req.destroy();
    await expect
      .poll(async () => {
        const next = await open();
        if (next.status === 200) streams.push(next);
        else next.res.resume();
        return next.status;
      })
      .toBe(200);
    const again = await open();
    expect(again.status).toBe(429);
    again.res.resume();
  } finally {
    for (const s of streams) s.req.destroy();
  }
});

test('/metrics answers only the token npm start generated into the data directory (0600), with the tenant-labelled gauges', async ({ request }) => {
  const anonymous = await request.get('/metrics');
  expect(anonymous.status()).toBe(401);
  expect(anonymous.headers()['www-authenticate']).toBe('Bearer realm="metrics"');
  expect(await anonymous.text()).not.toContain('meridian_pool_capacity_addresses{');

  const file = path.join(process.env.E2E_DATA_DIR!, 'metrics-token');
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  const token = (await readFile(file, 'utf8')).trim();
  expect((await request.get('/metrics', { headers: { authorization: 'Bearer not-the-token-0123456789' } })).status()).toBe(401);
  const scraped = await request.get('/metrics', { headers: { authorization: `Bearer ${token}` } });
  expect(scraped.status()).toBe(200);
  expect(await scraped.text()).toMatch(/meridian_bucket_limit\{project="acme-prod"/);
});

/**
 * Pushes 50 MB to `path` over a raw connection (declared, or chunked without a length) for at most
 * 5 s and reports the answer's status line and how much the client could hand to its socket.
 */
function push50MB(baseURL: string, path: string, declared: boolean) {
  const url = new URL(baseURL);
  const total = 50 * 1024 * 1024;
  return new Promise<{ status: string; written: number; total: number }>((resolve) => {
    // The web process listens on 0.0.0.0: IPv4 loopback, whatever `localhost` resolves to first.
    const socket = net.connect(Number(url.port), '127.0.0.1');
    let answer = '';
    let written = 0;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ status: answer.split('\r\n')[0], written, total });
    };
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => setTimeout(settle, 200));
    socket.on('close', () => setTimeout(settle, 200));
    setTimeout(settle, 5_000);
    socket.once('connect', () => {
      const length = declared ? `Content-Length: ${total}` : 'Transfer-Encoding: chunked';
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-www-form-urlencoded\r\n${length}\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const framed = declared ? chunk : Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      const pump = () => {
        while (written < total && !socket.destroyed) {
          written += chunk.length;
          if (!socket.write(framed)) return void socket.once('drain', pump);
        }
        if (!declared && !socket.destroyed) socket.write('0\r\n\r\n');
      };
      pump();
    });
  });
}

for (const path of ['/api/auth/callback/credentials', '/sign-in', '/projects']) {
  test(`50 MB to ${path}: declared is 413 before any is read, streamed is cut off at the limit`, async ({ baseURL }) => {
    const declared = await push50MB(baseURL!, path, true);
    console.log(`${path} declared: ${declared.status}; ${(declared.written / 2 ** 20).toFixed(1)} MiB handed to the socket`);
    expect(declared.status).toBe('HTTP/1.1 413 Payload Too Large');
    expect(declared.written).toBeLessThan(declared.total / 2);

    const streamed = await push50MB(baseURL!, path, false);
    console.log(`${path} streamed: ${streamed.status}; ${(streamed.written / 2 ** 20).toFixed(1)} MiB handed to the socket`);
    if (path.startsWith('/api/auth/')) expect(streamed.status).toBe('HTTP/1.1 413 Payload Too Large');
    else expect(streamed.status).toMatch(/^HTTP\/1\.1 \d{3}/);
    expect(streamed.written).toBeLessThan(streamed.total / 2);
  });
}
