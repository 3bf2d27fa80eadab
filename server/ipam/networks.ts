import { randomUUID } from 'node:crypto';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { z } from 'zod';
import { query } from '@/db/query';
import { ipPools, networks } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, invalid, pgCode } from '@/server/errors';
import { allocate, initializePool, lockPool } from './allocator';
import { reservationProblem } from './blocks';
import { cidrSize, familyBits, familyName, formatCidr, overlaps, parseCidr, type Cidr, type Family } from '@/lib/cidr';
import type { NetworkCreateInput, PoolCreateInput } from './schemas';

/** Parses a user-supplied CIDR into a coded, field-level error. */
export function parseCidrField(field: string, text: string, options: { family?: Family; allowBareAddress?: boolean } = {}): Cidr {
  const parsed = parseCidr(text.trim(), { strict: true, ...options });
  if (!parsed.ok) throw new DomainError('InvalidCidr', `${field}: ${parsed.error.reason}`, field, { input: text, suggestion: parsed.error.suggestion });
  return parsed.cidr;
}

/**
 * A requested prefix length beyond its family's bits (/33 for IPv4, /129 for IPv6, which the schema
 * refuses alike) is an invalid field: 400 ValidationFailed. `PrefixLengthRejected` is kept for a
 * valid length that a pool's rules refuse.
 */
export function checkPrefixLength(family: Family, len: number): void {
  if (len > familyBits(family)) throw invalid('prefixLength', `/${len} is not a valid ${familyName(family)} prefix length (0–${familyBits(family)})`);
}

interface Rules {
  minPrefixLength?: number;
  maxPrefixLength?: number;
  defaultPrefixLength?: number;
  strategy?: 'FirstFit' | 'BestFit';
  /** Exact counts: validated numbers or decimal strings (`addressCount`). */
  reserveLeading?: number | string;
  reserveTrailing?: number | string;
}

/**
 * Fills in and checks a pool's allocation rules against its CIDR, naming the offending field
 * (under `prefix`, when the rules sit inside a larger input). Reservations are exact at any size:
 * each must fit the pool, and the trailing one what the leading one leaves.
 */
export function resolveRules(cidr: Cidr, rules: Rules, prefix?: string) {
  const field = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const bits = familyBits(cidr.family);
  const min = rules.minPrefixLength ?? cidr.prefix;
  const max = rules.maxPrefixLength ?? bits;
  const fallback = cidr.family === 4 ? 28 : 64;
  const def = rules.defaultPrefixLength ?? Math.min(max, Math.max(min, fallback));
  if (min < cidr.prefix || min > bits) throw invalid(field('minPrefixLength'), `must be between /${cidr.prefix} (the pool's own size) and /${bits}`);
  if (max < min || max > bits) throw invalid(field('maxPrefixLength'), `must be between minPrefixLength (/${min}) and /${bits}`);
  if (def < min || def > max) throw invalid(field('defaultPrefixLength'), `must be between /${min} and /${max}`);
  const leading = BigInt(rules.reserveLeading ?? 0);
  const trailing = BigInt(rules.reserveTrailing ?? 0);
  const size = cidrSize(cidr);
  if (leading > size) throw invalid(field('reserveLeading'), `${leading} addresses do not fit the ${size} addresses of ${formatCidr(cidr)}`);
  const problem = reservationProblem(cidr, leading, trailing);
  if (problem) throw invalid(field('reserveTrailing'), `${problem}: at most ${size - leading} trailing addresses fit after the leading reservation`);
  return { minPrefixLength: min, maxPrefixLength: max, defaultPrefixLength: def, strategy: rules.strategy ?? 'FirstFit', leading, trailing };
}

async function insertPool(
  tx: DbOrTx,
  values: { id?: string; projectId: string; networkId: string; parentPoolId: string | null; name: string; kind: string; cidr: Cidr; isDefault?: boolean },
  rules: ReturnType<typeof resolveRules>,
) {
  const capacity = cidrSize(values.cidr) - rules.leading - rules.trailing;
  const [pool] = await tx
    .insert(ipPools)
    .values({
      ...(values.id ? { id: values.id } : {}),
      projectId: values.projectId,
      networkId: values.networkId,
      parentPoolId: values.parentPoolId,
      name: values.name,
      kind: values.kind,
      isDefault: values.isDefault ?? false,
      cidr: formatCidr(values.cidr),
      family: values.cidr.family,
      minPrefixLength: rules.minPrefixLength,
      maxPrefixLength: rules.maxPrefixLength,
      defaultPrefixLength: rules.defaultPrefixLength,
      strategy: rules.strategy,
      reserveLeading: rules.leading.toString(),
      reserveTrailing: rules.trailing.toString(),
      capacity: capacity.toString(),
    })
    .returning({ id: ipPools.id });
  await initializePool(tx, { id: pool.id, projectId: values.projectId, networkId: values.networkId, cidr: values.cidr }, rules.leading, rules.trailing);
  return pool.id;
}

/** The network (by name) that already holds an address overlapping `cidr` in this project. */
async function overlappingRoot(db: DbOrTx, projectId: string, cidr: Cidr) {
  const [hit] = await query(
    db,
    sql`
    select n.name as network, p.cidr::text as cidr from ip_pools p join networks n on n.id = p.network_id
    where p.project_id = ${projectId} and p.parent_pool_id is null and p.cidr && ${formatCidr(cidr)}::cidr limit 1`,
    z.object({ network: z.string(), cidr: z.string() }),
  );
  return hit;
}

/**
 * Creates a network with its root pools. Roots of one project never overlap: a conflict is a 409
 * `Overlap` naming the network that holds the range (the exclusion constraint is the final word).
 */
export async function createNetwork(db: DbOrTx, projectId: string, input: NetworkCreateInput, actor: Actor, namespace = DEFAULT_NAMESPACE) {
  const roots = input.cidrs.map((r, i) => {
    const cidr = parseCidrField(`cidrs.${i}.cidr`, r.cidr);
    return { cidr, name: r.name ?? `${input.name}-v${cidr.family}${i > 0 ? `-${i}` : ''}`, rules: resolveRules(cidr, r, `cidrs.${i}`) };
  });
  for (let i = 0; i < roots.length; i++) {
    for (let j = 0; j < i; j++) {
      const a = roots[i].cidr;
      const b = roots[j].cidr;
      if (overlaps(a, b)) {
        throw new DomainError('Overlap', `cidrs.${i}: ${formatCidr(a)} overlaps ${formatCidr(b)} in the same request`, `cidrs.${i}.cidr`);
      }
    }
  }
  try {
    return await db.transaction(async (tx) => {
      const [network] = await tx
        .insert(networks)
        .values({ projectId, namespace, name: input.name, description: input.description ?? '', createdBy: actor.type === 'user' ? actor.id : null })
        .returning({ id: networks.id, name: networks.name });
      for (const [i, root] of roots.entries()) {
        const clash = await overlappingRoot(tx, projectId, root.cidr);
        if (clash) {
          throw new DomainError('Overlap', `${formatCidr(root.cidr)} overlaps ${clash.cidr} of network "${clash.network}"`, `cidrs.${i}.cidr`, {
            network: clash.network,
            cidr: clash.cidr,
          });
        }
        await insertPool(tx, { projectId, networkId: network.id, parentPoolId: null, name: root.name, kind: 'Root', cidr: root.cidr }, root.rules);
      }
      await recordEvent(tx, {
        actor,
        projectId,
        action: 'network.create',
        objectType: 'network',
        objectId: network.id,
        objectName: network.name,
        after: { cidrs: roots.map((r) => formatCidr(r.cidr)) },
      });
      return getNetwork(tx, projectId, input.name, namespace);
    });
  } catch (e) {
    const code = pgCode(e);
    if (code === '23505') throw new DomainError('Conflict', `network "${input.name}" already exists`, 'name');
    if (code === '23P01') {
      for (const [i, root] of roots.entries()) {
        const clash = await overlappingRoot(db, projectId, root.cidr);
        if (clash)
          throw new DomainError('Overlap', `${formatCidr(root.cidr)} overlaps ${clash.cidr} of network "${clash.network}"`, `cidrs.${i}.cidr`, {
            network: clash.network,
          });
      }
      throw new DomainError('Overlap', 'a root CIDR overlaps another network of this project', 'cidrs');
    }
    throw e;
  }
}

/**
 * Carves a child pool out of a parent pool (a `PoolCarve` allocation in the parent). A child pool
 * is used only by claims that name it, unless `default` marks it as the network's default (then
 * claims and pod blocks naming no pool try it before the root pools).
 */
export async function createChildPool(db: Db, projectId: string, input: PoolCreateInput, actor: Actor) {
  try {
    return await db.transaction(async (tx) => {
      const network = await findNetwork(tx, projectId, input.network);
      const [parentRow] = await tx
        .select({ id: ipPools.id })
        .from(ipPools)
        .where(and(eq(ipPools.networkId, network.id), eq(ipPools.name, input.parent)));
      if (!parentRow) throw new DomainError('NotFound', `pool "${input.parent}" not found in network "${input.network}"`, 'parent');
      const parent = (await lockPool(tx, parentRow.id))!;
      let request: { cidr: Cidr } | { prefixLength: number };
      if (input.cidr) request = { cidr: parseCidrField('cidr', input.cidr, { family: parent.family }) };
      else if (input.prefixLength !== undefined) request = { prefixLength: input.prefixLength };
      else throw invalid('prefixLength', 'give a cidr inside the parent or a prefixLength');
      const len = 'cidr' in request ? request.cidr.prefix : request.prefixLength;
      checkPrefixLength(parent.family, len);
      if (len < parent.minPrefixLength || len > parent.maxPrefixLength) {
        throw new DomainError(
          'PrefixLengthRejected',
          `/${len} is outside pool ${parent.name}'s rules (/${parent.minPrefixLength}–/${parent.maxPrefixLength})`,
          'prefixLength',
        );
      }
      // The child's id is chosen first so the carve (taken under the parent's lock) can name it.
      const childId = randomUUID();
      const carve = await allocate(tx, parent.id, request, 'PoolCarve', { childPoolId: childId });
      if (!carve) throw new DomainError('Exhausted', `pool ${parent.name} has no free /${len}`, 'prefixLength');
      const rules = resolveRules(carve.cidr, input);
      await insertPool(
        tx,
        {
          id: childId,
          projectId,
          networkId: network.id,
          parentPoolId: parent.id,
          name: input.name,
          kind: 'Child',
          cidr: carve.cidr,
          isDefault: input.default ?? false,
        },
        rules,
      );
      await recordEvent(tx, {
        actor,
        projectId,
        action: 'pool.create',
        objectType: 'pool',
        objectId: childId,
        objectName: input.name,
        after: { parent: parent.name, cidr: formatCidr(carve.cidr), default: input.default ?? false },
      });
      return { id: childId, name: input.name, cidr: formatCidr(carve.cidr) };
    });
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `pool "${input.name}" already exists in network "${input.network}"`, 'name');
    throw e;
  }
}

/** Where REST v1 and the console work: the Kubernetes API's `default` namespace. */
export const DEFAULT_NAMESPACE = 'default';

const networkColumns = {
  id: networks.id,
  namespace: networks.namespace,
  name: networks.name,
  description: networks.description,
  createdAt: networks.createdAt,
};

/** A network of the project by namespace (REST v1 and the console: `default`) and name, or NotFound naming the field. */
export async function findNetwork(db: DbOrTx, projectId: string, name: string, field = 'network', namespace = DEFAULT_NAMESPACE) {
  const [network] = await db
    .select(networkColumns)
    .from(networks)
    .where(and(eq(networks.projectId, projectId), eq(networks.namespace, namespace), eq(networks.name, name)));
  if (!network) throw new DomainError('NotFound', `network "${name}" not found`, field);
  return network;
}

export interface PoolView {
  id: string;
  name: string;
  kind: string;
  /** A child pool that claims naming no pool use (see createChildPool). */
  isDefault: boolean;
  parentPoolId: string | null;
  cidr: string;
  family: 4 | 6;
  strategy: string;
  minPrefixLength: number;
  maxPrefixLength: number;
  defaultPrefixLength: number;
  reserveLeading: string;
  reserveTrailing: string;
  /** Every address of the CIDR: capacity = allocated + reserved + available. */
  capacity: string;
  /** The leading and trailing reservations (never allocatable). */
  reserved: string;
  allocated: string;
  available: string;
  /** allocated / (capacity − reserved): the share of the allocatable space in use (1 when there is none). */
  utilization: number;
  allocationCount: number;
  phase: 'Ready' | 'Exhausted';
}

/** The share of the allocatable space in use, 6 decimals (exact enough for bars and alerts even for IPv6 sizes). */
function usedShare(allocated: bigint, allocatable: bigint) {
  return allocatable === 0n ? 1 : Number((allocated * 1_000_000n) / allocatable) / 1_000_000;
}

/** Counters → the view every surface shows (exact decimal strings; utilization as a ratio). */
export function poolView(p: typeof ipPools.$inferSelect): PoolView {
  const allocatable = BigInt(p.capacity);
  const allocated = BigInt(p.allocated);
  const reserved = BigInt(p.reserveLeading) + BigInt(p.reserveTrailing);
  const available = allocatable - allocated;
  return {
    id: p.id,
    name: p.name,
    kind: p.kind,
    isDefault: p.isDefault,
    parentPoolId: p.parentPoolId,
    cidr: p.cidr,
    family: p.family as 4 | 6,
    strategy: p.strategy,
    minPrefixLength: p.minPrefixLength,
    maxPrefixLength: p.maxPrefixLength,
    defaultPrefixLength: p.defaultPrefixLength,
    reserveLeading: BigInt(p.reserveLeading).toString(),
    reserveTrailing: BigInt(p.reserveTrailing).toString(),
    capacity: (allocatable + reserved).toString(),
    reserved: reserved.toString(),
    allocated: allocated.toString(),
    available: available.toString(),
    utilization: usedShare(allocated, allocatable),
    allocationCount: p.allocationCount,
    phase: available === 0n ? 'Exhausted' : 'Ready',
  };
}

/** A family's figures summed over a network's root pools (child pools are inside their roots). */
export interface FamilyTotals {
  capacity: string;
  reserved: string;
  allocated: string;
  available: string;
  utilization: number;
}

/** Sums of root pools per family: a network's utilization (child pools are inside their roots). */
function familyTotals(pools: PoolView[]) {
  const out: Record<'IPv4' | 'IPv6', FamilyTotals | null> = { IPv4: null, IPv6: null };
  for (const family of [4, 6] as const) {
    const roots = pools.filter((p) => p.family === family && p.parentPoolId === null);
    if (!roots.length) continue;
    let capacity = 0n;
    let reserved = 0n;
    let allocated = 0n;
    for (const r of roots) {
      capacity += BigInt(r.capacity);
      reserved += BigInt(r.reserved);
      allocated += BigInt(r.allocated);
    }
    const available = capacity - reserved - allocated;
    out[familyName(family)] = {
      capacity: capacity.toString(),
      reserved: reserved.toString(),
      allocated: allocated.toString(),
      available: available.toString(),
      utilization: usedShare(allocated, capacity - reserved),
    };
  }
  return out;
}

/** One network with its pools and per-family utilization. */
export async function getNetwork(db: DbOrTx, projectId: string, name: string, namespace = DEFAULT_NAMESPACE) {
  const network = await findNetwork(db, projectId, name, 'name', namespace);
  const pools = (await db.select().from(ipPools).where(eq(ipPools.networkId, network.id)).orderBy(asc(ipPools.cidr))).map(poolView);
  const [{ claims }] = await query(db, sql`select count(*)::int as claims from ip_claims where network_id = ${network.id}`, z.object({ claims: z.number() }));
  return { ...network, pools, utilization: familyTotals(pools), claimCount: claims };
}

/**
 * The project's networks with their pools and utilization, by namespace and name: one namespace's
 * (`default` unless said: REST v1 and the console) or, with `namespace: null`, every namespace's;
 * a page starts after the key `after` (keyset, the Kubernetes API's `continue`) or at `offset`.
 */
export async function listNetworks(
  db: DbOrTx,
  projectId: string,
  options: { limit: number; offset: number; search?: string; namespace?: string | null; after?: { namespace: string; name: string } },
) {
  const namespace = options.namespace === undefined ? DEFAULT_NAMESPACE : options.namespace;
  const where = and(
    eq(networks.projectId, projectId),
    namespace === null ? undefined : eq(networks.namespace, namespace),
    options.search ? sql`${networks.name} ilike ${'%' + options.search + '%'}` : undefined,
    options.after ? sql`(${networks.namespace}, ${networks.name}) > (${options.after.namespace}, ${options.after.name})` : undefined,
  );
  const list = await db
    .select(networkColumns)
    .from(networks)
    .where(where)
    .orderBy(asc(networks.namespace), asc(networks.name))
    .limit(options.limit + 1)
    .offset(options.offset);
  const hasMore = list.length > options.limit;
  const page = list.slice(0, options.limit);
  const ids = page.map((n) => n.id);
  const pools = ids.length
    ? (
        await db
          .select()
          .from(ipPools)
          .where(sql`${ipPools.networkId} = any(${`{${ids.join(',')}}`}::uuid[])`)
          .orderBy(asc(ipPools.cidr))
      ).map((p) => ({ networkId: p.networkId, view: poolView(p) }))
    : [];
  const claimCounts = ids.length
    ? await query(
        db,
        sql`select network_id, count(*)::int as n from ip_claims where network_id = any(${`{${ids.join(',')}}`}::uuid[]) group by 1`,
        z.object({ network_id: z.string(), n: z.number() }),
      )
    : [];
  const [{ total }] = await query(db, sql`select count(*)::int as total from networks where ${where}`, z.object({ total: z.number() }));
  const items = page.map((n) => {
    const mine = pools.filter((p) => p.networkId === n.id).map((p) => p.view);
    return { ...n, pools: mine, utilization: familyTotals(mine), claimCount: claimCounts.find((c) => c.network_id === n.id)?.n ?? 0 };
  });
  return { items, total, nextOffset: hasMore ? options.offset + options.limit : null };
}

/** Changes a network's description (what of a network can change: its CIDRs cannot). */
export async function updateNetworkDescription(db: DbOrTx, projectId: string, name: string, description: string, actor: Actor, namespace = DEFAULT_NAMESPACE) {
  const network = await findNetwork(db, projectId, name, 'name', namespace);
  if (network.description === description) return { changed: false };
  await db.update(networks).set({ description }).where(eq(networks.id, network.id));
  await recordEvent(db, {
    actor,
    projectId,
    action: 'network.update',
    objectType: 'network',
    objectId: network.id,
    objectName: name,
    before: { description: network.description },
    after: { description },
  });
  return { changed: true };
}

/** Deletes a network that holds no claims or retained allocations (409 otherwise, with counts). */
export async function deleteNetwork(db: DbOrTx, projectId: string, name: string, actor: Actor, namespace = DEFAULT_NAMESPACE) {
  return db.transaction(async (tx) => {
    const network = await findNetwork(tx, projectId, name, 'name', namespace);
    await tx.execute(sql`select id from networks where id = ${network.id} for update`);
    // The row lock waits for every insert that names the network (its foreign keys lock the row too):
    // what is counted here is all there is. A cluster attached to it is counted as well (its
    // foreign key would refuse the delete): it must be deleted first, which releases its pods.
    const [counts] = await query(
      tx,
      sql`
      select (select count(*)::int from ip_claims where network_id = ${network.id}) as claims,
             (select count(*)::int from ip_allocations where network_id = ${network.id} and retained_name is not null) as retained,
             (select count(*)::int from ip_allocations where network_id = ${network.id} and kind = 'PodAddress') as pods,
             (select count(*)::int from clusters where network_id = ${network.id}) as clusters`,
      z.object({ claims: z.number(), retained: z.number(), pods: z.number(), clusters: z.number() }),
    );
    if (counts.claims || counts.retained || counts.pods || counts.clusters) {
      throw new DomainError(
        'Conflict',
        `network "${name}" is in use: ${counts.claims} claim(s), ${counts.retained} retained allocation(s), ${counts.pods} pod address(es), ${counts.clusters} cluster(s); release or delete them first`,
        'name',
        counts,
      );
    }
    await tx.delete(networks).where(eq(networks.id, network.id));
    await recordEvent(tx, { actor, projectId, action: 'network.delete', objectType: 'network', objectId: network.id, objectName: name });
    return { name, deleted: true };
  });
}
