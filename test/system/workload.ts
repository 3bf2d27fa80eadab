/**
 * The mixed workload of the system tests that break things (chaos, failover): eight clients that
 * create and delete IP claims, add and delete pod leases, request and release machines and read the
 * buckets through the web processes, each request's outcome written to the ledger. Idempotent
 * requests are retried as a careful client would.
 */
import type { Api } from './api';
import type { Ledger } from './ledger';
import type { World } from './world';

/** mulberry32: a small, good-enough seeded generator (a seed replays the same choices). */
export function seededRandom(s: number): () => number {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Names of what the workloads create: unique across every workload of the process (one ledger may see several). */
let seq = 0;

export interface Workload {
  /** Stops the clients after their current request. */
  stop(): Promise<void>;
  /** Bucket reads that showed allocated above the limit (a violation). */
  overLimit: string[];
}

export function startWorkload(api: Api, world: World, ledger: Ledger, random: () => number, options: { clients?: number } = {}): Workload {
  const pickOne = <T>(items: T[]): T | undefined => (items.length ? items[Math.floor(random() * items.length)] : undefined);
  const base = `/api/v1/projects/${world.slug}`;
  const busy = new Set<string>();
  let stopping = false;
  const overLimit: string[] = [];

  /** Picks something the client believes exists and is not being changed by another caller. */
  const take = (keys: string[]) => {
    const key = pickOne(keys.filter((k) => !busy.has(k)));
    if (key) busy.add(key);
    return key;
  };
  const retry = { attempts: 4, pauseMs: 400 };
  // A DEL names the attachment only, as the plugin sends it (the API refuses fields it does not take).
  const cni = (cluster: string, command: 'add' | 'del', containerId: string, node?: string) =>
    api.idempotent(
      'POST',
      `${base}/clusters/${cluster}/cni/${command}`,
      world.clusterTokens[cluster],
      { cniNetwork: 'k8s', containerId, ifname: 'eth0', ...(node ? { node } : {}) },
      retry,
    );

  const operations: [number, () => Promise<void>][] = [
    [
      30,
      async () => {
        const name = `k-${seq++}`;
        const v6 = random() < 0.5;
        ledger.claimCreated(
          name,
          await api.idempotent(
            'POST',
            `${base}/ipclaims`,
            world.token,
            { metadata: { name }, spec: { network: 'vpc', family: v6 ? 'IPv6' : 'IPv4', prefixLength: v6 ? 64 : 28 } },
            retry,
          ),
        );
      },
    ],
    [
      10,
      async () => {
        const name = take(ledger.live(ledger.claims));
        if (!name) return;
        ledger.claimDeleted(name, await api.idempotent('DELETE', `${base}/ipclaims/${name}`, world.token, undefined, retry));
        busy.delete(name);
      },
    ],
    [
      30,
      async () => {
        const cluster = pickOne(world.clusters)!;
        const containerId = `p-${seq++}`;
        ledger.leaseAdded(cluster, containerId, await cni(cluster, 'add', containerId, `node-${Math.floor(random() * 6)}`));
      },
    ],
    [
      15,
      async () => {
        const key = take(ledger.live(ledger.leases));
        if (!key) return;
        const [cluster, containerId] = key.split('/');
        ledger.leaseDeleted(cluster, containerId, await cni(cluster, 'del', containerId));
        busy.delete(key);
      },
    ],
    [
      7,
      async () => {
        const name = `mc-${seq++}`;
        const interfaces = random() < 0.5 ? [{ network: 'vpc', families: random() < 0.5 ? ['IPv4'] : ['IPv4', 'IPv6'], addressClasses: 1 }] : [];
        ledger.machineRequested(
          name,
          await api.idempotent('POST', `${base}/machines`, world.token, { metadata: { name }, spec: { ...world.machineSpec, interfaces } }, retry),
        );
      },
    ],
    [
      5,
      async () => {
        const name = take([...ledger.machines.entries()].filter(([, m]) => m.belief === 'present' && m.release === 'none').map(([n]) => n));
        if (!name) return;
        ledger.machineReleased(name, await api.idempotent('DELETE', `${base}/machines/${name}`, world.token, undefined, retry));
        busy.delete(name);
      },
    ],
    [
      3,
      async () => {
        const o = await api.request('GET', `${base}/allowancebuckets`, world.token);
        if (o.kind !== 'ack') return;
        for (const b of o.body.items as { spec: { resourceType: string }; status: { allocated: number; limit: number } }[]) {
          if (b.status.allocated > b.status.limit) overLimit.push(`${b.spec.resourceType}: ${b.status.allocated} > ${b.status.limit}`);
        }
      },
    ],
  ];
  const totalWeight = operations.reduce((s, [w]) => s + w, 0);
  const chooseOperation = () => {
    let r = random() * totalWeight;
    for (const [w, op] of operations) if ((r -= w) < 0) return op;
    return operations[0][1];
  };
  const clients = Array.from({ length: options.clients ?? 8 }, async () => {
    while (!stopping) await chooseOperation()();
  });
  return {
    overLimit,
    async stop() {
      stopping = true;
      await Promise.all(clients);
    },
  };
}
