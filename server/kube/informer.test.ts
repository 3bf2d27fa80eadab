import { KubeConfig, KubernetesObjectApi, makeInformer, type KubernetesObject } from '@kubernetes/client-node';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { changeFeed } from '@/server/changes/feed';
import { createClaim, deleteClaim, setClaimLabels } from '@/server/ipam/claims';
import { testDb } from '@/test/db';
import { startKubeServer } from '@/test/kube-server';
import { kubeconfig } from './kubeconfig';

/**
 * @kubernetes/client-node's informer (list, then watch from the list's version, relist on 410)
 * against the API: after many concurrent mixed writes, and a feed restart in the middle of them
 * (its watch ends with 410 Expired and the informer relists), its cache equals a fresh list.
 */

// 10,000 in the issue; 3,000 keep the stage short (INFORMER_WRITES=10000 runs the full count).
const WRITES = Number(process.env.INFORMER_WRITES ?? 3_000);
const actor = systemActor('informer-test');
let kube: Awaited<ReturnType<typeof startKubeServer>>;
const NS = '/apis/ipam.miloapis.com/v1alpha1/namespaces/default';

beforeAll(async () => {
  kube = await startKubeServer();
  const net = await kube.request('POST', `${NS}/networks`, {
    body: { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'Network', metadata: { name: 'inf' }, spec: { cidrs: [{ cidr: '10.128.0.0/12' }] } },
  });
  expect(net.status).toBe(201);
});

afterAll(async () => {
  await kube?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test(`an informer's cache equals a fresh list after ${WRITES} mixed writes and a relist on 410`, { timeout: 600_000 }, async () => {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig({ project: kube.project.slug, origin: kube.origin, caPem: kube.caPem, token: kube.tokens.editor }));
  const api = KubernetesObjectApi.makeApiClient(kc);
  const list = () => api.list<KubernetesObject>('ipam.miloapis.com/v1alpha1', 'IPClaim', 'default');
  const informer = makeInformer(kc, `${NS}/ipclaims`, list);
  let connects = 0;
  informer.on('connect', () => connects++);
  informer.on('error', () => {
    // client-go's reflector retries after an error: so does this test's informer.
    setTimeout(() => void informer.start(), 200);
  });
  await informer.start();

  const { db } = testDb();
  const live = new Set<string>();
  let next = 0;
  let done = 0;
  let restarted = false;
  const worker = async () => {
    while (done < WRITES) {
      const roll = Math.random();
      const names = [...live];
      // The project's quota is 100 claims: at most 60 live (and 8 being made).
      if ((roll < 0.5 && names.length < 60) || names.length < 20) {
        const name = `i-${next++}`;
        await createClaim(db, kube.project.id, { name, network: 'inf', prefixLength: 30, reclaimPolicy: 'Delete', labels: { v: '0' } }, actor);
        live.add(name);
      } else {
        const name = names[Math.floor(Math.random() * names.length)];
        live.delete(name);
        if (roll < 0.75) {
          await setClaimLabels(db, kube.project.id, name, { v: String(done) }, actor);
          live.add(name);
        } else await deleteClaim(db, kube.project.id, name, actor);
      }
      done++;
      if (!restarted && done > WRITES / 2) {
        // The feed's connection dies (as in a PostgreSQL restart): its watches end with 410 Expired.
        restarted = true;
        const pid = changeFeed().backendPid();
        expect(pid).toBeDefined();
        await db.execute(sql`select pg_terminate_backend(${pid})`);
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));

  const key = (o: KubernetesObject) => `${o.metadata?.name} ${JSON.stringify(o.metadata?.labels ?? {})}`;
  const fresh = async () => (await list()).items.map(key).sort();
  const deadline = Date.now() + 60_000;
  let expected = await fresh();
  while (JSON.stringify(informer.list().map(key).sort()) !== JSON.stringify(expected)) {
    if (Date.now() > deadline) break;
    await sleep(200);
    expected = await fresh();
  }
  expect(informer.list().map(key).sort()).toEqual(expected);
  expect(expected.length).toBeGreaterThan(0);
  // The 410 made it relist: a second connect.
  expect(connects).toBeGreaterThanOrEqual(2);
  await informer.stop();
});
