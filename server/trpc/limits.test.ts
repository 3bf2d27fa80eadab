/**
 * The console's tRPC transport is bounded before tRPC reads a request: at most MAX_BATCH_CALLS calls
 * in a batch, a body of at most 64 KiB read no further than that, and a CSRF check that refuses an
 * `Origin` naming no site with 403 instead of throwing. Requests within the bounds still get the
 * session in their context and the error formatter's answers.
 */
import superjson from 'superjson';
import { beforeAll, describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createNetwork } from '@/server/ipam/networks';
import { MAX_BODY_BYTES } from '@/server/http/body-limit';
import type { SessionUser } from '@/server/tenancy/roles';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import type { Context } from './init';
import { MAX_BATCH_CALLS, serveTrpc } from './http';

const actor = systemActor('test');
let user: SessionUser;
let project = '';

beforeAll(async () => {
  const { db } = testDb();
  const made = await makeProject(db);
  project = made.project.slug;
  user = await makeUser(db, { projectId: made.project.id, role: 'owner' });
  await createNetwork(db, made.project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
});

const context = async (): Promise<Context> => ({ db: testDb().db, session: { user, id: 'session-of-the-test' } });
const base = 'http://localhost:3000/api/trpc';
const sameSite = { host: 'localhost:3000', 'x-meridian-csrf': '1', 'content-type': 'application/json' };

interface TrpcError {
  message: string;
  data: { domainCode: string | null; field: string | null; httpStatus: number; details: Record<string, unknown> | null };
}
const errorOf = async (res: Response) => superjson.deserialize<TrpcError>(((await res.json()) as { error: Parameters<typeof superjson.deserialize>[0] }).error);

/** A GET batch of `n` reads of the caller's networks. */
function batch(n: number) {
  const paths = Array.from({ length: n }, () => 'ipam.networks.list').join(',');
  const input = Object.fromEntries(Array.from({ length: n }, (_, i) => [i, superjson.serialize({ project })]));
  return new Request(`${base}/${paths}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { host: 'localhost:3000' } });
}

/**
 * A POST whose body is streamed in 16 KiB chunks without a declared length, up to `total` bytes;
 * `pulled()` says how many bytes the server asked for.
 */
function streamedPost(total: number) {
  let sent = 0;
  const chunk = new Uint8Array(16 * 1024).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  const req = new Request(`${base}/ipam.networks.create`, { method: 'POST', headers: sameSite, body, duplex: 'half' } as RequestInit);
  return { req, pulled: () => sent };
}

describe('tRPC batches', () => {
  test(`a batch of ${MAX_BATCH_CALLS} calls is answered; one more is 400 naming the limit, before any call runs`, async () => {
    const within = await serveTrpc(batch(MAX_BATCH_CALLS), context);
    expect(within.status).toBe(200);
    const answers = (await within.json()) as unknown[];
    expect(answers).toHaveLength(MAX_BATCH_CALLS);

    for (const n of [MAX_BATCH_CALLS + 1, 60]) {
      const refused = await serveTrpc(batch(n), context);
      expect(refused.status).toBe(400);
      const error = await errorOf(refused);
      expect(error.message).toBe(`a batch may carry at most ${MAX_BATCH_CALLS} calls; this one has ${n}`);
      expect(error.data).toMatchObject({ domainCode: 'ValidationFailed', field: 'batch', httpStatus: 400, details: { limit: MAX_BATCH_CALLS, calls: n } });
    }
  });
});

describe('tRPC bodies', () => {
  test('a body within 64 KiB reaches the procedure, with the session in its context', async () => {
    const name = uniq('n').slice(0, 20);
    const input = { project, name, description: 'x'.repeat(200), cidrs: [{ cidr: '198.51.100.0/24' }] };
    const res = await serveTrpc(
      new Request(`${base}/ipam.networks.create`, { method: 'POST', headers: sameSite, body: JSON.stringify(superjson.serialize(input)) }),
      context,
    );
    expect(res.status).toBe(200);
    const listed = await serveTrpc(
      new Request(`${base}/ipam.networks.get?input=${encodeURIComponent(JSON.stringify(superjson.serialize({ project, name })))}`, {
        headers: { host: 'localhost:3000' },
      }),
      context,
    );
    expect(listed.status).toBe(200);
  });

  test('a declared body over 64 KiB is 413 with a clear tRPC error, unread', async () => {
    const body = JSON.stringify({ json: { project, name: 'big', description: 'x'.repeat(MAX_BODY_BYTES) } });
    const res = await serveTrpc(
      new Request(`${base}/ipam.networks.create`, { method: 'POST', headers: { ...sameSite, 'content-length': String(body.length) }, body }),
      context,
    );
    expect(res.status).toBe(413);
    const error = await errorOf(res);
    expect(error.message).toBe(`body exceeds ${MAX_BODY_BYTES} bytes`);
    expect(error.data).toMatchObject({ domainCode: 'PayloadTooLarge', field: 'body', httpStatus: 413 });
  });

  test('a streamed 20 MB body is refused with 413 once it passes 64 KiB: no more of it is read', async () => {
    const { req, pulled } = streamedPost(20 * 1024 * 1024);
    const res = await serveTrpc(req, context);
    expect(res.status).toBe(413);
    expect((await errorOf(res)).data.domainCode).toBe('PayloadTooLarge');
    // The reader asked for the limit and one chunk past it (the stream may have one more queued).
    expect(pulled()).toBeLessThanOrEqual(MAX_BODY_BYTES + 3 * 16 * 1024);
  });
});

describe('the CSRF check on tRPC', () => {
  test.each(['null', 'garbage', 'http://'])('a mutation with Origin %j is 403 with a clear body, not 500', async (origin) => {
    const res = await serveTrpc(
      new Request(`${base}/ipam.networks.create`, {
        method: 'POST',
        headers: { ...sameSite, origin },
        body: JSON.stringify({ json: { project, name: 'x', cidrs: [] } }),
      }),
      context,
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'Forbidden', message: 'cross-site request refused (CSRF check)' } });
  });
});

describe('statuses tRPC has no code for', () => {
  const input = (token: string) => encodeURIComponent(JSON.stringify(superjson.serialize({ token })));

  test('an unusable invitation link is 410 Gone (LinkUnusable), as the error table and the README say', async () => {
    const res = await serveTrpc(
      new Request(`${base}/invitations.preview?input=${input('inv_made-up-link')}`, { headers: { host: 'localhost:3000' } }),
      context,
    );
    expect(res.status).toBe(410);
    const error = await errorOf(res);
    expect(error.data).toMatchObject({ domainCode: 'LinkUnusable', field: 'token', httpStatus: 410 });
  });

  test('a batch where another call succeeded keeps tRPC’s multi-status answer', async () => {
    const batchInput = encodeURIComponent(JSON.stringify({ 0: superjson.serialize({ token: 'inv_made-up-link' }), 1: superjson.serialize({ project }) }));
    const res = await serveTrpc(
      new Request(`${base}/invitations.preview,ipam.networks.list?batch=1&input=${batchInput}`, { headers: { host: 'localhost:3000' } }),
      context,
    );
    expect(res.status).toBe(207);
  });
});
