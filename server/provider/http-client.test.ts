/**
 * Outcome classification of the HTTP provider client. A scripted local HTTP server stands in for a
 * misbehaving provider (malformed bodies, proxies, resets, silence) — real sockets, no module mocks.
 * Behaviour against the real simulator is covered in simulator/simulator.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpProviderClient, isRejectedWith, ProviderCallError, unwrap, type ProviderClient } from '.';

type Script = (request: http.IncomingMessage, response: http.ServerResponse) => void;

const record = {
  id: 'op-1',
  kind: 'power',
  assetId: 'dev-1',
  bindingId: 'b-1',
  epoch: 1,
  fencingToken: 1,
  power: 'on',
  state: 'Succeeded',
  submittedAt: '2026-01-01T00:00:00.000Z',
  completedAt: '2026-01-01T00:00:00.000Z',
};
const powerRequest = { id: 'op-1', assetId: 'dev-1', bindingId: 'b-1', epoch: 1, fencingToken: 1, power: 'on' as const };

let script: Script = (_request, response) => response.end();
let server: http.Server;
let client: ProviderClient;
let seenAuthorization: string | undefined;

const json =
  (status: number, body: unknown): Script =>
  (request, response) => {
    request.resume();
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

beforeAll(async () => {
  server = http.createServer((request, response) => {
    seenAuthorization = request.headers.authorization;
    script(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = createHttpProviderClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, timeoutMs: 1_000 });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('HTTP provider client outcomes', () => {
  it('returns results, with replayed from the status, and sends no bearer token on the runtime API', async () => {
    script = json(201, record);
    expect(await client.power(powerRequest)).toEqual({ type: 'result', value: { operation: record, replayed: false } });
    expect(seenAuthorization).toBeUndefined();
    script = json(200, record);
    expect(await client.power(powerRequest)).toEqual({ type: 'result', value: { operation: record, replayed: true } });
  });

  it.each([
    ['a body that is not JSON', json(200, '<html>ok</html>'), 'malformed-response'],
    ['a body of the wrong shape', json(201, { ...record, state: 'Exploded' }), 'malformed-response'],
    ['a record for another operation', json(201, { ...record, id: 'op-2' }), 'malformed-response'],
    ['a 4xx without a coded error body (a proxy)', json(404, '<html>not found</html>'), 'malformed-response'],
    ['503 Unavailable', json(503, { error: { code: 'Unavailable', message: 'down' } }), 'unavailable'],
    ['500', json(500, { error: { code: 'Internal', message: 'boom' } }), 'server-error'],
    ['502 from a proxy', json(502, 'bad gateway'), 'server-error'],
    ['a reset connection (lost response)', ((request) => request.socket.destroy()) as Script, 'connection-lost'],
    [
      'a truncated body',
      ((request, response) => {
        response.writeHead(201, { 'content-type': 'application/json', 'content-length': '500' });
        response.write('{"id":"op-1"');
        setTimeout(() => request.socket.destroy(), 20);
      }) as Script,
      'connection-lost',
    ],
  ])('classifies %s as unknown', async (_name, behaviour, reason) => {
    script = behaviour;
    const outcome = await client.power(powerRequest);
    expect(outcome).toMatchObject({ type: 'unknown', reason });
  });

  it('classifies coded 4xx answers as definite rejections', async () => {
    script = json(409, { error: { code: 'StaleEpoch', message: 'epoch 1 is closed' } });
    const outcome = await client.power(powerRequest);
    expect(outcome).toEqual({ type: 'rejected', error: { status: 409, code: 'StaleEpoch', message: 'epoch 1 is closed' } });
    expect(isRejectedWith(outcome, 'StaleEpoch')).toBe(true);
    script = json(400, { error: { code: 'InvalidRequest', message: 'bad', field: 'epoch' } });
    expect(await client.power(powerRequest)).toMatchObject({ type: 'rejected', error: { field: 'epoch', status: 400 } });
  });

  it('enforces the deadline and honours the caller signal', async () => {
    script = () => undefined; // never answers
    const started = performance.now();
    expect(await client.getOperation('op-1', { timeoutMs: 150 })).toMatchObject({ type: 'unknown', reason: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1_000);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    expect(await client.getOperation('op-1', { signal: controller.signal })).toMatchObject({ type: 'unknown', reason: 'aborted' });
  });

  it('reports a refused connection as unknown, and unwrap throws a typed error', async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const offline = createHttpProviderClient({ baseUrl: `http://127.0.0.1:${port}` });
    const outcome = await offline.health();
    expect(outcome).toMatchObject({ type: 'unknown', reason: 'connection-refused' });
    expect(() => unwrap(outcome)).toThrow(ProviderCallError);
  });
});
