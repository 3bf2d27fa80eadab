/**
 * Watch delivery: `node --import tsx bench/watch.ts [rate] [seconds]`.
 *
 * Real parts only: a fresh PostgreSQL database (DATABASE_URL's server, or a throwaway embedded one
 * with `wal_level=logical`), and two watch hubs (server/kube/watch.ts), each over a change feed of
 * its own (server/changes/feed.ts: its own temporary slot and connection) and a database pool of
 * its own — what two web processes hold. Writers commit mixed changes through the domain functions
 * REST v1 and the console call (IP claims created, relabelled and deleted; a network's description
 * changed) at `rate` per second (default 2,000; the machine may give less: the rate reached is
 * printed) for `seconds` (default 5), while 1, 10 and then 100 watchers, split over the two hubs,
 * follow IP claims and networks.
 *
 * Prints, per watcher count: the commits reached per second; delivery p50/p99 (from the writer's
 * commit returning to the watcher receiving the event); and the database work per committed change
 * on each hub — feed polls (one statement each) and objects read to make events (a get of the
 * object and one of its metadata: two statements each) — which must not grow with the number of
 * watchers. Figures only; nothing is asserted.
 */
import { sql } from 'drizzle-orm';
import { createDb } from '../db/client';
import { kubeKinds } from '../server/api/kinds';
import { systemActor } from '../server/audit/events';
import { createChangeFeed } from '../server/changes/feed';
import { createClaim, deleteClaim, setClaimLabels } from '../server/ipam/claims';
import { createNetwork, updateNetworkDescription } from '../server/ipam/networks';
import { KubeWatchHub, type Watcher } from '../server/kube/watch';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { benchDatabase } from './lib/harness';

const rate = Number(process.argv[2] ?? 2000);
const seconds = Number(process.argv[3] ?? 5);
const actor = systemActor('bench');

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function main() {
  const database = await benchDatabase({ connections: 48 });
  const { db } = database.handle;
  const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
  await db.execute(sql`update allowance_buckets set "limit" = 1000000000`).catch(() => {});
  await createNetwork(db, project.id, { name: 'bench', cidrs: [{ cidr: '10.0.0.0/8' }] }, actor);
  const hubs = ['a', 'b'].map((name) => {
    const handle = createDb(database.url, { max: 8, applicationName: `bench-watch-hub-${name}` });
    return {
      name,
      handle,
      hub: new KubeWatchHub(createChangeFeed(database.url, { applicationName: `bench-watch-feed-${name}`, pollMs: 10 }), kubeKinds, handle.db),
    };
  });
  await Promise.all(hubs.map((h) => h.hub.sync()));
  const claimKind = kubeKinds.find((k) => k.kind === 'IPClaim')!;
  const networkKind = kubeKinds.find((k) => k.kind === 'Network')!;

  // What each write is known by in its event: the claim's name and its label `v` (or the network's description).
  const committedAt = new Map<string, number>();
  let serial = 0;
  const live: string[] = [];
  for (let i = 0; i < 200; i++) {
    const name = `seed-${i}`;
    await createClaim(db, project.id, { name, network: 'bench', prefixLength: 30, reclaimPolicy: 'Delete', labels: { v: 'seed' } }, actor);
    live.push(name);
  }

  console.log(`watch delivery: target ${rate} commits/s for ${seconds} s per run, two hubs (two feeds, two pools)`);
  console.log('watchers | commits/s | events received | delivery p50 ms | p99 ms | per change on each hub: feed polls, objects read (2 statements each)');
  for (const count of [1, 10, 100]) {
    const delays: number[] = [];
    let received = 0;
    const watchers: { hub: KubeWatchHub; w: Watcher }[] = [];
    for (let i = 0; i < count; i++) {
      const { hub } = hubs[i % 2];
      const kind = i % 5 === 4 ? networkKind : claimKind;
      const w: Watcher = {
        kind,
        projectId: project.id,
        namespace: undefined,
        matches: () => true,
        cursor: 0n,
        send: (event) => {
          received++;
          const o = event.object;
          const key = kind === networkKind ? `net:${String(o.spec.description ?? '')}` : `${o.metadata.name}:${o.metadata.labels?.v ?? ''}:${event.type}`;
          const at = committedAt.get(key);
          if (at !== undefined) delays.push(performance.now() - at);
        },
        expire: () => {},
      };
      const from = await hub.sync();
      await hub.attach(w, from);
      watchers.push({ hub, w });
    }
    const before = hubs.map((h) => ({ polls: h.hub.feed.statements(), reads: h.hub.reads }));
    let commits = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    const writer = async () => {
      while (performance.now() < deadline) {
        // Paced: commit i is due at started + i / rate.
        const due = started + (serial * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const n = serial++;
        const roll = n % 10;
        if (roll === 9) {
          const description = `d-${n}`;
          await updateNetworkDescription(db, project.id, 'bench', description, actor);
          committedAt.set(`net:${description}`, performance.now());
        } else if (roll === 8 && live.length > 100) {
          const name = live.splice(Math.floor(Math.random() * live.length), 1)[0];
          await deleteClaim(db, project.id, name, actor);
          committedAt.set(`${name}:${'*'}:DELETED`, performance.now());
        } else if (roll === 7) {
          const name = `c-${n}`;
          await createClaim(db, project.id, { name, network: 'bench', prefixLength: 30, reclaimPolicy: 'Delete', labels: { v: String(n) } }, actor);
          committedAt.set(`${name}:${n}:ADDED`, performance.now());
          live.push(name);
        } else {
          const name = live[Math.floor(Math.random() * live.length)];
          const index = live.indexOf(name);
          live.splice(index, 1); // not deleted while relabelled
          await setClaimLabels(db, project.id, name, { v: String(n) }, actor);
          committedAt.set(`${name}:${n}:MODIFIED`, performance.now());
          live.push(name);
        }
        commits++;
      }
    };
    await Promise.all(Array.from({ length: 32 }, writer));
    const elapsed = (performance.now() - started) / 1000;
    await Promise.all(hubs.map((h) => h.hub.sync()));
    await new Promise((r) => setTimeout(r, 300));
    const per = hubs.map((h, i) => {
      const polls = h.hub.feed.statements() - before[i].polls;
      const reads = h.hub.reads - before[i].reads;
      return `${h.name}: ${(polls / commits).toFixed(3)} polls, ${(reads / commits).toFixed(2)} reads`;
    });
    console.log(
      `${String(count).padStart(8)} | ${(commits / elapsed).toFixed(0).padStart(9)} | ${String(received).padStart(15)} | ${percentile(delays, 50).toFixed(1).padStart(15)} | ${percentile(delays, 99).toFixed(1).padStart(6)} | ${per.join('; ')}`,
    );
    for (const { hub, w } of watchers) hub.detach(w);
  }
  for (const h of hubs) {
    h.hub.close();
    await h.hub.feed.close();
    await h.handle.close();
  }
  await database.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
