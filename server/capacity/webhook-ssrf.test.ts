/**
 * Webhooks cannot be aimed at the worker's own network (server-side request forgery): the address
 * policy refuses every non-public form of an address, at registration (a clear 400 on `url`) and
 * at delivery (on what the name resolves to then), the connection goes to the checked address, and
 * redirects are not followed. Refusals of private, link-local, CGNAT and public forms are checked on
 * the policy and on a stub resolver's answer: nothing here connects to anything but loopback.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { checkAddress, nonPublicReason, parseAddressList } from '@/lib/address-policy';
import { systemActor } from '@/server/audit/events';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { postWebhook, type Resolver } from './webhook-client';
import { checkWebhookUrl, createWebhookEndpoint, deliverPending, listDeliveries, listWebhookEndpoints, type WebhookSettings } from './webhooks';

const actor = systemActor('test');
const base = { retryBaseMs: 50, retryCapMs: 200, timeoutMs: 2_000 };

/** A resolver that answers from a table (and counts its calls); an unknown name does not resolve. */
function stubResolver(answers: Record<string, string[] | (() => string[])>) {
  const calls: string[] = [];
  const resolve: Resolver = async (hostname) => {
    calls.push(hostname);
    const answer = answers[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const list = typeof answer === 'function' ? answer() : answer;
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, calls };
}

/** Every form the issue names, as written in a URL's host, and what the URL parser makes of it. */
const literalForms = [
  '127.0.0.1',
  '127.1',
  '0.0.0.0',
  '0',
  '10.1.2.3',
  '172.16.5.4',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '[::1]',
  '[::]',
  '[fe80::1]',
  '[fc00::1]',
  '[fd12:3456::1]',
  '[::ffff:7f00:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:a9fe:a9fe]',
  '[64:ff9b::7f00:1]',
  '[2002:7f00:1::]',
  '[2001:db8::1]',
  '2130706433',
  '0x7f.1',
  '0x7f000001',
  '017700000001',
  '0177.0.0.1',
  '192.0.2.1',
  '198.18.0.1',
];

/** Addresses a resolver might answer with, canonical or not. */
const resolvedForms = [
  '127.0.0.1',
  '127.255.255.254',
  '0.0.0.0',
  '10.0.0.1',
  '172.31.255.255',
  '192.168.0.1',
  '169.254.169.254',
  '100.64.0.1',
  '100.127.255.255',
  '224.0.0.251',
  '239.255.255.250',
  '255.255.255.255',
  '::1',
  '::',
  'fe80::1',
  'fc00::1',
  'fd00:ec2::254',
  'ff02::1',
  '::ffff:7f00:1',
  '::ffff:127.0.0.1',
  '::ffff:10.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::a9fe:a9fe',
  '::7f00:1',
  '2001::1',
  // Not canonical addresses: a resolver answering these is refused, not interpreted.
  '2130706433',
  '0x7f.1',
  '017700000001',
  '127.1',
];

const policy = { allowHttp: false, allowList: null };

describe('the address policy', () => {
  test.each(resolvedForms)('refuses %s', (address) => {
    expect(checkAddress(address, null)).toMatchObject({ allowed: false });
  });

  test.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '100.128.0.1', '172.32.0.1', '192.169.0.1'])(
    'allows public %s',
    (address) => {
      expect(checkAddress(address, null)).toEqual({ allowed: true, listed: false });
    },
  );

  test('names the range it refuses', () => {
    expect(nonPublicReason('169.254.169.254')).toBe('link-local, 169.254.0.0/16');
    expect(nonPublicReason('100.64.0.1')).toBe('shared address space (CGNAT, RFC 6598), 100.64.0.0/10');
    expect(nonPublicReason('::ffff:7f00:1')).toBe('IPv4-mapped, ::ffff:0:0/96');
    expect(nonPublicReason('8.8.8.8')).toBeNull();
  });

  test('the operator allow list opens exactly what it names', () => {
    const allow = parseAddressList('127.0.0.1/32, 10.20.0.0/16');
    expect(checkAddress('127.0.0.1', allow)).toEqual({ allowed: true, listed: true });
    expect(checkAddress('10.20.3.4', allow)).toEqual({ allowed: true, listed: true });
    expect(checkAddress('127.0.0.2', allow)).toMatchObject({ allowed: false });
    expect(checkAddress('10.21.0.1', allow)).toMatchObject({ allowed: false });
  });
});

describe('registration', () => {
  test.each(literalForms)('https://%s/ is refused with a 400 on url naming the reason', async (host) => {
    const settings = { ...policy, resolve: stubResolver({}).resolve };
    await expect(checkWebhookUrl(`https://${host}/hook`, settings)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'url',
      message: expect.stringMatching(
        /is (loopback|unspecified|private|link-local|shared|multicast|reserved|unique local|IPv4|6to4|documentation|benchmarking).*public addresses/,
      ),
    });
  });

  test.each(resolvedForms.map((a) => [a]))('a name resolving to %s is refused, without the address in the message', async (address) => {
    const { resolve } = stubResolver({ 'hooks.customer.test': [address] });
    const refused = checkWebhookUrl('https://hooks.customer.test/hook', { ...policy, resolve });
    await expect(refused).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'url',
      message: expect.stringContaining('resolves to an address webhooks may not reach'),
    });
    await expect(refused).rejects.not.toMatchObject({ message: expect.stringContaining(address) });
  });

  test('one private address among public ones refuses the name', async () => {
    const { resolve } = stubResolver({ 'mixed.customer.test': ['8.8.8.8', '10.0.0.7'] });
    await expect(checkWebhookUrl('https://mixed.customer.test/', { ...policy, resolve })).rejects.toMatchObject({ field: 'url' });
  });

  test('scheme rules: https to public is accepted; plain http needs WEBHOOK_ALLOW_HTTP (public) or the allow list; WEBHOOK_ALLOW_HTTP opens no address', async () => {
    const { resolve } = stubResolver({ 'hooks.customer.test': ['8.8.8.8'], localhost: ['127.0.0.1', '::1'] });
    const allowLoopback = parseAddressList('127.0.0.1/32, ::1/128');
    await expect(checkWebhookUrl('https://hooks.customer.test/x', { ...policy, resolve })).resolves.toBe('https://hooks.customer.test/x');
    await expect(checkWebhookUrl('https://8.8.8.8/x', { ...policy, resolve })).resolves.toBe('https://8.8.8.8/x');
    await expect(checkWebhookUrl('http://hooks.customer.test/x', { ...policy, resolve })).rejects.toMatchObject({
      field: 'url',
      message: expect.stringContaining('https://'),
    });
    await expect(checkWebhookUrl('http://hooks.customer.test/x', { ...policy, allowHttp: true, resolve })).resolves.toBeTruthy();
    // What the issue found: plain http to loopback, with WEBHOOK_ALLOW_HTTP=0 or =1, and a loopback name.
    for (const url of ['http://127.0.0.1:4100/admin', 'http://localhost:5432/', 'http://[::1]:8080/x']) {
      await expect(checkWebhookUrl(url, { ...policy, resolve })).rejects.toMatchObject({ field: 'url' });
      await expect(checkWebhookUrl(url, { ...policy, allowHttp: true, resolve })).rejects.toMatchObject({ field: 'url' });
      await expect(checkWebhookUrl(url, { allowHttp: false, allowList: allowLoopback, resolve })).resolves.toBeTruthy();
    }
    await expect(checkWebhookUrl('ftp://hooks.customer.test/x', { ...policy, resolve })).rejects.toMatchObject({ field: 'url' });
    await expect(checkWebhookUrl('https://u:p@hooks.customer.test/x', { ...policy, resolve })).rejects.toMatchObject({ field: 'url' });
    await expect(checkWebhookUrl('not a url', { ...policy, resolve })).rejects.toMatchObject({ field: 'url' });
    // A name that does not resolve (yet) is left to delivery over https, refused over plain http.
    await expect(checkWebhookUrl('https://later.customer.test/x', { ...policy, resolve })).resolves.toBeTruthy();
    await expect(checkWebhookUrl('http://later.customer.test/x', { ...policy, resolve })).rejects.toMatchObject({ field: 'url' });
  });

  test('a refused URL changes nothing', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await expect(
      createWebhookEndpoint(db, { projectId: project.id, name: 'metadata', url: 'https://169.254.169.254/latest/meta-data/' }, actor, policy),
    ).rejects.toMatchObject({ code: 'ValidationFailed', field: 'url', message: expect.stringContaining('link-local') });
    expect(await listWebhookEndpoints(db, project.id, { outcomes: true })).toEqual([]);
  });
});

// ---- Delivery: real requests, to loopback only -------------------------------------------------

interface Receiver {
  port: number;
  hits: string[];
  close(): Promise<void>;
}

/** An HTTP server on `host` (a loopback address) answering with `answer`; records the paths it was asked for. */
async function receiver(host: string, answer: (res: ServerResponse) => void, port = 0): Promise<Receiver> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const ok = (res: ServerResponse) => res.writeHead(204).end();
const request = { headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs: 2_000 };

describe('delivery', () => {
  test('a name resolving to a refused address at delivery is refused by policy, and nothing is connected', async () => {
    const sink = await receiver('127.0.0.1', ok);
    try {
      for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '10.0.0.1', '169.254.169.254']) {
        const { resolve } = stubResolver({ 'hooks.customer.test': [address] });
        const outcome = await postWebhook(`https://hooks.customer.test:${sink.port}/x`, request, { ...policy, resolve });
        expect(outcome).toMatchObject({ kind: 'refused' });
      }
      // One public and one private address: refused as a whole, not "the public one first".
      const { resolve } = stubResolver({ 'mixed.customer.test': ['8.8.8.8', '127.0.0.1'] });
      expect(await postWebhook(`https://mixed.customer.test:${sink.port}/x`, request, { ...policy, resolve })).toMatchObject({ kind: 'refused' });
      // A literal written as a number is the loopback address it means.
      expect(await postWebhook(`http://2130706433:${sink.port}/x`, request, { ...policy, allowHttp: true, resolve })).toMatchObject({ kind: 'refused' });
      expect(sink.hits).toEqual([]);
    } finally {
      await sink.close();
    }
  });

  test('the connection goes to the address that was checked: a resolver answering differently later (DNS rebinding) is never asked again', async () => {
    // Two receivers on one port: 127.0.0.1 is allowed, 127.0.0.2 is not.
    const allowed = await receiver('127.0.0.1', ok);
    const forbidden = await receiver('127.0.0.2', ok, allowed.port);
    try {
      const settings = { allowHttp: false, allowList: parseAddressList('127.0.0.1/32') };
      // Checked answer allowed, any later answer forbidden: the delivery lands on the checked one.
      let answers = 0;
      const rebinding = stubResolver({ 'rebind.customer.test': () => (answers++ === 0 ? ['127.0.0.1'] : ['127.0.0.2']) });
      const first = await postWebhook(`http://rebind.customer.test:${allowed.port}/a`, request, { ...settings, resolve: rebinding.resolve });
      expect(first).toEqual({ kind: 'delivered', status: 204 });
      expect(rebinding.calls).toEqual(['rebind.customer.test']);
      expect(allowed.hits).toEqual(['/a']);
      expect(forbidden.hits).toEqual([]);

      // Checked answer forbidden, later answer allowed: refused, nobody reached.
      let again = 0;
      const reverse = stubResolver({ 'rebind2.customer.test': () => (again++ === 0 ? ['127.0.0.2'] : ['127.0.0.1']) });
      expect(await postWebhook(`http://rebind2.customer.test:${allowed.port}/b`, request, { ...settings, resolve: reverse.resolve })).toMatchObject({
        kind: 'refused',
      });
      expect(allowed.hits).toEqual(['/a']);
      expect(forbidden.hits).toEqual([]);
    } finally {
      await allowed.close();
      await forbidden.close();
    }
  });

  test('a redirect is not followed: an allowed receiver answering 302 to a forbidden target is a failed delivery', async () => {
    const forbidden = await receiver('127.0.0.2', ok);
    const redirecting = await receiver('127.0.0.1', (res) => res.writeHead(302, { location: `http://127.0.0.2:${forbidden.port}/internal` }).end());
    try {
      const settings = { allowHttp: false, allowList: parseAddressList('127.0.0.1/32') };
      expect(await postWebhook(`http://127.0.0.1:${redirecting.port}/hook`, request, settings)).toEqual({ kind: 'http', status: 302 });
      expect(redirecting.hits).toEqual(['/hook']);
      expect(forbidden.hits).toEqual([]);
    } finally {
      await forbidden.close();
      await redirecting.close();
    }
  });

  test("the tenant's log says delivered, HTTP status, refused by policy or unreachable — never another service's words; viewers see state only", async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    // A service that talks back in its own words (an HTTP 401 body, a banner) and one that hangs up.
    const chatty = await receiver('127.0.0.1', (res) =>
      res.writeHead(503, { 'content-type': 'text/plain' }).end('postgres: FATAL password authentication failed'),
    );
    const hangUp = createTcpServer((socket: Socket) => socket.resume().end('SSH-2.0-OpenSSH_9.2 internal-bastion.corp\r\n'));
    await new Promise<void>((r) => hangUp.listen(0, '127.0.0.1', r));
    const hangUpPort = (hangUp.address() as AddressInfo).port;
    const { resolve } = stubResolver({ 'metadata.customer.test': ['169.254.169.254'] });
    const settings: WebhookSettings = { ...base, allowHttp: false, allowList: parseAddressList('127.0.0.1/32'), resolve };
    try {
      const cases = [
        { name: 'chatty', url: `http://127.0.0.1:${chatty.port}/x`, shown: 'HTTP 503', status: 503 },
        { name: 'hangup', url: `http://127.0.0.1:${hangUpPort}/x`, shown: 'unreachable', status: null },
        { name: 'metadata', url: 'https://metadata.customer.test/x', shown: 'refused by policy', status: null },
      ];
      for (const c of cases) {
        // Registered while the name pointed elsewhere; it resolves to a refused address at delivery.
        const endpoint = await createWebhookEndpoint(
          db,
          { projectId: project.id, name: c.name, url: c.url },
          actor,
          c.name === 'metadata' ? { ...settings, resolve: stubResolver({}).resolve } : settings,
        );
        await db.execute(sql`insert into webhook_deliveries (endpoint_id, event_type, payload, next_attempt_at) values (${endpoint.id}, 'test', '{}', now())`);
        expect(await deliverPending(db, endpoint.id, settings)).toMatchObject({ delivered: 0, failed: 1 });
        const [owner] = await listDeliveries(db, project.id, c.name, { outcomes: true });
        expect(owner).toMatchObject({ state: 'Pending', attempts: 1, lastError: c.shown, lastStatus: c.status });
        const [viewer] = await listDeliveries(db, project.id, c.name, { outcomes: false });
        expect(viewer).toMatchObject({ state: 'Pending', attempts: 1, lastError: null, lastStatus: null });
      }
      const listed = await listWebhookEndpoints(db, project.id, { outcomes: true });
      expect(listed.map((e) => e.lastError).sort()).toEqual(['HTTP 503', 'refused by policy', 'unreachable']);
      expect((await listWebhookEndpoints(db, project.id, { outcomes: false })).every((e) => e.lastError === null)).toBe(true);
      expect(JSON.stringify(listed)).not.toMatch(/postgres|OpenSSH|bastion|169\.254|ECONN|socket|closed/i);
    } finally {
      await chatty.close();
      await new Promise((r) => hangUp.close(r));
    }
  });

  test('a delivery log written before these rules shows no internal error text', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const endpoint = await createWebhookEndpoint(db, { projectId: project.id, name: 'old', url: 'https://8.8.8.8/x' }, actor, policy);
    await db.execute(sql`
      insert into webhook_deliveries (endpoint_id, event_type, payload, last_error, attempts) values
        (${endpoint.id}, 'test', '{}', 'Hostname/IP does not match certificate''s altnames: DNS:vault.internal', 1),
        (${endpoint.id}, 'test', '{}', 'HTTP 401', 1)`);
    const log = await listDeliveries(db, project.id, 'old', { outcomes: true });
    expect(log.map((d) => d.lastError)).toEqual(['HTTP 401', 'unreachable']);
  });

  test('through WEBHOOK_PROXY_URL: the target is reached with CONNECT by name; a refused literal never reaches the proxy', async () => {
    const target = await receiver('127.0.0.1', ok);
    const tunnels: string[] = [];
    const proxy = createServer();
    proxy.on('connect', (req, client: Socket, head: Buffer) => {
      tunnels.push(String(req.url));
      const [host, port] = String(req.url).split(':');
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyUrl = new URL(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    try {
      const settings = { allowHttp: false, allowList: parseAddressList('127.0.0.1/32'), proxy: proxyUrl };
      expect(await postWebhook(`http://127.0.0.1:${target.port}/via-proxy`, request, settings)).toEqual({ kind: 'delivered', status: 204 });
      expect(tunnels).toEqual([`127.0.0.1:${target.port}`]);
      expect(target.hits).toEqual(['/via-proxy']);
      for (const refused of ['https://10.0.0.1/x', 'https://[::ffff:a9fe:a9fe]/x', 'https://localhost/x', 'http://8.8.8.8/x']) {
        expect(await postWebhook(refused, request, settings)).toMatchObject({ kind: 'refused' });
      }
      expect(tunnels).toHaveLength(1);
    } finally {
      await target.close();
      await new Promise((r) => proxy.close(r));
    }
  });
});
