/**
 * What must hold after a scale-out or chaos run, checked straight from the tables, the simulator
 * and the workers' job traces. Each check returns human-readable violations (empty when it holds),
 * so a failing run says everything that is wrong at once.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import type { ProviderAdminClient } from '@/server/provider';
import type { OperationRecord } from '@/lib/provider-wire';
import type { JobRun, Kill } from './harness';

type Row = Record<string, unknown>;
const rows = async <T extends Row>(db: Db, q: ReturnType<typeof sql>) => (await db.execute(q)) as unknown as T[];
const show = (r: unknown) => JSON.stringify(r);

/** Runs each named query; every row it returns is a violation. */
async function expectNoRows(db: Db, checks: Record<string, ReturnType<typeof sql>>): Promise<string[]> {
  const out: string[] = [];
  for (const [what, q] of Object.entries(checks)) {
    const found = await rows(db, q);
    for (const r of found.slice(0, 5)) out.push(`${what}: ${show(r)}`);
    if (found.length > 5) out.push(`${what}: … and ${found.length - 5} more`);
  }
  return out;
}

/**
 * IPAM: no overlapping allocations in any pool; every child pool is exactly its carve in its
 * parent; counters equal sums and free + allocated = capacity; free blocks never overlap
 * allocations; claims and pod leases each own exactly their allocation; no address leased twice
 * in one network.
 */
export function checkIpam(db: Db): Promise<string[]> {
  return expectNoRows(db, {
    'overlapping allocations': sql`
      select a.pool_id, a.cidr::text as a, a.kind as a_kind, b.cidr::text as b, b.kind as b_kind
      from ip_allocations a join ip_allocations b on a.pool_id = b.pool_id and a.id < b.id and a.cidr && b.cidr`,
    'child pool without its carve': sql`
      select p.id, p.name, p.cidr::text as cidr from ip_pools p
      where p.parent_pool_id is not null and not exists (
        select 1 from ip_allocations a where a.child_pool_id = p.id and a.pool_id = p.parent_pool_id and a.cidr = p.cidr and a.kind = 'PoolCarve')`,
    'carve without its child pool': sql`
      select a.id, a.cidr::text as cidr from ip_allocations a where a.kind = 'PoolCarve' and not exists (select 1 from ip_pools p where p.id = a.child_pool_id)`,
    'pool counters differ from their allocations': sql`
      select p.name, p.allocated::text as allocated, p.allocation_count, s.summed::text as summed, s.n
      from ip_pools p cross join lateral (
        select coalesce(sum(a.size), 0) as summed, count(*)::int as n from ip_allocations a where a.pool_id = p.id and a.kind <> 'Reservation') s
      where p.allocated <> s.summed or p.allocation_count <> s.n`,
    'free + allocated differs from capacity': sql`
      select p.name, p.capacity::text as capacity, p.allocated::text as allocated, f.free::text as free
      from ip_pools p cross join lateral (
        select coalesce(sum(power(2::numeric, (case when p.family = 4 then 32 else 128 end) - fb.prefix_length)), 0)::numeric(40, 0) as free
        from ip_free_blocks fb where fb.pool_id = p.id) f
      where f.free + p.allocated <> p.capacity`,
    'free block overlapping an allocation or outside its pool': sql`
      select f.pool_id, f.cidr::text as free, a.cidr::text as allocation
      from ip_free_blocks f join ip_pools p on p.id = f.pool_id left join ip_allocations a on a.pool_id = f.pool_id and a.cidr && f.cidr
      where a.id is not null or not (p.cidr >>= f.cidr)`,
    'claim without its own allocation': sql`
      select c.name, c.allocated_cidr::text as cidr from ip_claims c left join ip_allocations a on a.id = c.allocation_id
      where a.id is null or a.claim_id is distinct from c.id or a.cidr <> c.allocated_cidr or a.kind <> 'Claim' or a.pool_id <> c.pool_id`,
    'claim allocation without a claim (and not retained)': sql`
      select a.id, a.cidr::text as cidr from ip_allocations a
      where a.kind = 'Claim' and a.retained_name is null and not exists (select 1 from ip_claims c where c.id = a.claim_id)`,
    'lease without its own allocation': sql`
      select l.container_id, l.address::text as address from pod_leases l left join ip_allocations a on a.id = l.allocation_id
      where a.id is null or a.kind <> 'PodAddress' or a.cidr <> l.address or a.pool_id <> l.pool_id`,
    'pod address allocation without a lease': sql`
      select a.id, a.cidr::text as cidr from ip_allocations a where a.kind = 'PodAddress' and not exists (select 1 from pod_leases l where l.allocation_id = a.id)`,
    'lease outside a block of its cluster and node': sql`
      select l.container_id, l.node, l.address::text as address from pod_leases l left join node_blocks b on b.pool_id = l.pool_id
      where b.pool_id is null or b.cluster_id <> l.cluster_id or b.node <> l.node`,
    'node block pool without its node_blocks row (or the reverse)': sql`
      select p.id, p.name from ip_pools p full join node_blocks b on b.pool_id = p.id
      where (p.kind = 'NodeBlock' and b.pool_id is null) or (b.pool_id is not null and p.kind is distinct from 'NodeBlock')`,
    'address leased twice in one network': sql`
      select p.network_id, l.address::text as address, count(*)::int as n from pod_leases l join ip_pools p on p.id = l.pool_id
      group by 1, 2 having count(*) > 1`,
  });
}

/**
 * Quota: every bucket's `allocated` and claim count equal its live granted claims, `limit` its
 * active grants, and `allocated ≤ limit`; every live granted claim has its live object and every
 * live object its claim.
 */
export function checkQuota(db: Db): Promise<string[]> {
  return expectNoRows(db, {
    'bucket differs from its grants and live granted claims': sql`
      with lim as (
        select g.project_id, a->>'resourceType' as resource_type, sum((a->>'amount')::bigint) as total
        from resource_grants g cross join jsonb_array_elements(g.allowances) a where g.active group by 1, 2
      ), alloc as (
        select c.project_id, r->>'resourceType' as resource_type, sum((r->>'amount')::bigint) as total, count(*)::int as claims
        from resource_claims c cross join jsonb_array_elements(c.requests) r
        where c.status = 'Granted' and c.released_at is null group by 1, 2
      )
      select b.project_id, b.resource_type, b."limit", b.allocated, b.claim_count, coalesce(l.total, 0) as exp_limit,
             coalesce(a.total, 0) as exp_allocated, coalesce(a.claims, 0) as exp_claims
      from allowance_buckets b
        left join lim l on l.project_id = b.project_id and l.resource_type = b.resource_type
        left join alloc a on a.project_id = b.project_id and a.resource_type = b.resource_type
      where b."limit" <> coalesce(l.total, 0) or b.allocated <> coalesce(a.total, 0) or b.claim_count <> coalesce(a.claims, 0)`,
    'bucket over its limit': sql`select project_id, resource_type, "limit", allocated from allowance_buckets where allocated > "limit"`,
    'live granted claims without a bucket': sql`
      select c.project_id, r->>'resourceType' as resource_type from resource_claims c cross join jsonb_array_elements(c.requests) r
      where c.status = 'Granted' and c.released_at is null
        and not exists (select 1 from allowance_buckets b where b.project_id = c.project_id and b.resource_type = r->>'resourceType')`,
    'live IPClaim quota claim without its ipclaim': sql`
      select c.project_id, c.ref_name from resource_claims c
      where c.status = 'Granted' and c.released_at is null and c.ref_kind = 'IPClaim'
        and not exists (select 1 from ip_claims i where i.project_id = c.project_id and i.name = c.ref_name)`,
    'ipclaim without a live quota claim': sql`
      select i.project_id, i.name from ip_claims i
      where not exists (select 1 from resource_claims c where c.project_id = i.project_id and c.ref_kind = 'IPClaim' and c.ref_name = i.name
                          and c.status = 'Granted' and c.released_at is null)`,
    'live Machine quota claim without a live machine': sql`
      select c.project_id, c.ref_name from resource_claims c
      where c.status = 'Granted' and c.released_at is null and c.ref_kind = 'Machine'
        and not exists (select 1 from machines m where m.project_id = c.project_id and m.name = c.ref_name and m.phase <> 'Released')`,
    'live machine without a live quota claim': sql`
      select m.project_id, m.name, m.phase from machines m
      where m.phase <> 'Released' and not exists (
        select 1 from resource_claims c where c.project_id = m.project_id and c.ref_kind = 'Machine' and c.ref_name = m.name
          and c.status = 'Granted' and c.released_at is null)`,
  });
}

/**
 * Fleet: capacity state agrees with its live binding; bindings of one capacity never overlap in
 * time and their epochs only grow (no capacity bound twice); machine phases agree with their
 * bindings; each machine's phase events form one unbroken path ending in its current phase (a
 * transition applied twice would break it).
 */
export async function checkFleet(db: Db): Promise<string[]> {
  const out = await expectNoRows(db, {
    'capacity state disagrees with its live binding': sql`
      select c.device_ref, c.state, a.status from machine_capacity c
        left join machine_allocations a on a.capacity_id = c.id and a.status <> 'Released'
      where (c.state in ('Available', 'Quarantined', 'Retired') and a.id is not null)
         or (c.state = 'Bound' and (a.id is null or a.status not in ('Preparing', 'Committed')))
         or (c.state = 'Cleaning' and (a.id is null or a.status <> 'Releasing'))`,
    // At most one live binding per capacity at any moment is a partial unique index; beyond it, a
    // newer binding (higher epoch) may exist only once every older one is Released.
    'capacity bound twice (an older binding live beside a newer one, or an epoch reused)': sql`
      select c.device_ref, a.epoch, a.status, b.epoch as other_epoch, b.status as other_status
      from machine_allocations a join machine_allocations b on b.capacity_id = a.capacity_id and b.id <> a.id
        join machine_capacity c on c.id = a.capacity_id
      where b.epoch = a.epoch or (b.epoch > a.epoch and a.status <> 'Released')`,
    'capacity epoch behind its bindings': sql`
      select c.device_ref, c.asset_epoch, max(a.epoch) as max_epoch from machine_capacity c join machine_allocations a on a.capacity_id = c.id
      group by c.id having c.asset_epoch <> max(a.epoch)`,
    'machine phase disagrees with its binding': sql`
      select m.name, m.phase, a.status from machines m left join machine_allocations a on a.machine_id = m.id and a.status <> 'Released'
      where (m.phase in ('Bound', 'Installing', 'Ready') and (a.id is null or a.status <> 'Committed'))
         or (m.phase in ('Pending', 'AwaitingApproval', 'Released') and a.id is not null)`,
    'released machine still holding addresses': sql`
      select m.name, c.name as claim from machines m join ip_claims c on c.project_id = m.project_id and c.owner_ref->>'kind' = 'Machine' and c.owner_ref->>'name' = m.name
      where m.phase = 'Released'`,
  });
  const events = await rows<{ machine: string; name: string; phase: string; before: string | null; after: string | null }>(
    db,
    sql`
    select m.id as machine, m.name, m.phase, e.before->>'phase' as before, e.after->>'phase' as after
    from machines m left join events e on e.object_type = 'machine' and e.object_id = m.id::text and e.action like 'machine.phase.%'
    order by m.id, e.id`,
  );
  const paths = new Map<string, { name: string; phase: string; steps: { before: string | null; after: string | null }[] }>();
  for (const e of events) {
    const p = paths.get(e.machine) ?? { name: e.name, phase: e.phase, steps: [] };
    if (e.after !== null) p.steps.push({ before: e.before, after: e.after });
    paths.set(e.machine, p);
  }
  for (const p of paths.values()) {
    let at = 'Pending';
    for (const s of p.steps) {
      if (s.before !== at)
        out.push(`machine ${p.name}: transition ${s.before}→${s.after} recorded while it was ${at} (path ${p.steps.map((x) => x.after).join('→')})`);
      at = s.after!;
    }
    if (at !== p.phase) out.push(`machine ${p.name}: events end in ${at} but the machine is ${p.phase}`);
  }
  return out;
}

/**
 * Provider operations, against the simulator's own records: everything the simulator did is an
 * operation we recorded (nothing submitted under an id we do not know); our outcome matches its
 * outcome; each asset's effect count equals its succeeded operations; each binding was installed
 * at most once and cleaned up at most once (no effect happened twice); and no operation is left
 * unresolved when `settled`.
 */
export async function checkProvider(db: Db, admin: ProviderAdminClient, options: { settled: boolean }): Promise<string[]> {
  const out: string[] = [];
  const ours = await rows<{ id: string; kind: string; state: string; device_ref: string; binding_id: string; last_error: string | null }>(
    db,
    sql`select id, kind, state, device_ref, binding_id, last_error from provider_operations`,
  );
  const byId = new Map(ours.map((o) => [o.id, o]));
  const bindings = new Map(
    (
      await rows<{ id: string; epoch: number; device_ref: string }>(
        db,
        sql`
      select a.id, a.epoch::int as epoch, c.device_ref from machine_allocations a join machine_capacity c on c.id = a.capacity_id`,
      )
    ).map((b) => [b.id, b]),
  );
  const assets = await admin.listAssets({ limit: 1000 });
  if (assets.type !== 'result') return [`cannot list the simulator's assets: ${show(assets)}`];
  const theirs: OperationRecord[] = [];
  for (const asset of assets.value.items) {
    const ops = await admin.listOperations({ assetId: asset.id, limit: 1000 });
    if (ops.type !== 'result') return [`cannot list the simulator's operations of ${asset.id}: ${show(ops)}`];
    const succeeded = ops.value.items.filter((o) => o.state === 'Succeeded').length;
    if (asset.effectCount !== succeeded) out.push(`asset ${asset.id}: ${asset.effectCount} effects but ${succeeded} succeeded operations`);
    theirs.push(...ops.value.items);
  }
  const seen = new Set<string>();
  const perBinding = new Map<string, { install: number; cleanup: number }>();
  for (const op of theirs) {
    seen.add(op.id);
    const mine = byId.get(op.id);
    if (!mine) out.push(`the simulator ran ${op.kind} ${op.id} on ${op.assetId}, which we never recorded`);
    else if (options.settled && op.state !== mine.state && !(op.state === 'Failed' && mine.state === 'Failed')) {
      out.push(`operation ${op.id}: the simulator says ${op.state}, we recorded ${mine.state}`);
    }
    const binding = bindings.get(op.bindingId);
    if (!binding) out.push(`the simulator ran ${op.id} for binding ${op.bindingId}, which we never made`);
    else if (binding.device_ref !== op.assetId || binding.epoch !== op.epoch) {
      out.push(`operation ${op.id} ran on ${op.assetId} epoch ${op.epoch}, but its binding is ${binding.device_ref} epoch ${binding.epoch}`);
    }
    if (op.state === 'Succeeded') {
      const b = perBinding.get(op.bindingId) ?? { install: 0, cleanup: 0 };
      if (op.kind === 'install') b.install++;
      if (op.kind === 'cleanup') b.cleanup++;
      perBinding.set(op.bindingId, b);
    }
  }
  for (const [binding, n] of perBinding) {
    if (n.install > 1) out.push(`binding ${binding} was installed ${n.install} times`);
    if (n.cleanup > 1) out.push(`binding ${binding} was cleaned up ${n.cleanup} times`);
  }
  for (const o of ours) {
    if (o.state === 'Succeeded' && !seen.has(o.id)) out.push(`operation ${o.id} recorded Succeeded, unknown to the simulator`);
    if (options.settled && !['Succeeded', 'Failed'].includes(o.state)) out.push(`operation ${o.id} (${o.kind}) left ${o.state}: ${o.last_error ?? ''}`);
  }
  return out;
}

/**
 * Jobs, from every worker's trace: no job succeeded twice (unless the first run's process was
 * killed before graphile-worker could record the success), and no two runs of one machine's
 * reconciler overlapped — a run's end is its return, or the SIGKILL of its process.
 */
export function checkJobs(runs: JobRun[], kills: Kill[]): string[] {
  const out: string[] = [];
  const killedAt = new Map(kills.map((k) => [k.pid, k.at]));
  const endOf = (r: JobRun) => r.end ?? killedAt.get(r.pid) ?? Infinity;
  const byJob = new Map<string, JobRun[]>();
  for (const r of runs) byJob.set(r.jobId, [...(byJob.get(r.jobId) ?? []), r]);
  for (const [jobId, list] of byJob) {
    const successes = list.filter((r) => r.outcome === 'success').sort((a, b) => a.start - b.start);
    for (let i = 1; i < successes.length; i++) {
      const first = successes[i - 1];
      const k = killedAt.get(first.pid);
      // At-least-once by design: a success logged by a process killed right after (before
      // graphile-worker's complete_job) is run again. Anything else is a duplicate.
      if (!(k !== undefined && k >= first.end! && k - first.end! < 5_000)) {
        out.push(`job ${jobId} (${first.task} ${show(first.payload)}) succeeded twice: on ${first.process} and ${successes[i].process}`);
      }
    }
  }
  const byMachine = new Map<string, JobRun[]>();
  for (const r of runs) {
    if (r.task !== 'machine__reconcile') continue;
    const id = String(r.payload.machineId);
    byMachine.set(id, [...(byMachine.get(id) ?? []), r]);
  }
  for (const [machine, list] of byMachine) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1];
      if (list[i].start < endOf(prev)) {
        out.push(`machine ${machine}: reconciler runs overlapped (job ${prev.jobId} on ${prev.process} and job ${list[i].jobId} on ${list[i].process})`);
      }
    }
  }
  return out;
}

/**
 * graphile-worker's queue: nothing failed for good, nothing left locked by a dead worker. (A keyed job re-added
 * while it runs is retired — key cleared, attempts set to the maximum — and a new one takes the
 * key; a retired job whose worker was killed stays behind with no error. That is not a failure.)
 */
export function checkQueue(db: Db): Promise<string[]> {
  return expectNoRows(db, {
    // Not one graphile-worker retired while it ran (its key added again: attempts set to the
    // maximum, the new job doing its work), which the worker's recorded message tells apart by
    // the attempt that failed (server/worker/runner.ts).
    'permanently failed job': sql`
      select id, task_id, attempts, last_error from graphile_worker._private_jobs
      where attempts >= max_attempts and last_error is not null
        and coalesce(substring(last_error from '\\(attempt (\\d+) of \\d+\\)$')::int, max_attempts) >= max_attempts`,
    // Locked by a worker that is gone (no heartbeat for 30 s): stuck until someone unlocks it.
    'job locked by a dead worker': sql`
      select j.id, j.task_id, j.locked_by, j.locked_at from graphile_worker._private_jobs j
      where j.locked_at is not null and not exists (
        select 1 from worker_heartbeats h where j.locked_by = any(h.graphile_worker_ids) and h.last_seen_at > now() - interval '30 seconds')`,
  });
}

/**
 * Waits until the fleet has nothing left to do: no machine mid-transition, none Pending while
 * capacity of its kind is free, no provider operation unresolved. Returns what is still moving
 * when `timeoutMs` runs out (empty once settled).
 */
export async function waitForFleetToSettle(db: Db, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  for (;;) {
    const moving = await rows<{ what: string }>(
      db,
      sql`
      select 'machine ' || m.name || ' ' || m.phase || ': ' || coalesce(m.phase_reason, '') || coalesce((
               select '; job ' || j.id || ' attempts ' || j.attempts || '/' || j.max_attempts
                      || coalesce(' locked by ' || j.locked_by || ' since ' || j.locked_at, ' unlocked')
                      || ' run_at ' || j.run_at || coalesce(' last error: ' || j.last_error, '')
               from graphile_worker._private_jobs j where j.key = 'machine:' || m.id), '; no job') as what from machines m
      where m.phase in ('Allocating', 'Bound', 'Installing', 'Releasing')
         or (m.deletion_requested_at is not null and m.phase <> 'Released')
         or (m.phase = 'Pending' and (exists (
               select 1 from machine_capacity c where c.class_id = m.class_id and c.location_id = m.location_id and c.state = 'Available')))
      union all
      select 'operation ' || id || ' ' || state from provider_operations where state not in ('Succeeded', 'Failed')`,
    );
    quiet = moving.length === 0 ? quiet + 1 : 0;
    // Twice in a row: a Pending machine woken by a release needs a moment to be picked up.
    if (quiet >= 2) return [];
    if (Date.now() > deadline) return moving.map((m) => m.what);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Waits until no job is locked (a killed worker's jobs are released ~30 s after its last heartbeat) and none is overdue. */
export async function waitForQueueToDrain(db: Db, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const [{ n }] = (await db.execute(sql`
      select count(*)::int as n from graphile_worker._private_jobs
      where locked_at is not null or (run_at < now() - interval '2 seconds' and attempts < max_attempts)`)) as unknown as { n: number }[];
    if (n === 0) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}
