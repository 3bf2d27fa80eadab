import https from 'node:https';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createClaim, deleteClaim, setClaimLabels } from '@/server/ipam/claims';
import { testDb } from '@/test/db';
import { startKubeServer } from '@/test/kube-server';

/**
 * Watches of the Kubernetes API over the change feed: events in commit order with strictly
 * increasing resource versions, whoever wrote (the Kubernetes API, the domain functions REST v1
 * and the console call), resume and 410, the watch parameters, and the property test — concurrent
 * writers with random commit delays and rollbacks, watchers with selectors — whose histories must
 * equal the committed changes in their scope.
 */

let kube: Awaited<ReturnType<typeof startKubeServer>>;
const NS = '/apis/ipam.miloapis.com/v1alpha1/namespaces/default';
const actor = systemActor('watch-test');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  kube = await startKubeServer();
  const net = await kube.request('POST', `${NS}/networks`, {
    body: { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'Network', metadata: { name: 'w' }, spec: { cidrs: [{ cidr: '10.60.0.0/16' }] } },
  });
  expect(net.status).toBe(201);
});

afterAll(async () => {
  await kube?.stop();
});

interface Event {
  type: string;
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    metadata: { name: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  };
}

/** A watch: every event received, in order, until `close()`. */
function watch(query: string, options: { path?: string; token?: string } = {}) {
  const events: Event[] = [];
  let status = 0;
  let body = '';
  let ended = false;
  const url = new URL(`${kube.root}${options.path ?? `${NS}/ipclaims`}?watch=1&${query}`);
  const req = https.request(url, { ca: kube.caPem, headers: { authorization: `Bearer ${options.token ?? kube.tokens.editor}` } }, (res) => {
    status = res.statusCode ?? 0;
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (status !== 200) {
        body += chunk;
        return;
      }
      buffer += chunk;
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
        events.push(JSON.parse(buffer.slice(0, i)));
        buffer = buffer.slice(i + 1);
      }
    });
    res.on('end', () => (ended = true));
  });
  req.on('error', () => (ended = true));
  req.end();
  return {
    events,
    status: () => status,
    body: () => (body ? JSON.parse(body) : undefined),
    ended: () => ended,
    close: () => req.destroy(),
    /** Waits until `predicate` holds of the events (or fails after 10 s). */
    async until(predicate: (events: Event[]) => boolean) {
      const deadline = Date.now() + 60_000;
      while (!predicate(events)) {
        if (Date.now() > deadline) throw new Error(`timed out; events so far: ${JSON.stringify(events.map((e) => [e.type, e.object.metadata?.name]))}`);
        await sleep(20);
      }
    },
  };
}

const claim = (name: string, labels?: Record<string, string>) => ({
  apiVersion: 'ipam.miloapis.com/v1alpha1',
  kind: 'IPClaim',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { network: 'w', prefixLength: 29 },
});

const rv = (e: Event) => BigInt(e.object.metadata.resourceVersion);
const names = (events: Event[]) => events.map((e) => `${e.type} ${e.object.metadata.name}`);

describe('watch', () => {
  test('a list at X then a watch from X: every change through the API or the domain, in commit order, once', async () => {
    const list = await kube.request('GET', `${NS}/ipclaims`);
    const from = list.body.metadata.resourceVersion as string;
    expect(from).toMatch(/^[1-9]\d*$/);
    const w = watch(`resourceVersion=${from}`);
    const created = await kube.request('POST', `${NS}/ipclaims`, { body: claim('a') });
    expect(created.status).toBe(201);
    const labelled = await kube.request('PATCH', `${NS}/ipclaims/a`, {
      body: { metadata: { labels: { x: '1' } } },
      contentType: 'application/merge-patch+json',
    });
    // Through the domain functions REST v1 and the console call: no Kubernetes API involved.
    await createClaim(testDb().db, kube.project.id, { name: 'b', network: 'w', prefixLength: 29, reclaimPolicy: 'Delete' }, actor);
    await deleteClaim(testDb().db, kube.project.id, 'a', actor);
    await w.until((e) => e.length >= 4);
    await sleep(200);
    expect(names(w.events)).toEqual(['ADDED a', 'MODIFIED a', 'ADDED b', 'DELETED a']);
    // The versions the writes answered are the events'.
    expect(w.events[0].object.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(w.events[1].object.metadata.resourceVersion).toBe(labelled.body.metadata.resourceVersion);
    expect(w.events[1].object.metadata.labels).toEqual({ x: '1' });
    const versions = w.events.map(rv);
    for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1]);
    expect(versions[0]).toBeGreaterThan(BigInt(from));
    // GET and list answer the versions of the last changes.
    const b = await kube.request('GET', `${NS}/ipclaims/b`);
    expect(b.body.metadata.resourceVersion).toBe(w.events[2].object.metadata.resourceVersion);
    const after = await kube.request('GET', `${NS}/ipclaims`);
    expect(BigInt(after.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(versions[3]);
    w.close();

    // Resume from the middle: exactly the rest.
    const resumed = watch(`resourceVersion=${w.events[1].object.metadata.resourceVersion}`);
    await resumed.until((e) => e.length >= 2);
    await sleep(200);
    expect(names(resumed.events)).toEqual(['ADDED b', 'DELETED a']);
    resumed.close();
    await deleteClaim(testDb().db, kube.project.id, 'b', actor);
  });

  test('without a resourceVersion (or 0): the current objects as ADDED first; sendInitialEvents ends them with the annotated BOOKMARK', async () => {
    await kube.request('POST', `${NS}/ipclaims`, { body: claim('init-1') });
    const plain = watch('');
    await plain.until((e) => e.some((x) => x.object.metadata.name === 'init-1'));
    expect(plain.events.every((e) => e.type === 'ADDED')).toBe(true);
    plain.close();
    const zero = watch('resourceVersion=0');
    await zero.until((e) => e.some((x) => x.object.metadata.name === 'init-1'));
    zero.close();
    const list = watch('sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
    await list.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    const bookmark = list.events.find((x) => x.type === 'BOOKMARK')!;
    expect(bookmark.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    expect(list.events.slice(0, -1).map((x) => x.type)).toEqual(list.events.slice(0, -1).map(() => 'ADDED'));
    await kube.request('DELETE', `${NS}/ipclaims/init-1`);
    await list.until((e) => e.some((x) => x.type === 'DELETED' && x.object.metadata.name === 'init-1'));
    expect(rv(list.events[list.events.length - 1])).toBeGreaterThan(rv(bookmark));
    list.close();
  });

  test('bad parameters are 4xx before anything streams; a version before the window is 410 Expired', async () => {
    const noInitial = watch('resourceVersionMatch=NotOlderThan&resourceVersion=5');
    await noInitial.until(() => noInitial.status() !== 0 && noInitial.ended());
    expect(noInitial.status()).toBe(422);
    expect(noInitial.body()).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    const noBookmarks = watch('sendInitialEvents=true&resourceVersionMatch=NotOlderThan');
    await noBookmarks.until(() => noBookmarks.ended());
    expect(noBookmarks.status()).toBe(422);
    const notANumber = watch('resourceVersion=abc');
    await notANumber.until(() => notANumber.ended());
    expect(notANumber.status()).toBe(400);
    const old = watch('resourceVersion=1');
    await old.until((e) => e.length >= 1);
    expect(old.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    await old.until(() => old.ended());
    // A viewer may watch; another project's token sees nothing of this project.
    const viewer = watch('resourceVersion=0', { token: kube.tokens.viewer });
    await viewer.until(() => viewer.status() !== 0);
    expect(viewer.status()).toBe(200);
    viewer.close();
    const stranger = watch('resourceVersion=0', { token: kube.tokens.otherProject });
    await stranger.until(() => stranger.ended());
    expect(stranger.status()).toBe(404);
  });

  test('a label selector: an object entering the selection is ADDED, leaving it DELETED', async () => {
    const from = (await kube.request('GET', `${NS}/ipclaims`)).body.metadata.resourceVersion;
    const w = watch(`resourceVersion=${from}&labelSelector=${encodeURIComponent('team=blue')}`);
    await kube.request('POST', `${NS}/ipclaims`, { body: claim('sel', { team: 'red' }) });
    await kube.request('PATCH', `${NS}/ipclaims/sel`, { body: { metadata: { labels: { team: 'blue' } } }, contentType: 'application/merge-patch+json' });
    await kube.request('PATCH', `${NS}/ipclaims/sel`, {
      body: { metadata: { labels: { team: 'blue', more: '1' } } },
      contentType: 'application/merge-patch+json',
    });
    await kube.request('PATCH', `${NS}/ipclaims/sel`, { body: { metadata: { labels: { team: 'green' } } }, contentType: 'application/merge-patch+json' });
    await kube.request('DELETE', `${NS}/ipclaims/sel`);
    await w.until((e) => e.length >= 3);
    await sleep(300);
    expect(names(w.events)).toEqual(['ADDED sel', 'MODIFIED sel', 'DELETED sel']);
    w.close();
  });

  test(
    'property: concurrent writers with random commit delays and rollbacks; every watcher sees exactly the committed changes in its scope, in commit order',
    { timeout: 300_000 },
    async () => {
      const { db } = testDb();
      const from = (await kube.request('GET', `${NS}/ipclaims`)).body.metadata.resourceVersion as string;
      const scopes = { all: '', odd: 'parity=odd', even: 'parity=even' } as const;
      const watchers = Object.fromEntries(
        Object.entries(scopes).map(([key, selector]) => [key, watch(`resourceVersion=${from}&labelSelector=${encodeURIComponent(selector)}`)]),
      );
      // What committed, per object, in the order its one writer made the changes.
      const committed = new Map<string, string[]>();
      const parityOf = new Map<string, string>();
      let rolledBack = 0;
      const writer = async (w: number) => {
        for (let i = 0; i < 12; i++) {
          const name = `p-${w}-${i}`;
          const parity = (w + i) % 2 ? 'odd' : 'even';
          const rollback = Math.random() < 0.3;
          const ops: string[] = [];
          try {
            await db.transaction(async (tx) => {
              await createClaim(tx, kube.project.id, { name, network: 'w', prefixLength: 30, reclaimPolicy: 'Delete', labels: { parity } }, actor);
              await sleep(Math.random() * 30);
              if (rollback) throw new Error('rollback');
            });
            ops.push('ADDED');
          } catch (e) {
            if ((e as Error).message !== 'rollback') throw e;
            rolledBack++;
            continue;
          }
          parityOf.set(name, parity);
          committed.set(name, ops);
          if (Math.random() < 0.5) {
            // A label change that stays in the object's parity, then sometimes a rolled-back one.
            await setClaimLabels(db, kube.project.id, name, { parity, step: '2' }, actor);
            ops.push('MODIFIED');
            await db
              .transaction(async (tx) => {
                await setClaimLabels(tx, kube.project.id, name, { parity: parity === 'odd' ? 'even' : 'odd' }, actor);
                await sleep(Math.random() * 20);
                throw new Error('rollback');
              })
              .catch(() => rolledBack++);
          }
          if (Math.random() < 0.5) {
            await db.transaction(async (tx) => {
              await sleep(Math.random() * 20);
              await deleteClaim(tx, kube.project.id, name, actor);
            });
            ops.push('DELETED');
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
      const expected = (scope: keyof typeof scopes) =>
        [...committed.entries()].filter(([name]) => scope === 'all' || parityOf.get(name) === scope).reduce((n, [, ops]) => n + ops.length, 0);
      for (const scope of Object.keys(scopes) as (keyof typeof scopes)[]) await watchers[scope].until((e) => e.length >= expected(scope));
      await sleep(300);
      expect(rolledBack).toBeGreaterThan(0);
      for (const scope of Object.keys(scopes) as (keyof typeof scopes)[]) {
        const events = watchers[scope].events.filter((e) => e.object.metadata.name.startsWith('p-'));
        expect(events.length).toBe(expected(scope));
        // Each object's events are exactly its committed changes, in order (no gap, no duplicate, nothing rolled back).
        const perObject = new Map<string, string[]>();
        for (const e of events) perObject.set(e.object.metadata.name, [...(perObject.get(e.object.metadata.name) ?? []), e.type]);
        for (const [name, ops] of committed) if (scope === 'all' || parityOf.get(name) === scope) expect([name, perObject.get(name)]).toEqual([name, ops]);
        // Resource versions strictly increase (one change per transaction).
        for (let i = 1; i < events.length; i++) expect(rv(events[i])).toBeGreaterThan(rv(events[i - 1]));
        watchers[scope].close();
      }
      // The selective watchers saw the same changes in the same order as the watcher of everything.
      const all = watchers.all.events
        .filter((e) => e.object.metadata.name.startsWith('p-'))
        .map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
      const merged = [...watchers.odd.events, ...watchers.even.events]
        .filter((e) => e.object.metadata.name.startsWith('p-'))
        .sort((a, b) => (rv(a) < rv(b) ? -1 : 1))
        .map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
      expect(merged).toEqual(all);
      // A cache built from the events equals a fresh list.
      const cache = new Set<string>();
      for (const e of watchers.all.events) {
        if (e.type === 'DELETED') cache.delete(e.object.metadata.name);
        else cache.add(e.object.metadata.name);
      }
      const listed = (await kube.request('GET', `${NS}/ipclaims`)).body.items.map((o: { metadata: { name: string } }) => o.metadata.name);
      expect([...cache].filter((n) => n.startsWith('p-')).sort()).toEqual(listed.filter((n: string) => n.startsWith('p-')).sort());
    },
  );
});

describe('two web processes', () => {
  test('a watcher whose process dies mid-load resumes on another with its last version: nothing lost, nothing repeated', { timeout: 300_000 }, async () => {
    const { db } = testDb();
    const { KubeWatchHub } = await import('./watch');
    const { createChangeFeed } = await import('@/server/changes/feed');
    const { kubeKinds } = await import('@/server/api/kinds');
    const { createDb } = await import('@/db/client');
    const url = inject('databaseUrl');
    // Two processes' worth: each its own feed (slot, connection) and pool.
    const processes = ['a', 'b'].map((name) => {
      const handle = createDb(url, { max: 4, applicationName: `watch-test-${name}` });
      const feed = createChangeFeed(url, { applicationName: `watch-test-feed-${name}-${process.pid}`, pollMs: 10 });
      return { handle, feed, hub: new KubeWatchHub(feed, kubeKinds, handle.db) };
    });
    const [a, b] = processes;
    const claimKind = kubeKinds.find((k) => k.kind === 'IPClaim')!;
    const received: { type: string; name: string; rv: bigint }[] = [];
    const watcher = (onEvent: (e: { type: string; name: string; rv: bigint }) => void) => ({
      kind: claimKind,
      projectId: kube.project.id,
      namespace: undefined,
      matches: () => true,
      cursor: 0n,
      send: (event: { type: string; object: { metadata: { name: string; resourceVersion: string } } }) =>
        onEvent({ type: event.type, name: event.object.metadata.name, rv: BigInt(event.object.metadata.resourceVersion) }),
      expire: () => {
        throw new Error('expired');
      },
    });
    try {
      await Promise.all(processes.map((p) => p.hub.sync()));
      const from = await a.hub.sync();
      let alive = true;
      const onA = watcher((e) => alive && received.push(e));
      expect(await a.hub.attach(onA, from)).toBe('attached');
      const committed = new Map<string, string[]>();
      let writes = 0;
      const writer = async (w: number) => {
        for (let i = 0; i < 10; i++) {
          const name = `k-${w}-${i}`;
          await createClaim(db, kube.project.id, { name, network: 'w', prefixLength: 30, reclaimPolicy: 'Delete' }, actor);
          const ops = ['ADDED'];
          committed.set(name, ops);
          await setClaimLabels(db, kube.project.id, name, { n: String(i) }, actor);
          ops.push('MODIFIED');
          if (i % 2) {
            await deleteClaim(db, kube.project.id, name, actor);
            ops.push('DELETED');
          }
          writes++;
        }
      };
      const load = Promise.all(Array.from({ length: 5 }, (_, w) => writer(w)));
      // Process a dies mid-load (its connection to the client gone): the client holds what it received.
      while (writes < 20) await sleep(10);
      alive = false;
      a.hub.detach(onA);
      const last = received.length ? received[received.length - 1].rv : from;
      const onB = watcher((e) => received.push(e));
      expect(await b.hub.attach(onB, last)).toBe('attached');
      await load;
      const expected = [...committed.values()].reduce((n, ops) => n + ops.length, 0);
      const deadline = Date.now() + 10_000;
      while (received.length < expected && Date.now() < deadline) await sleep(20);
      await sleep(200);
      const perObject = new Map<string, string[]>();
      for (const e of received) perObject.set(e.name, [...(perObject.get(e.name) ?? []), e.type]);
      for (const [name, ops] of committed) expect([name, perObject.get(name)]).toEqual([name, ops]);
      expect(received.length).toBe(expected);

      for (let i = 1; i < received.length; i++) expect(received[i].rv).toBeGreaterThan(received[i - 1].rv);
      b.hub.detach(onB);
    } finally {
      for (const p of processes) {
        p.hub.close();
        await p.feed.close();
        await p.handle.close();
      }
    }
  });
});
