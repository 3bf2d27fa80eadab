/**
 * The web process's front door (what bin/web.ts serves every request through), over real HTTP with
 * the real REST v1 server behind it and, in Next's place, a page handler that echoes the request's
 * Content-Security-Policy:
 * - thousands of made-up paths add no label set to the latency histogram, and the heap stays flat;
 * - HSTS only over https: a trusted proxy's `X-Forwarded-Proto: https`, never an untrusted one's;
 * - a connection whose body a handler stopped reading delivers the answer, then ends, unread;
 * - pages get a policy with a fresh script nonce, the same on the request Next renders and on the
 *   response, whatever the client sent; REST answers keep the fixed policy.
 */
import { apiTable } from '@/server/api/routes';
import { createServer, request, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { metrics } from '@/server/observability/metrics';
// The REST handlers use the process-wide pool, which the test database module configures.
import '@/test/db';
import { createApiServer } from './api-server';
import { parseTrustedProxies } from '@/lib/trusted-proxies';
import { createFrontDoor } from './front-door';
import { RateLimiter } from './rate-limit';
import { HSTS } from './security-headers';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const agent = new Agent({ keepAlive: true, maxSockets: 16 });
const servers: Server[] = [];

/** A page handler in Next's place: answers with the policy the request carried. */
async function echoPolicy(req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ policy: req.headers['content-security-policy'] ?? null }));
}

/** A front door on a loopback port; `trusted` is its TRUSTED_PROXIES. */
async function frontDoor(trusted: string, next = echoPolicy): Promise<number> {
  const api = createApiServer(apiTable);
  const server = createServer(
    createFrontDoor({ api, next, trustedProxies: parseTrustedProxies(trusted), signInLimiter: new RateLimiter(100, 100), requestBudgetMs: 5_000 }),
  );
  server.keepAliveTimeout = 65_000; // as bin/web.ts
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

function get(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: IncomingMessage['headers']; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

let port = 0;
beforeAll(async () => {
  port = await frontDoor('');
});

afterAll(async () => {
  agent.destroy();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

/** The distinct `route` labels of the latency histogram so far. */
async function routeLabels(): Promise<Set<string>> {
  const { values } = await metrics().httpDuration.get();
  return new Set(values.map((v) => String(v.labels.route)));
}

describe('request metrics', () => {
  test('5,000 made-up paths add no label set: REST routes by their pattern, the rest by a fixed set; the heap stays flat', async () => {
    // Known routes, matched or not, through the real REST server and the page handler.
    expect((await get(port, '/api/v1/projects/demo/ipclaims')).status).toBe(401);
    expect((await get(port, '/api/v1/whoami')).status).toBe(401);
    expect((await get(port, '/projects/demo')).status).toBe(200);
    const before = await routeLabels();
    expect(before).toEqual(new Set(['/api/v1/projects/{project}/ipclaims', '/api/v1/whoami', '(pages)']));

    const textBefore = (await metrics().registry.metrics()).length;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const paths = (i: number) => [
      `/api/v1/${i}-${Math.random().toString(36).slice(2)}`,
      `/api/v1/projects/p${i}/made-up-${i}/x`,
      `/made-up-page-${i}`,
      `/api/something-${i}`,
      `/_next/static/chunks/${i}.js`,
    ];
    const total = 5_000;
    for (let i = 0; i < total; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => get(port, paths(i + j)[(i + j) % 5])));
    }
    gc();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    const textGrowth = (await metrics().registry.metrics()).length - textBefore;
    console.log(`after ${total} made-up paths: heapUsed ${(heapGrowth / 1024 / 1024).toFixed(1)} MiB more, /metrics text ${textGrowth} bytes more`);

    const after = await routeLabels();
    expect([...after].sort()).toEqual([...before, 'unmatched', '/api/(other)', '/_next'].sort());
    // A few new label sets (statuses 404, 200 for the new labels), each ~15 lines, not thousands.
    expect(textGrowth).toBeLessThan(20_000);
    // Each retained label set costs kilobytes: thousands of them would be many MiB.
    expect(heapGrowth).toBeLessThan(16 * 1024 * 1024);
  });

  test('a method the app does not serve is labelled OTHER', async () => {
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/x', method: 'PROPFIND', agent }, (res) => res.resume().on('end', resolve));
      req.on('error', reject);
      req.end();
    });
    const { values } = await metrics().httpDuration.get();
    expect(values.some((v) => v.labels.method === 'OTHER')).toBe(true);
    expect(values.some((v) => v.labels.method === 'PROPFIND')).toBe(false);
  });
});

describe('HSTS', () => {
  test('sent when a trusted proxy says https, on pages and REST alike; never for an untrusted X-Forwarded-Proto', async () => {
    const behindProxy = await frontDoor('127.0.0.1');
    for (const path of ['/projects/demo', '/api/v1/whoami']) {
      expect((await get(behindProxy, path, { 'x-forwarded-proto': 'https' })).headers['strict-transport-security']).toBe(HSTS);
      expect((await get(behindProxy, path, { 'x-forwarded-proto': 'http' })).headers['strict-transport-security']).toBeUndefined();
      expect((await get(behindProxy, path)).headers['strict-transport-security']).toBeUndefined();
      // `port` trusts no proxy: the same header from an unknown peer is not believed.
      expect((await get(port, path, { 'x-forwarded-proto': 'https' })).headers['strict-transport-security']).toBeUndefined();
    }
    expect(HSTS).toBe('max-age=63072000; includeSubDomains');
  });

  test('a proxy that is not trusted cannot claim https for a client behind a trusted one', async () => {
    const otherProxy = await frontDoor('192.0.2.0/24');
    expect((await get(otherProxy, '/', { 'x-forwarded-proto': 'https', 'x-forwarded-for': '192.0.2.7' })).headers['strict-transport-security']).toBeUndefined();
  });
});

describe('Content-Security-Policy', () => {
  const scriptSrc = (policy: string) =>
    policy
      .split(';')
      .map((d) => d.trim())
      .find((d) => d.startsWith('script-src')) ?? '';

  test('a page gets a fresh script nonce, the same on the request Next renders and on the response; no inline script without it', async () => {
    const first = await get(port, '/projects/demo', { 'content-security-policy': "script-src 'nonce-chosenbytheclient'" });
    const second = await get(port, '/projects/demo');
    const policies = [first, second].map((r) => String(r.headers['content-security-policy']));
    for (const [i, policy] of policies.entries()) {
      expect(JSON.parse([first, second][i].body).policy).toBe(policy);
      expect(scriptSrc(policy)).toMatch(/^script-src 'self' 'nonce-[A-Za-z0-9+/]{22}==' 'strict-dynamic'$/);
      expect(scriptSrc(policy)).not.toContain('unsafe-inline');
      expect(policy).toContain("frame-ancestors 'none'");
    }
    expect(policies[0]).not.toBe(policies[1]);
    expect(policies[0]).not.toContain('chosenbytheclient');
  });

  test('REST answers keep the fixed policy, which allows no inline script', async () => {
    const policy = String((await get(port, '/api/v1/whoami')).headers['content-security-policy']);
    expect(scriptSrc(policy)).toBe("script-src 'self'");
  });
});

describe('Server-Timing', () => {
  test("REST answers carry the web process's own time for the request; pages do not", async () => {
    // The server's time lies within the client's: from the request's arrival to its answer.
    for (const path of ['/api/v1/no-such-route', '/api/v1/whoami']) {
      const t = performance.now();
      const answer = await get(port, path);
      const waited = performance.now() - t;
      const m = /^app;dur=(\d+\.\d{2})$/.exec(String(answer.headers['server-timing']));
      expect(m, `${path}: ${answer.headers['server-timing']}`).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(0);
      expect(Number(m![1])).toBeLessThanOrEqual(waited);
    }
    expect((await get(port, '/projects')).headers['server-timing']).toBeUndefined();
  });
});

describe('a request body left half-read', () => {
  test('the answer reaches the client, then the server ends the connection without reading the rest', async () => {
    let read = 0;
    const refuseAfterOneChunk = async (req: IncomingMessage, res: ServerResponse) => {
      // As a handler refusing a body over the limit: it stops reading part-way.
      await new Promise<void>((resolve) => req.once('data', (chunk: Buffer) => ((read += chunk.length), resolve())));
      req.pause();
      res.writeHead(413, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"PayloadTooLarge"}}');
    };
    const upload = await frontDoor('', refuseAfterOneChunk);
    const total = 20 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let written = 0;
    // Settles when the server ends the connection (or it closes): with the answer if it came first.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let answered: { status: number; body: string } | undefined;
      const req = request({ host: '127.0.0.1', port: upload, method: 'POST', path: '/upload' }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => (answered = { status: res.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
      });
      const settle = () => (answered ? resolve(answered) : reject(new Error('the connection ended before the answer')));
      req.on('error', () => {});
      req.on('socket', (socket) => socket.once('end', settle));
      req.on('close', settle);
      const pump = () => {
        while (written < total) {
          written += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    console.log(`413 after ${(written / 1024 / 1024).toFixed(1)} MiB handed to the socket; the handler read ${read} bytes`);
    expect(answer).toEqual({ status: 413, body: '{"error":{"code":"PayloadTooLarge"}}' });
    expect(written).toBeLessThan(total);
  });
});

describe('one bound on request bodies, for every route', () => {
  const total = 50 * 1024 * 1024;

  /**
   * Sends `total` bytes to `path` (declared, or chunked without a length) over a raw connection and
   * reports the answer's status line, how much the client could hand to the socket, and how much
   * the server's side of the connection read.
   */
  async function upload(target: number, path: string, declared: boolean, serverSockets: Map<number, () => number>) {
    return new Promise<{ status: string; written: number; serverRead: number }>((resolve) => {
      const socket = connect(target, '127.0.0.1');
      let answer = '';
      let written = 0;
      let settled = false;
      let local = 0;
      const settle = () => {
        if (settled) return;
        settled = true;
        const serverRead = serverSockets.get(local)?.() ?? -1;
        socket.destroy();
        resolve({ status: answer.split('\r\n')[0], written, serverRead });
      };
      socket.on('data', (d) => (answer += d.toString('latin1')));
      socket.on('error', () => setTimeout(settle, 100));
      socket.on('close', () => setTimeout(settle, 100));
      // Give up pushing after 3 s: a server that stopped reading lets the client stall, not finish.
      setTimeout(settle, 3_000);
      socket.once('connect', () => {
        local = socket.localPort!;
        const head = declared
          ? `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${total}\r\n\r\n`
          : `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n`;
        socket.write(head);
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

  test('50 MB to a page route, to sign-in and to REST: declared is 413 before any of it is read; streamed stops at the limit', async () => {
    // A page that never reads its body (as Next renders a page), and one that reads all it is given.
    const serverSockets = new Map<number, () => number>();
    const page = async (req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<p>a page</p>');
    };
    const greedy = async (req: IncomingMessage, res: ServerResponse) => {
      let size = 0;
      req.on('data', (c: Buffer) => (size += c.length));
      // Handed at most the limit and one byte: a bounded reader refuses; this one only counts.
      await new Promise((r) => setTimeout(r, 500));
      res.writeHead(size > 65_536 ? 413 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ size }));
    };
    // Every connection's server side, by the client's port: how much the server read of it.
    const track = async (target: Promise<number>) => {
      const port = await target;
      servers.at(-1)!.on('connection', (socket) => serverSockets.set(socket.remotePort!, () => socket.bytesRead));
      return port;
    };
    const pages = await track(frontDoor('', page));
    const reading = await track(frontDoor('', greedy));
    const rest = await track(frontDoor('', page));
    const cases = [
      { target: pages, path: '/projects', declared: true, status: 'HTTP/1.1 413 Payload Too Large' },
      { target: pages, path: '/api/auth/callback/credentials', declared: true, status: 'HTTP/1.1 413 Payload Too Large' },
      { target: pages, path: '/projects', declared: false, status: 'HTTP/1.1 200 OK' },
      { target: reading, path: '/api/auth/callback/credentials', declared: false, status: 'HTTP/1.1 413 Payload Too Large' },
      { target: rest, path: '/api/v1/projects/acme/ipclaims', declared: true, status: 'HTTP/1.1 413 Payload Too Large' },
      { target: rest, path: '/api/v1/projects/acme/ipclaims', declared: false, status: 'HTTP/1.1 413 Payload Too Large' },
    ];
    for (const c of cases) {
      const got = await upload(c.target, c.path, c.declared, serverSockets);
      const what = `${c.path} ${c.declared ? 'declared' : 'chunked'}`;
      console.log(`${what}: ${got.status}; the client handed ${(got.written / 2 ** 20).toFixed(1)} MiB to its socket, the server read ${got.serverRead} bytes`);
      expect(got.status, what).toBe(c.status);
      expect(got.written, what).toBeLessThan(total);
      // The head, at most the limit and what one read of the socket brought: never the 50 MB.
      expect(got.serverRead, what).toBeGreaterThan(0);
      expect(got.serverRead, what).toBeLessThan(1024 * 1024);
    }
  });
});
