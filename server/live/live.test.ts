/**
 * Live updates end to end below the route handler: committed changes come from the process's one
 * change feed (logical decoding; writers send nothing), the hub fans them out, and each SSE stream
 * carries only its scope's changes — a tenant its own project's, never another tenant's; an
 * operator everything.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { locations, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { systemActor } from '@/server/audit/events';
import { deleteMachine, requestMachine } from '@/server/fleet/machines';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { createChangeFeed, type ChangeFeed } from '@/server/changes/feed';
import { createChangeHub, type ChangeHub } from './hub';
import { resolveLiveScope } from './scope';
import { changeStream, MAX_STREAMS_PER_SESSION, sessionChangeStream, StreamSlots, type LiveScope } from './stream';

const actor = systemActor('test');
let hub: ChangeHub;
let feed: ChangeFeed;
/** This file's feed connection, told apart from other test files' on the same database. */
const FEED_APP = `meridian-feed-live-test-${process.pid}`;

interface SseEvent {
  event: string;
  data: string;
}

/** Reads an SSE body into `events` as it arrives. */
function collect(stream: ReadableStream<Uint8Array>) {
  const events: SseEvent[] = [];
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const lines = block.split('\n');
        const data = lines
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n');
        if (!data) continue;
        events.push({
          event:
            lines
              .find((l) => l.startsWith('event:'))
              ?.slice(6)
              .trim() ?? 'message',
          data,
        });
      }
    }
  })();
  /** Ids of the changes received so far. */
  const ids = () => events.filter((e) => e.event === 'message').flatMap((e) => (JSON.parse(e.data) as { changes: { id: string }[] }).changes.map((c) => c.id));
  return { events, ids, close: () => reader.cancel().then(() => pump) };
}

async function waitFor(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A location, class (approval off) and profile of our own; machines stay Pending (no worker runs here). */
async function makeCatalogue() {
  const { db } = testDb();
  const tag = uniq('lv');
  const [loc] = await db.insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
  await db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
  await db.insert(machineClasses).values({ name: `${tag}.cls`, cores: 8, memoryGib: 32, arch: 'x86_64', requiresApproval: false });
  const digest = 'sha256:' + 'cd'.repeat(32);
  await db.insert(machineProfiles).values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
  return { class: `${tag}.cls`, profile: `${tag}-os`, location: tag, interfaces: [], desiredPower: 'on' as const };
}

beforeAll(() => {
  feed = createChangeFeed(inject('databaseUrl'), { applicationName: FEED_APP, pollMs: 10 });
  hub = createChangeHub(feed, testDb().db);
});

afterAll(async () => {
  await hub?.close();
  await feed?.close();
});

describe('live updates', () => {
  test('a machine change reaches its own project’s stream and the operators’, never another tenant’s', async () => {
    const { db } = testDb();
    const spec = await makeCatalogue();
    const a = await makeProject(db);
    const b = await makeProject(db);
    const alice = await makeUser(db, { projectId: a.project.id, role: 'viewer' });
    const bob = await makeUser(db, { projectId: b.project.id, role: 'owner' });
    const operator = await makeUser(db, { platformRoles: ['operator'] });

    // Scopes come from the session's memberships, never from what the browser asks for.
    const aliceScope = await resolveLiveScope(db, alice, a.project.slug);
    expect(aliceScope).toEqual({ projectId: a.project.id });
    await expect(resolveLiveScope(db, bob, a.project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    await expect(resolveLiveScope(db, alice, null)).rejects.toMatchObject({ code: 'Forbidden' });
    await expect(resolveLiveScope(db, alice, 'Not a slug')).rejects.toMatchObject({ code: 'ValidationFailed' });
    const operatorScope = await resolveLiveScope(db, operator, null);

    const open = (scope: LiveScope) => collect(changeStream(hub, scope, { batchMs: 20 }));
    const sa = open(aliceScope);
    const sb = open(await resolveLiveScope(db, bob, b.project.slug));
    const so = open(operatorScope);
    try {
      for (const s of [sa, sb, so]) await waitFor('ready', () => s.events.some((e) => e.event === 'ready'));

      // One feed connection for the process, however many streams.
      expect(hub.subscriberCount()).toBe(3);
      const [{ n }] = (await db.execute(
        sql`select count(*)::int as n from pg_stat_activity where application_name = ${FEED_APP} and datname = current_database()`,
      )) as unknown as { n: number }[];
      expect(n).toBe(1);

      // A rolled-back change is never announced.
      let rolledBack = '';
      await db
        .transaction(async (tx) => {
          rolledBack = (await requestMachine(tx, a.project.id, { ...spec, name: 'rolled-back' }, actor)).id;
          throw new Error('roll back');
        })
        .catch(() => {});
      expect(rolledBack).not.toBe('');

      const ma = await requestMachine(db, a.project.id, { ...spec, name: 'web-a' }, actor);
      const mb = await requestMachine(db, b.project.id, { ...spec, name: 'web-b' }, actor);
      const ma2 = await requestMachine(db, a.project.id, { ...spec, name: 'web-a2' }, actor);
      await deleteMachine(db, a.project.id, 'web-a', actor);
      // Notifications arrive in commit order on the one connection: once a stream has a change
      // committed after another tenant's, that one would have been there too, had it been let through.
      await waitFor('B to see its machine', () => sb.ids().includes(mb.id));
      expect(sb.ids()).not.toContain(ma.id);
      await waitFor('A to see both of its machines', () => sa.ids().includes(ma.id) && sa.ids().includes(ma2.id));
      expect(sa.ids()).not.toContain(mb.id);
      await waitFor('the operator to see all three', () => [ma.id, mb.id, ma2.id].every((id) => so.ids().includes(id)));
      expect([...sa.ids(), ...sb.ids(), ...so.ids()]).not.toContain(rolledBack);
      // Tenants get ids only; operators also learn the project.
      const aliceChange = JSON.parse(sa.events.find((e) => e.event === 'message')!.data).changes[0];
      expect(Object.keys(aliceChange).sort()).toEqual(['id', 'k']);
      expect(so.events.filter((e) => e.event === 'message').flatMap((e) => JSON.parse(e.data).changes)).toContainEqual({
        k: 'machine',
        id: mb.id,
        p: b.project.id,
      });
    } finally {
      await Promise.all([sa.close(), sb.close(), so.close()]);
    }
    await waitFor('streams to unsubscribe', () => hub.subscriberCount() === 0);
  });

  test('closing the hub (web shutdown) ends its streams', async () => {
    const { db } = testDb();
    const own = createChangeHub(feed, db);
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const reader = changeStream(own, await resolveLiveScope(db, operator, null)).getReader();
    await own.ready();
    await own.close();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text).toContain('retry:');
    expect(own.subscriberCount()).toBe(0);
  });

  test('a lost feed connection is re-opened and the streams are told to resynchronise', async () => {
    const { db } = testDb();
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const s = collect(changeStream(hub, await resolveLiveScope(db, operator, null), { batchMs: 20 }));
    try {
      await waitFor('ready', () => s.events.some((e) => e.event === 'ready'));
      await db.execute(sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${FEED_APP} and datname = current_database()`);
      await waitFor('resync', () => s.events.some((e) => e.event === 'resync'));
      // And changes flow again afterwards.
      const spec = await makeCatalogue();
      const { project } = await makeProject(db);
      const m = await requestMachine(db, project.id, { ...spec, name: 'after-reconnect' }, actor);
      await waitFor('a change after the reconnect', () => s.ids().includes(m.id));
    } finally {
      await s.close();
    }
  });

  test(`a session holds at most ${MAX_STREAMS_PER_SESSION} streams: one more is 429 with Retry-After, and ending one frees its slot`, async () => {
    const { db } = testDb();
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const scope = await resolveLiveScope(db, operator, null);
    const slots = new StreamSlots();
    const aborts: AbortController[] = [];
    const open = (session: string) => {
      const abort = new AbortController();
      aborts.push(abort);
      return { res: sessionChangeStream(hub, scope, session, { slots, signal: abort.signal }), abort };
    };
    const streams = Array.from({ length: MAX_STREAMS_PER_SESSION }, () => open('session-a'));
    const readers = streams.map(({ res }) => collect(res.body!));
    try {
      for (const { res } of streams) expect(res.status).toBe(200);
      for (const r of readers) await waitFor('ready', () => r.events.some((e) => e.event === 'ready'));

      const refused = open('session-a').res;
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('10');
      expect(await refused.json()).toEqual({
        error: { code: 'RateLimited', message: `at most ${MAX_STREAMS_PER_SESSION} live-update streams per session; close one or retry in 10 s` },
      });
      // The cap is the session's, not the user's or the process's.
      const other = open('session-b').res;
      expect(other.status).toBe(200);
      await other.body!.cancel();

      // The browser going away (the request's signal) frees a slot, and so does a reader cancelling.
      streams[0].abort.abort();
      await waitFor('the slot to be freed', () => slots.held('session-a') === MAX_STREAMS_PER_SESSION - 1);
      const again = open('session-a').res;
      expect(again.status).toBe(200);
      expect(open('session-a').res.status).toBe(429);
      await readers[1].close();
      expect(slots.held('session-a')).toBe(MAX_STREAMS_PER_SESSION - 1);
      await again.body!.cancel();
      expect(slots.held('session-a')).toBe(MAX_STREAMS_PER_SESSION - 2);
    } finally {
      for (const a of aborts) a.abort();
      await Promise.all(readers.map((r) => r.close().catch(() => {})));
    }
    await waitFor('every slot to be given back', () => slots.held('session-a') === 0 && slots.held('session-b') === 0);
    await waitFor('streams to unsubscribe', () => hub.subscriberCount() === 0);
  });
});
