import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { csvField } from '@/server/audit/csv';
import { DomainError } from '@/server/errors';

/**
 * The address audit of a network: per pool, every allocation with its owner, every reservation and
 * every free block, with the pool's counters and the totals of what is listed. It is read in one
 * REPEATABLE READ, read-only transaction, so the rows and the counters are one snapshot: for each
 * pool, allocated (listed) = the `allocated` counter, reserved (listed) = the pool's reservations,
 * and allocated + reserved + free = the CIDR's addresses, even while claims and pod leases are being
 * created (`consistent` says so per pool).
 */

export interface AuditPool {
  id: string;
  name: string;
  cidr: string;
  family: 'IPv4' | 'IPv6';
  kind: string;
  parent: string | null;
  /** The CIDR's addresses. */
  size: string;
  /** The maintained counters. */
  counters: { capacity: string; allocated: string; reserved: string; allocations: number };
  /** Sums of the rows listed. */
  totals: { allocated: string; reserved: string; free: string; allocations: number; freeBlocks: number };
  /** totals.allocated = counters.allocated, totals.reserved = counters.reserved, allocated + reserved + free = size. */
  consistent: boolean;
}

const auditEntryRow = z.object({
  cidr: z.string(),
  /** What the row is. `Retained`: a claim's allocation kept after its claim was deleted. */
  kind: z.enum(['Claim', 'Retained', 'Reservation', 'PoolCarve', 'PodAddress', 'Free']),
  /** Addresses in the block, exact. */
  addresses: z.string(),
  /** `IPClaim`, `MachineInterface`, `ChildPool`, `NodeBlock`, `PodLease`, `RetainedClaim`, `Reservation`; null for a free block or an unowned row. */
  ownerKind: z.string().nullable(),
  owner: z.string().nullable(),
  detail: z.string().nullable(),
  createdAt: z.string().nullable(),
});
/** A row of the audit: what `poolEntries` reads, with its pool's name. */
export type AuditEntry = z.infer<typeof auditEntryRow> & { pool: string };

export interface AuditCursor {
  pool: string;
  after: string;
}

const poolRow = z.object({
  id: z.string(),
  name: z.string(),
  cidr: z.string(),
  family: z.enum(['IPv4', 'IPv6']),
  kind: z.string(),
  parent: z.string().nullable(),
  size: z.string(),
  counters: z.object({ capacity: z.string(), allocated: z.string(), reserved: z.string(), allocations: z.number() }),
  totals: z.object({ allocated: z.string(), reserved: z.string(), free: z.string(), allocations: z.number(), freeBlocks: z.number() }),
  node: z.string().nullable(),
  clusterId: z.string().nullable(),
});
type PoolRow = z.infer<typeof poolRow>;

const iso = (col: string) => sql.raw(`to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);

/** The network's pools, in address order, with their counters and the sums of their rows. */
async function auditPools(db: DbOrTx, projectId: string, networkId: string): Promise<PoolRow[]> {
  return query(
    db,
    sql`
    select p.id, p.name, p.cidr::text as cidr, case p.family when 4 then 'IPv4' else 'IPv6' end as family, p.kind, pp.name as parent,
           power(2::numeric, (case p.family when 4 then 32 else 128 end) - masklen(p.cidr))::numeric(40, 0)::text as size,
           json_build_object('capacity', p.capacity::text, 'allocated', p.allocated::text,
                             'reserved', (p.reserve_leading + p.reserve_trailing)::text, 'allocations', p.allocation_count) as counters,
           json_build_object('allocated', coalesce(a.allocated, 0)::text, 'reserved', coalesce(a.reserved, 0)::text, 'free', coalesce(f.free, 0)::numeric(40, 0)::text,
                             'allocations', coalesce(a.n, 0), 'freeBlocks', coalesce(f.n, 0)) as totals,
           nb.node, nb.cluster_id as "clusterId"
      from ip_pools p
      left join ip_pools pp on pp.id = p.parent_pool_id
      left join node_blocks nb on nb.pool_id = p.id
      left join lateral (select sum(size) filter (where kind <> 'Reservation') as allocated, sum(size) filter (where kind = 'Reservation') as reserved,
                                count(*) filter (where kind <> 'Reservation')::int as n
                           from ip_allocations where pool_id = p.id) a on true
      left join lateral (select sum(power(2::numeric, (case p.family when 4 then 32 else 128 end) - masklen(cidr))) as free, count(*)::int as n
                           from ip_free_blocks where pool_id = p.id) f on true
     where p.project_id = ${projectId} and p.network_id = ${networkId}
     order by p.cidr, p.id`,
    poolRow,
  );
}

function isConsistent(p: Omit<AuditPool, 'consistent'>): boolean {
  const t = p.totals;
  return (
    t.allocated === p.counters.allocated &&
    t.reserved === p.counters.reserved &&
    t.allocations === p.counters.allocations &&
    BigInt(t.allocated) + BigInt(t.reserved) + BigInt(t.free) === BigInt(p.size)
  );
}

/** Up to `limit` rows of one pool after `after` (a CIDR), in address order: allocations with their owners and free blocks. */
async function poolEntries(db: DbOrTx, pool: PoolRow, after: string | null, limit: number): Promise<z.infer<typeof auditEntryRow>[]> {
  const afterA = after === null ? sql`` : sql`and a.cidr > ${after}::cidr`;
  const afterF = after === null ? sql`` : sql`and f.cidr > ${after}::cidr`;
  const bits = pool.family === 'IPv4' ? 32 : 128;
  return query(
    db,
    sql`
    select e.cidr, e.kind, e.addresses, e."ownerKind", e.owner, e.detail, e."createdAt" from (
      (select a.cidr,
              case when a.kind = 'Claim' and a.claim_id is null then 'Retained' else a.kind end as kind,
              a.size::text as addresses,
              case
                when a.kind = 'Reservation' then 'Reservation'
                when a.kind = 'Claim' and c.id is null then 'RetainedClaim'
                when a.kind = 'Claim' and c.owner_ref->>'kind' = 'Machine' then 'MachineInterface'
                when a.kind = 'Claim' then 'IPClaim'
                when a.kind = 'PoolCarve' and nb.pool_id is not null then 'NodeBlock'
                when a.kind = 'PoolCarve' then 'ChildPool'
                when a.kind = 'PodAddress' and l.id is not null then 'PodLease'
              end as "ownerKind",
              case
                when a.kind = 'Claim' and c.id is null then a.retained_name
                when a.kind = 'Claim' and c.owner_ref->>'kind' = 'Machine' then c.owner_ref->>'name'
                when a.kind = 'Claim' then c.name
                when a.kind = 'PoolCarve' and nb.pool_id is not null then ncl.name || '/' || nb.node
                when a.kind = 'PoolCarve' then cp.name
                when a.kind = 'PodAddress' then lcl.name || '/' || coalesce(l.pod_namespace, '') || '/' || coalesce(l.pod_name, '')
              end as owner,
              case
                when a.kind = 'Reservation' then 'kept out of allocation by the pool''s leading or trailing reservation'
                when a.kind = 'Claim' and c.id is null then 'retained until ' || ${iso('a.retained_until')}
                when a.kind = 'Claim' and c.owner_ref->>'kind' = 'Machine' then 'claim ' || c.name
                when a.kind = 'PodAddress' then 'node ' || l.node || ', container ' || l.container_id || ', ' || l.ifname
              end as detail,
              ${iso('a.created_at')} as "createdAt"
         from ip_allocations a
         left join ip_claims c on c.id = a.claim_id
         left join ip_pools cp on cp.id = a.child_pool_id
         left join node_blocks nb on nb.pool_id = a.child_pool_id
         left join clusters ncl on ncl.id = nb.cluster_id
         left join lateral (select l.id, l.node, l.container_id, l.ifname, l.pod_namespace, l.pod_name, l.cluster_id from pod_leases l
                             where a.kind = 'PodAddress' and l.node = ${pool.node} and l.cluster_id = ${pool.clusterId}::uuid and l.allocation_id = a.id) l on true
         left join clusters lcl on lcl.id = l.cluster_id
        where a.pool_id = ${pool.id} ${afterA}
        order by a.cidr limit ${limit})
      union all
      (select f.cidr, 'Free', power(2::numeric, ${bits} - masklen(f.cidr))::numeric(40, 0)::text, null, null, null, null
         from ip_free_blocks f where f.pool_id = ${pool.id} ${afterF}
        order by f.cidr limit ${limit})
    ) e order by e.cidr limit ${limit}`,
    auditEntryRow,
  );
}

async function networkId(db: DbOrTx, projectId: string, name: string): Promise<string> {
  const [row] = await query(db, sql`select id from networks where project_id = ${projectId} and name = ${name}`, z.object({ id: z.string() }));
  if (!row) throw new DomainError('NotFound', `network "${name}" not found`, 'name');
  return row.id;
}

/** Runs `fn` in one REPEATABLE READ, read-only transaction: everything it reads is one snapshot. */
function inSnapshot<T>(db: Db, fn: (tx: DbOrTx) => Promise<T>): Promise<T> {
  return db.transaction(fn, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}

export interface AuditPage {
  network: string;
  pools: AuditPool[];
  items: (AuditEntry & { poolCidr: string })[];
  next: AuditCursor | null;
}

/**
 * One page of a network's audit (up to `limit` rows from `cursor`), with every pool's counters and
 * totals, all read in one snapshot. A page is consistent with the totals it carries; the CSV export
 * (`networkAuditCsv`) reads the whole report in one snapshot.
 */
export async function networkAuditPage(db: Db, projectId: string, name: string, cursor: AuditCursor | null, limit: number): Promise<AuditPage> {
  return inSnapshot(db, async (tx) => {
    const id = await networkId(tx, projectId, name);
    const pools = await auditPools(tx, projectId, id);
    const items: AuditPage['items'] = [];
    let start = 0;
    if (cursor) {
      start = pools.findIndex((p) => p.name === cursor.pool);
      if (start < 0) throw new DomainError('ValidationFailed', 'continue: its pool no longer exists; start again', 'continue');
    }
    let next: AuditCursor | null = null;
    for (let i = start; i < pools.length; i++) {
      const pool = pools[i];
      const want = limit - items.length;
      const rows = await poolEntries(tx, pool, i === start && cursor?.after ? cursor.after : null, want + 1);
      const taken = rows.slice(0, want);
      items.push(...taken.map((r) => ({ ...r, pool: pool.name, poolCidr: pool.cidr })));
      if (rows.length > want) {
        next = { pool: pool.name, after: taken[taken.length - 1].cidr };
        break;
      }
      if (items.length >= limit && i + 1 < pools.length) {
        next = { pool: pools[i + 1].name, after: '' };
        break;
      }
    }
    return { network: name, pools: pools.map(publicPool), items, next };
  });
}

function publicPool({ node: _node, clusterId: _clusterId, ...p }: PoolRow): AuditPool {
  return { ...p, consistent: isConsistent(p) };
}

/** `?continue=` token of a page's cursor, and back. */
export function encodeAuditCursor(c: AuditCursor | null): string | null {
  return c ? Buffer.from(JSON.stringify([c.pool, c.after])).toString('base64url') : null;
}

export function decodeAuditCursor(token: string | undefined): AuditCursor | null {
  if (!token) return null;
  try {
    const [pool, after] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof pool === 'string' && typeof after === 'string' && pool.length <= 200 && after.length <= 50) return { pool, after };
  } catch {
    // falls through to the refusal
  }
  throw new DomainError('ValidationFailed', 'continue: is not a token returned by this API', 'continue');
}

export const ADDRESS_AUDIT_CSV_COLUMNS = ['pool', 'pool_cidr', 'cidr', 'kind', 'addresses', 'owner_kind', 'owner', 'detail', 'created_at'] as const;

/**
 * The whole audit of a network as CSV lines (header first), read in one snapshot and page by page
 * (1,000 rows at a time), so memory stays flat however many pod leases the network holds. Each pool
 * opens with a `Pool` row whose detail carries its counters and totals. Fields are neutralised
 * against spreadsheet formulas as the audit log's export does.
 */
export async function* networkAuditCsv(db: Db, projectId: string, name: string, signal?: AbortSignal): AsyncGenerator<string> {
  yield* snapshotStream<string>(db, async (tx, emit) => {
    const id = await networkId(tx, projectId, name);
    const pools = await auditPools(tx, projectId, id);
    await emit(ADDRESS_AUDIT_CSV_COLUMNS.join(',') + '\r\n');
    for (const raw of pools) {
      const p = publicPool(raw);
      const summary =
        `capacity ${p.counters.capacity}, allocated ${p.totals.allocated} (counter ${p.counters.allocated}), ` +
        `reserved ${p.totals.reserved}, free ${p.totals.free}, ${p.consistent ? 'consistent' : 'INCONSISTENT'}`;
      await emit(csvLine([p.name, p.cidr, p.cidr, 'Pool', p.size, p.kind, p.parent, summary, null]));
      let after: string | null = null;
      for (;;) {
        if (signal?.aborted) return;
        const rows = await poolEntries(tx, raw, after, 1000);
        if (rows.length)
          await emit(rows.map((r) => csvLine([p.name, p.cidr, r.cidr, r.kind, r.addresses, r.ownerKind, r.owner, r.detail, r.createdAt])).join(''));
        if (rows.length < 1000) break;
        after = rows[rows.length - 1].cidr;
      }
    }
  });
}

function csvLine(fields: (string | null)[]): string {
  return fields.map(csvField).join(',') + '\r\n';
}

class StreamClosed extends Error {}

/**
 * Runs `produce` in one snapshot transaction and hands what it emits to the consumer one chunk at
 * a time: the producer waits until the consumer has taken each chunk, so a slow reader holds the
 * transaction open but never grows memory; a consumer that stops ends the transaction.
 */
async function* snapshotStream<T>(db: Db, produce: (tx: DbOrTx, emit: (chunk: T) => Promise<void>) => Promise<void>): AsyncGenerator<T> {
  const queue: T[] = [];
  let finished = false;
  let failure: unknown = null;
  let closed = false;
  const waiting: { consumer: (() => void) | null; producer: (() => void) | null } = { consumer: null, producer: null };
  const wake = () => {
    waiting.consumer?.();
    waiting.consumer = null;
  };
  const run = inSnapshot(db, (tx) =>
    produce(tx, async (chunk) => {
      if (closed) throw new StreamClosed();
      queue.push(chunk);
      wake();
      while (queue.length > 0 && !closed) await new Promise<void>((r) => (waiting.producer = r));
      if (closed) throw new StreamClosed();
    }),
  ).then(
    () => {
      finished = true;
      wake();
    },
    (e: unknown) => {
      failure = e;
      finished = true;
      wake();
    },
  );
  try {
    for (;;) {
      if (queue.length) {
        const chunk = queue.shift() as T;
        waiting.producer?.();
        waiting.producer = null;
        yield chunk;
        continue;
      }
      if (finished) {
        if (failure && !(failure instanceof StreamClosed)) throw failure;
        return;
      }
      await new Promise<void>((r) => (waiting.consumer = r));
    }
  } finally {
    closed = true;
    waiting.producer?.();
    await run;
  }
}
