/**
 * Pod address leases for the CNI path. A node draws pod addresses from its own blocks (NodeBlock
 * pools carved from the cluster's network, à la Calico block affinity): an ADD locks only its
 * node's block, so ADDs on different nodes run in parallel, and the network's pools are locked
 * only to carve a new block. The exclusion constraint on allocations is the final guard: two
 * clusters on one network can never hold the same address.
 *
 * The lock order. ADD (alone or batched), DEL, GC, block carve, block return and cluster deletion
 * take the rows they lock in this one order, so none of them waits for a lock held by one that waits
 * for it (no deadlock; a victim would be retried only after PostgreSQL's 1 s deadlock timeout):
 *
 *   1. the cluster's row (ADD and carve FOR KEY SHARE, several clusters by id; deletion FOR UPDATE);
 *   2. the carve's advisory lock per (cluster, node, family);
 *   3. pod leases, by (node, family, address) (cni_lease_release.sql);
 *   4. node blocks' pool rows, by (cluster, node, family, cidr) — an ADD batch locks its nodes' blocks
 *      with room so (cni_lease_add_many.sql), a DEL or GC through the leases of 3 (a node's blocks of
 *      one family are disjoint: address order is block order);
 *   5. the network's pools the blocks are carved from, by id (a carve locks them all before it
 *      tries any: cni_node_block_ensure.sql; returns take their parents by id);
 *   6. graphile-worker job keys (the return checks scheduled by DELs and carves).
 */
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query, timestampColumn } from '@/db/query';
import { podLeases } from '@/db/schema';
import { eventActor, recordEvent, type Actor } from '@/server/audit/events';
import { asDomainError, DomainError, pgCode } from '@/server/errors';
import { env } from '@/server/env';
import { logError } from '@/server/observability/log';
import { formatIp, parseCidr, parseCidrOrThrow, type Cidr, type Family } from '@/lib/cidr';
import type { TokenCluster } from '@/server/tenancy/tokens';
import { addInBatch } from './add-batch';
import type { AddInput, LeaseKey } from './schemas';

/**
 * A cluster as the lease operations take it: found by name (`findCluster`), or read with a cluster
 * token (the same shape, `TokenCluster`, which tenancy owns).
 */
export type ClusterRef = TokenCluster;

/**
 * Seconds a node keeps an emptied block before it goes back to its pool (`CNI_BLOCK_GRACE_SECONDS`,
 * default 300; 0 returns it with the DEL that emptied it). A node whose pods restart one at a time
 * keeps its block instead of carving a new one per ADD.
 */
export function blockGraceSeconds(): number {
  return env().CNI_BLOCK_GRACE_SECONDS;
}

/** Addresses kept out of every node block: the network address and the gateway (.1), and the IPv4 broadcast. */
const BLOCK_LEADING = 2n;
const blockTrailing = (family: Family) => (family === 4 ? 1n : 0n);
/** Smallest block a node falls back to when the pools are too fragmented for the configured size. */
const MIN_BLOCK_PREFIX: Record<Family, number> = { 4: 28, 6: 124 };

export interface LeaseAddress {
  family: Family;
  /** Pod address in CIDR notation with the node block's prefix, as a CNI result wants it. */
  address: string;
  gateway: string;
}

const familyRow = z.object({ family: z.number() });
const existingLeaseRow = z.object({
  id: z.string(),
  family: z.number(),
  address: z.string(),
  block: z.string(),
  pool_id: z.string(),
  allocation_id: z.string(),
  node: z.string(),
});
/** cni_node_block_ensure_locked's answer (server/cni/sql/cni_node_block_ensure.sql). */
const ensureRow = z.object({
  result: z.union([
    z.object({ room: z.literal(true) }),
    z.object({ carved: z.object({ pool: z.string(), cidr: z.string() }) }),
    z.object({ exhausted: z.literal(true) }),
    z.object({ clusterGone: z.literal(true) }),
  ]),
});
/** cni_lease_release's answer: the attachments it released. */
const releasedRow = z.object({ released: z.array(z.object({ containerId: z.string(), ifname: z.string(), address: z.string() })) });
const gcCandidateRow = z.object({ id: z.string(), container_id: z.string(), ifname: z.string(), young: z.boolean() });
const roomRow = z.object({ room: z.boolean() });
const leaseListRow = z.object({
  id: z.string(),
  cluster: z.string(),
  address: z.string(),
  family: z.number(),
  node: z.string(),
  podNamespace: z.string().nullable(),
  podName: z.string().nullable(),
  containerId: z.string(),
  ifname: z.string(),
  cniNetwork: z.string(),
  createdAt: timestampColumn,
  checkedAt: timestampColumn.nullable(),
});
const totalRow = z.object({ total: z.number() });
const clusterUsageRow = z.object({
  cluster: z.string(),
  network: z.string(),
  leases: z.number(),
  nodes: z.number(),
  blocks: z.number(),
  blockCapacity: z.string(),
});
const nodeUsageRow = z.object({ cluster: z.string(), node: z.string(), leases: z.number() });
const namespaceUsageRow = z.object({ cluster: z.string(), namespace: z.string(), leases: z.number() });
/** An audit event of the CNI path (events.id is a bigserial: the driver hands it over as text). */
const cniEventRow = z.object({
  id: z.union([z.string(), z.number()]).transform(Number),
  at: timestampColumn,
  action: z.string(),
  cluster: z.string(),
  reason: z.string().nullable(),
});
const returnedRow = z.object({ returned: z.boolean() });

function gatewayOf(block: Cidr): string {
  return formatIp(block.family, block.network + 1n);
}

function leaseAddress(address: string, blockCidr: string): LeaseAddress {
  const block = parseCidrOrThrow(blockCidr);
  const host = parseCidrOrThrow(address);
  return { family: block.family, address: `${formatIp(host.family, host.network)}/${block.prefix}`, gateway: gatewayOf(block) };
}

/** The families the cluster's network offers (one address per family per attachment). */
async function networkFamilies(db: DbOrTx, networkId: string): Promise<Family[]> {
  const r = await query(db, sql`select distinct family from ip_pools where network_id = ${networkId} and parent_pool_id is null order by family`, familyRow);
  return r.map((x) => Number(x.family) as Family);
}

async function existingLeases(db: DbOrTx, clusterId: string, key: LeaseKey) {
  return query(
    db,
    sql`
    select l.id, l.family, l.address::text as address, p.cidr::text as block, l.pool_id, l.allocation_id, l.node
    from pod_leases l join ip_pools p on p.id = l.pool_id
    where l.cluster_id = ${clusterId} and l.cni_network = ${key.cniNetwork} and l.container_id = ${key.containerId} and l.ifname = ${key.ifname}
    order by l.family`,
    existingLeaseRow,
  );
}

/**
 * Makes sure the node has room for a `family` address: carves a block when none of its blocks has
 * room (`needed`), or — ahead of need — when none has more than a quarter of its room left
 * (`spare`). One statement (server/cni/sql/cni_node_block_ensure.sql, under the cluster's row lock:
 * cni_node_block_ensure_locked.sql, so a deleted cluster gets no block): under a per-(cluster, node,
 * family) advisory lock it looks at the node's blocks again and carves only if they still lack
 * room, so a burst of ADDs on a new node carves one block, not one each; the parent pool's row is
 * locked only by the carve. The carve also schedules the block's return check: a block carved
 * ahead of need may never be needed, and an ADD that carved may fail.
 *
 * In one process, callers for the same node and family share the call in flight: a burst of ADDs
 * that all found no room waits for one carve instead of queueing a statement each on the lock.
 */
function ensureNodeBlock(db: Db, cluster: ClusterRef, node: string, family: Family, mode: 'needed' | 'spare'): Promise<void> {
  const key = `${cluster.id}:${node}:${family}`;
  let carving = carvesInFlight.get(key);
  if (!carving) {
    carving = carveIfShort(db, cluster, node, family, mode).finally(() => carvesInFlight.delete(key));
    carvesInFlight.set(key, carving);
  }
  return carving;
}

/** Node block carves in flight in this process, by cluster, node and family. */
const carvesInFlight = new Map<string, Promise<void>>();

async function carveIfShort(db: Db, cluster: ClusterRef, node: string, family: Family, mode: 'needed' | 'spare'): Promise<void> {
  const args = {
    cluster: cluster.id,
    clusterName: cluster.name,
    project: cluster.projectId,
    network: cluster.networkId,
    node,
    family,
    mode,
    preferredPrefix: family === 4 ? cluster.nodeBlockPrefixV4 : cluster.nodeBlockPrefixV6,
    minPrefix: MIN_BLOCK_PREFIX[family],
    reserveLeading: Number(BLOCK_LEADING),
    reserveTrailing: Number(blockTrailing(family)),
    blockGraceSeconds: blockGraceSeconds(),
  };
  const [{ result }] = await query(db, sql`select cni_node_block_ensure_locked(${JSON.stringify(args)}::jsonb) as result`, ensureRow);
  if ('clusterGone' in result) throw clusterGone(cluster);
  if ('exhausted' in result) {
    throw new DomainError('Exhausted', `network "${cluster.networkName}" has no room for another IPv${family} node block or pod address`, 'network');
  }
}

/** Carves the node's next block in the background; a failure only means the next ADD carves it (or finds the network full, or the cluster or its project gone). */
function carveSpare(db: Db, cluster: ClusterRef, node: string, family: Family) {
  ensureNodeBlock(db, cluster, node, family, 'spare').catch((e) => {
    if (!asDomainError(e)) logError('cni spare block', e);
  });
}

/**
 * An ADD or carve for a cluster deleted, or being deleted, meanwhile (server/cni/sql/cni_lease_add_confirmed.sql: both lock the
 * cluster's row, so they either finish before its deletion is marked or find it marked or gone): 404, as for an unknown cluster.
 */
const clusterGone = (cluster: Pick<ClusterRef, 'name'>) =>
  new DomainError('NotFound', `cluster "${cluster.name}" not found (it has been deleted or is being deleted)`, 'cluster');

/** ADD attempts that found a new block filled by others before they got to it, before giving up for now (the plugin retries: code 11). */
const MAX_BLOCK_ROUNDS = 8;

/**
 * CNI ADD: returns the attachment's addresses, allocating what is missing (one per family the
 * network offers). Idempotent: the same key returns the same addresses. With `confirmToken` (the
 * api_tokens id the call came with) the ADD checks in its own transaction that the token is
 * unrevoked; if it is not, the ADD fails Unauthenticated and changes nothing. The ADD is one statement,
 * sent with the other ADDs in flight (add-batch.ts); when the node needs a new block for a family,
 * the block is carved (ensureNodeBlock) and the ADD goes again. Concurrent ADDs of one key race on
 * the unique attachment index; the loser retries and finds the winner's lease.
 */
export async function addLease(db: Db, cluster: ClusterRef, input: AddInput, actor: Actor, confirmToken?: string): Promise<LeaseAddress[]> {
  for (let attempt = 0, rounds = 0; ; attempt++) {
    try {
      const result = await addLeaseInOneStatement(db, cluster, input, actor, confirmToken);
      if (!('needsBlock' in result)) return result;
      if (++rounds > MAX_BLOCK_ROUNDS) {
        throw new DomainError('Unavailable', `node "${input.node}" keeps filling its new address blocks before this ADD gets one; try again`, 'node');
      }
      for (const family of result.needsBlock) await ensureNodeBlock(db, cluster, input.node, family as Family, 'needed');
    } catch (e) {
      const code = pgCode(e);
      if ((code === '23505' || code === '40P01') && attempt < 3) continue;
      throw e;
    }
  }
}

/**
 * The ADD as one statement (server/cni/sql/cni_lease_add.sql, or with the other ADDs in
 * flight cni_lease_add_many.sql: add-batch.ts): the addresses, or the families that
 * need a new node block (the statement then changed nothing).
 */
async function addLeaseInOneStatement(
  db: Db,
  cluster: ClusterRef,
  input: AddInput,
  actor: Actor,
  confirmToken?: string,
): Promise<LeaseAddress[] | { needsBlock: number[] }> {
  const args = {
    ...(confirmToken ? { token: confirmToken } : {}),
    cluster: cluster.id,
    project: cluster.projectId,
    network: cluster.networkId,
    cniNetwork: input.cniNetwork,
    containerId: input.containerId,
    ifname: input.ifname,
    node: input.node,
    podNamespace: input.podNamespace ?? null,
    podName: input.podName ?? null,
    pod: input.podName ? `${input.podNamespace ?? ''}/${input.podName}` : null,
    objectName: `${cluster.name}/${input.containerId.slice(0, 12)}/${input.ifname}`,
    actor: eventActor(actor),
  };
  const result = await addInBatch<
    | { addresses: { family: number; address: string; block: string }[]; lowOnRoom?: number[] }
    | { noPools: true }
    | { needsBlock: number[] }
    | { tokenRevoked: true }
    | { tokenForbidden: true }
    | { clusterGone: true }
  >(db, args);
  if ('tokenRevoked' in result) throw new DomainError('Unauthenticated', 'this token has been revoked');
  if ('tokenForbidden' in result)
    throw new DomainError('Forbidden', 'this token acts as a viewer now (its creator’s role in the project); an ADD needs the editor role');
  if ('clusterGone' in result) throw clusterGone(cluster);
  if ('needsBlock' in result) return result;
  if ('noPools' in result) throw new DomainError('Exhausted', `network "${cluster.networkName}" has no pools`, 'network');
  for (const family of result.lowOnRoom ?? []) carveSpare(db, cluster, input.node, family as Family);
  return result.addresses.map((a) => leaseAddress(a.address, a.block)).sort((a, b) => a.family - b.family);
}

type LeaseSelector = { key: LeaseKey } | { all: true } | { ids: string[] };

/**
 * Releases leases (CNI DEL, GC) and returns what was released. Empty node blocks go back to their
 * pool in the same transaction (at once, or after the grace period: see blockGraceSeconds).
 */
export async function releaseLeases(db: Db, cluster: Pick<ClusterRef, 'id' | 'projectId' | 'name'>, selector: LeaseSelector, actor: Actor, reason = 'cni.del') {
  for (let attempt = 0; ; attempt++) {
    try {
      return await releaseLeasesIn(db, cluster, selector, actor, reason);
    } catch (e) {
      // A deadlock victim was undone whole: run it again. The CNI lock order (above) leaves none
      // among the CNI's own statements; this covers locks taken outside the CNI path (a network's
      // or project's deletion locking the same pools).
      if (pgCode(e) === '40P01' && attempt < 3) continue;
      throw e;
    }
  }
}

/** `releaseLeases` as one statement in `db`. */
async function releaseLeasesIn(db: DbOrTx, cluster: Pick<ClusterRef, 'id' | 'projectId' | 'name'>, selector: LeaseSelector, actor: Actor, reason: string) {
  // One statement (server/cni/sql/cni_lease_release.sql): the leases, their addresses, the
  // return of node blocks left empty (now for a whole cluster, else after the grace period) and the
  // audit event, all or nothing.
  const args = {
    cluster: cluster.id,
    project: cluster.projectId,
    ...('key' in selector ? { mode: 'key', ...selector.key } : 'all' in selector ? { mode: 'all' } : { mode: 'ids', ids: selector.ids }),
    action: reason,
    objectName: 'key' in selector ? `${cluster.name}/${selector.key.containerId.slice(0, 12)}/${selector.key.ifname}` : cluster.name,
    actor: eventActor(actor),
    blockGraceSeconds: blockGraceSeconds(),
  };
  const [{ released }] = await query(db, sql`select cni_lease_release(${JSON.stringify(args)}::jsonb) as released`, releasedRow);
  return released;
}

/** Normalizes an address or CIDR from a CNI result (`10.0.0.5/24`) to the bare address. */
function bareAddress(text: string): string | null {
  const parsed = parseCidr(text.split('/')[0], { allowBareAddress: true });
  return parsed.ok ? formatIp(parsed.cidr.family, parsed.cidr.network) : null;
}

/**
 * CNI CHECK: the runtime's prevResult must list exactly the lease's addresses. A mismatch is an
 * error for the caller and an event the tenant sees (recorded even though the call fails).
 */
export async function checkLease(db: Db, cluster: ClusterRef, key: LeaseKey, prevIps: { address: string }[], actor: Actor) {
  const leases = await existingLeases(db, cluster.id, key);
  if (leases.length === 0) throw new DomainError('NotFound', `no lease for ${key.containerId}/${key.ifname} on network "${key.cniNetwork}"`, 'containerId');
  const expected = leases.map((l) => bareAddress(l.address)!).sort();
  const reported = prevIps.map((ip) => bareAddress(ip.address) ?? `invalid:${ip.address}`).sort();
  const same = expected.length === reported.length && expected.every((a, i) => a === reported[i]);
  await db
    .update(podLeases)
    .set({ checkedAt: sql`now()` })
    .where(sql`id = any(${`{${leases.map((l) => l.id).join(',')}}`}::uuid[])`);
  if (!same) {
    const message = `CHECK mismatch for ${key.containerId.slice(0, 12)}/${key.ifname}: runtime has [${reported.join(', ')}], Meridian leased [${expected.join(', ')}]`;
    await recordEvent(db, {
      actor,
      projectId: cluster.projectId,
      action: 'cni.check.mismatch',
      objectType: 'cluster',
      objectId: cluster.id,
      objectName: cluster.name,
      reason: message,
      after: { containerId: key.containerId, ifname: key.ifname, expected, reported, node: leases[0].node },
    });
    throw new DomainError('CheckMismatch', message, 'prevResult', { expected, reported });
  }
  return { ok: true as const };
}

/**
 * CNI GC: releases the leases of `node` (the node whose runtime sent the list) on `cniNetwork`
 * that are not in the runtime's valid attachments, sparing leases younger than the grace period
 * (an ADD may be in flight). Other nodes' leases are never considered: a runtime lists only the
 * attachments of its own node.
 */
export async function gcLeases(
  db: Db,
  cluster: ClusterRef,
  input: { cniNetwork: string; node: string; validAttachments: { containerID: string; ifname: string }[] },
  graceSeconds: number,
  actor: Actor,
) {
  const valid = new Set(input.validAttachments.map((a) => `${a.containerID}\u0000${a.ifname}`));
  const candidates = await query(
    db,
    sql`
    select id, container_id, ifname, created_at > now() - ${`${graceSeconds} seconds`}::interval as young
    from pod_leases where node = ${input.node} and cluster_id = ${cluster.id} and cni_network = ${input.cniNetwork}`,
    gcCandidateRow,
  );
  const stale = candidates.filter((c) => !valid.has(`${c.container_id}\u0000${c.ifname}`) && !c.young);
  const spared = candidates.filter((c) => !valid.has(`${c.container_id}\u0000${c.ifname}`) && c.young).length;
  const released = stale.length ? await releaseLeases(db, cluster, { ids: stale.map((s) => s.id) }, actor, 'cni.gc') : [];
  if (released.length || spared) {
    await recordEvent(db, {
      actor,
      projectId: cluster.projectId,
      action: 'cni.gc.summary',
      objectType: 'cluster',
      objectId: cluster.id,
      objectName: cluster.name,
      reason: `GC on node ${input.node} released ${released.length} lease(s)${spared ? `, spared ${spared} younger than ${graceSeconds}s` : ''}`,
      after: { node: input.node, released: released.map((r) => r.address) },
    });
  }
  return { released, kept: candidates.length - released.length, spared };
}

/** CNI STATUS: ready while every family can still get an address (room in a block, or a block to carve). */
export async function clusterStatus(db: DbOrTx, cluster: ClusterRef) {
  for (const family of await networkFamilies(db, cluster.networkId)) {
    const [r] = await query(
      db,
      sql`
      select exists (
        select 1 from node_blocks b join ip_pools p on p.id = b.pool_id
        where b.cluster_id = ${cluster.id} and b.family = ${family} and p.allocated < p.capacity
      ) or exists (
        select 1 from ip_free_blocks f join ip_pools p on p.id = f.pool_id
        where p.network_id = ${cluster.networkId} and p.family = ${family} and p.kind <> 'NodeBlock' and (p.parent_pool_id is null or p.is_default)
          and f.prefix_length <= ${MIN_BLOCK_PREFIX[family]}
      ) as room`,
      roomRow,
    );
    if (!r.room) return { ready: false as const, reason: 'Exhausted', message: `no IPv${family} pod addresses left in network "${cluster.networkName}"` };
  }
  return { ready: true as const };
}

/** Leases of a project (or one cluster), searchable by IP, pod or node, paginated. */
export async function listLeases(db: DbOrTx, projectId: string, input: { cluster?: string; search?: string; limit: number; offset: number }) {
  const term = input.search?.trim();
  const filters = [sql`l.project_id = ${projectId}`];
  if (input.cluster) filters.push(sql`c.name = ${input.cluster}`);
  if (term) {
    const isAddress = /^[0-9a-fA-F:.]+$/.test(term) && (term.includes('.') || term.includes(':')) && parseCidr(term, { allowBareAddress: true }).ok;
    filters.push(
      isAddress
        ? sql`l.address = ${term}::inet`
        : sql`(l.pod_name ilike ${'%' + term + '%'} or l.pod_namespace ilike ${'%' + term + '%'} or l.node ilike ${'%' + term + '%'} or l.container_id like ${term + '%'})`,
    );
  }
  const where = sql.join(filters, sql` and `);
  const items = await query(
    db,
    sql`
    select l.id, c.name as cluster, host(l.address) as address, l.family, l.node, l.pod_namespace as "podNamespace", l.pod_name as "podName",
           l.container_id as "containerId", l.ifname, l.cni_network as "cniNetwork", l.created_at as "createdAt", l.checked_at as "checkedAt"
    from pod_leases l join clusters c on c.id = l.cluster_id
    where ${where} order by l.created_at desc, l.id limit ${input.limit} offset ${input.offset}`,
    leaseListRow,
  );
  const [{ total }] = await query(db, sql`select count(*)::int as total from pod_leases l join clusters c on c.id = l.cluster_id where ${where}`, totalRow);
  return {
    items,
    total,
    nextOffset: input.offset + items.length < total ? input.offset + items.length : null,
  };
}

/** Pod address use of a network (or project) per cluster, node and namespace. */
export async function podUsage(db: DbOrTx, projectId: string, options: { networkId?: string } = {}) {
  const net = options.networkId ? sql`and c.network_id = ${options.networkId}` : sql``;
  const byCluster = await query(
    db,
    sql`
    select c.name as cluster, n.name as network,
      (select count(*)::int from pod_leases l where l.cluster_id = c.id) as leases,
      (select count(distinct node)::int from node_blocks b where b.cluster_id = c.id) as nodes,
      (select count(*)::int from node_blocks b where b.cluster_id = c.id) as blocks,
      (select coalesce(sum(p.capacity), 0)::text from node_blocks b join ip_pools p on p.id = b.pool_id where b.cluster_id = c.id) as "blockCapacity"
    from clusters c join networks n on n.id = c.network_id where c.project_id = ${projectId} ${net} order by c.name`,
    clusterUsageRow,
  );
  const byNode = await query(
    db,
    sql`
    select c.name as cluster, l.node, count(*)::int as leases from pod_leases l join clusters c on c.id = l.cluster_id
    where l.project_id = ${projectId} ${net} group by 1, 2 order by 3 desc, 1, 2 limit 100`,
    nodeUsageRow,
  );
  const byNamespace = await query(
    db,
    sql`
    select c.name as cluster, coalesce(l.pod_namespace, '(none)') as namespace, count(*)::int as leases from pod_leases l join clusters c on c.id = l.cluster_id
    where l.project_id = ${projectId} ${net} group by 1, 2 order by 3 desc, 1, 2 limit 100`,
    namespaceUsageRow,
  );
  return { byCluster, byNode, byNamespace };
}

/** CHECK mismatches and GC runs of a project, newest first (from the audit log). */
export async function cniEvents(db: DbOrTx, projectId: string, limit = 50) {
  return query(
    db,
    sql`
    select id, at, action, object_name as cluster, reason from events
    where project_id = ${projectId} and action in ('cni.check.mismatch', 'cni.gc.summary') order by id desc limit ${limit}`,
    cniEventRow,
  );
}

/** Returns a node block to its pool if it is (still) empty — the `cni__return_block` job. */
export async function returnNodeBlockIfEmpty(db: DbOrTx, poolId: string): Promise<boolean> {
  const [{ returned }] = await query(db, sql`select cni_node_block_return(${poolId}::uuid) as returned`, returnedRow);
  return returned;
}
