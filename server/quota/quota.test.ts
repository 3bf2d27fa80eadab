import { sql } from 'drizzle-orm';
import { describe, expect, inject, test } from 'vitest';
import { laneOf } from '@/db/batch';
import { createDb, type Db } from '@/db/client';
import { systemActor, type Actor } from '@/server/audit/events';
import { createClaim, deleteClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { quotaAudit } from '@/server/worker/tasks/quota__audit';
import { testDb, uniq } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { admit, admitMachine, releaseMachine, type AdmissionRequest } from './admission';
import { auditQuotaBooks } from './audit';
import { listBuckets, listClaimLog, pruneClaimLog } from './buckets';
import { createGrant, deleteGrant, listGrants, updateGrant } from './grants';
import { approveIncreaseRequest, createIncreaseRequest, listIncreaseRequests, rejectIncreaseRequest } from './increases';
import {
  compileClaimPolicy,
  compileGrantPolicy,
  createClaimPolicy,
  createGrantPolicy,
  deleteGrantPolicy,
  listClaimPolicies,
  listGrantPolicies,
  updateClaimPolicy,
} from './policies';
import { createRegistration, deleteRegistration } from './registrations';

const actor = systemActor('test');
const operator: Actor = { type: 'user', id: '00000000-0000-0000-0000-000000000001', label: 'operator@example.com' };
const IPCLAIMS = 'ipam.miloapis.com/ipclaims';

async function bucket(db: Db, projectId: string, resourceType = IPCLAIMS) {
  return (await listBuckets(db, projectId)).find((b) => b.resourceType === resourceType);
}

async function withNetwork(cidr = '192.0.2.0/24', rules: Record<string, unknown> = { maxPrefixLength: 32, defaultPrefixLength: 32 }) {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr, ...rules }] as never }, actor);
  return { db, project };
}

const claim = (name: string, extra: Record<string, unknown> = {}) => ({ name, network: 'vpc', reclaimPolicy: 'Delete' as const, ...extra });

/** A resource type and kind of this test's own, so policy experiments never touch IPClaim (other files run concurrently). */
async function ownKind(db: Db, options: { grant?: number; register?: boolean } = {}) {
  const suffix = Math.random().toString(36).slice(2, 8);
  const kind = `Widget${suffix}`;
  const resourceType = `test.example.com/widgets-${suffix}`;
  if (options.register !== false) {
    await createRegistration(
      db,
      {
        resourceType,
        consumerKind: 'Project',
        type: 'Entity',
        description: '',
        baseUnit: 'widgets',
        displayUnit: 'widgets',
        unitConversionFactor: 1,
        claimingKinds: [kind],
      },
      operator,
    );
  }
  const { project } = await makeProject(db);
  if (options.grant !== undefined)
    await createGrant(db, { projectId: project.id, name: 'widgets', allowances: [{ resourceType, amount: options.grant }], source: 'Operator' }, operator);
  const request = (name: string, spec: Record<string, unknown> = {}): AdmissionRequest => ({
    projectId: project.id,
    kind,
    name,
    apiVersion: 'test.example.com/v1',
    resource: 'widgets',
    group: 'test.example.com',
    spec,
    actor: operator,
  });
  return { kind, resourceType, project, request, suffix };
}

describe('seeded defaults', () => {
  test('a new project gets the default grant: 100 ipclaims and 10 machines, nothing allocated', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const grants = await listGrants(db, { projectId: project.id, limit: 10, offset: 0 });
    expect(grants.items).toMatchObject([
      {
        name: `default-${project.slug}`,
        active: true,
        source: 'Policy',
        sourceRef: 'default-project-quota',
        allowances: [
          { resourceType: IPCLAIMS, amount: 100 },
          { resourceType: 'metal.datumapis.com/machines', amount: 10 },
        ],
      },
    ]);
    const buckets = await listBuckets(db, project.id);
    expect(buckets.map((b) => [b.resourceType, b.limit, b.allocated, b.available, b.grantCount])).toEqual([
      [IPCLAIMS, 100, 0, 100, 1],
      ['metal.datumapis.com/machines', 10, 0, 10, 1],
    ]);
  });

  test('the seeded policies compile (they are stored Ready by the migration)', async () => {
    const { db } = testDb();
    for (const p of await listGrantPolicies(db)) if (p.name === 'default-project-quota') expect(compileGrantPolicy(p)).toMatchObject({ ready: true });
    const claimPolicies = (await listClaimPolicies(db)).filter((p) => ['IPClaim', 'Machine'].includes(p.triggerKind));
    expect(claimPolicies.map((p) => [p.triggerKind, p.claimNameTemplate, p.ready])).toEqual([
      ['IPClaim', 'ipclaim-{{requestInfo.name}}', true],
      ['Machine', 'machine-{{trigger.metadata.name}}', true],
    ]);
    for (const p of claimPolicies) expect(compileClaimPolicy(p)).toMatchObject({ ready: true });
  });
});

describe('IP claims are admitted in their own transaction', () => {
  test('one claim: limit 100, allocated 1, available 99; deleting it frees exactly one unit', async () => {
    const { db, project } = await withNetwork();
    await createClaim(db, project.id, claim('web'), actor);
    expect(await bucket(db, project.id)).toMatchObject({ limit: 100, allocated: 1, available: 99, claimCount: 1, flag: 'Ok' });
    await createClaim(db, project.id, claim('db'), actor);
    // An idempotent replay admits nothing twice.
    await createClaim(db, project.id, claim('web'), actor);
    expect(await bucket(db, project.id)).toMatchObject({ allocated: 2 });
    await deleteClaim(db, project.id, 'web', actor);
    expect(await bucket(db, project.id)).toMatchObject({ allocated: 1, available: 99, claimCount: 1 });
    const log = await listClaimLog(db, project.id, { limit: 10, offset: 0 });
    expect(log.items.map((c) => [c.name, c.status, c.reason, c.resourceRef.name])).toEqual([
      ['ipclaim-db', 'Granted', 'QuotaAvailable', 'db'],
      ['ipclaim-web', 'Released', 'QuotaAvailable', 'web'],
    ]);
    // Retain keeps the address but the claim object is gone: its quota is released too.
    await createClaim(db, project.id, claim('kept', { reclaimPolicy: 'Retain' }), actor);
    await deleteClaim(db, project.id, 'kept', actor);
    expect(await bucket(db, project.id)).toMatchObject({ allocated: 1 });
  });

  test('500 concurrent creates against a bucket of 100: exactly 100 created, 400 QuotaExceeded, allocated = 100 = live claims', async () => {
    // Its own connection pool, wide enough that many transactions really wait on the bucket at once.
    const handle = createDb(inject('databaseUrl'), { max: 40, applicationName: 'quota-burst' });
    try {
      const db = handle.db;
      const { project } = await makeProject(db);
      // Room for all 500 addresses, so only quota can say no.
      await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '2001:db8:500::/112', maxPrefixLength: 128, defaultPrefixLength: 128 }] }, actor);
      const results = await Promise.allSettled(Array.from({ length: 500 }, (_, i) => createClaim(db, project.id, claim(`c${i}`, { family: 6 }), actor)));
      const created = results.filter((r) => r.status === 'fulfilled');
      const denied = results.filter((r) => r.status === 'rejected' && (r.reason as { code?: string }).code === 'QuotaExceeded');
      const other = results.filter((r) => r.status === 'rejected' && (r.reason as { code?: string }).code !== 'QuotaExceeded');
      expect(other.map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      expect(created.length).toBe(100);
      expect(denied.length).toBe(400);
      const reason = (denied[0] as PromiseRejectedResult).reason as { message: string; details: Record<string, unknown> };
      expect(reason.message).toBe('requested 1 ipam.miloapis.com/ipclaims, available 0, limit 100');
      expect(reason.details).toMatchObject({ requested: 1, available: 0, limit: 100, resourceType: IPCLAIMS });

      const [books] = (await db.execute(sql`
        select (select allocated from allowance_buckets where project_id = ${project.id} and resource_type = ${IPCLAIMS})::int as allocated,
               (select count(*) from ip_claims where project_id = ${project.id})::int as ipclaims,
               (select count(*) from resource_claims where project_id = ${project.id} and status = 'Granted' and released_at is null)::int as live,
               (select count(*) from resource_claims where project_id = ${project.id} and status = 'Denied')::int as denied`)) as unknown as {
        allocated: number;
        ipclaims: number;
        live: number;
        denied: number;
      }[];
      expect(books).toEqual({ allocated: 100, ipclaims: 100, live: 100, denied: 400 });
      const audit = await auditQuotaBooks(db);
      expect(audit.drifted.filter((d) => d.projectId === project.id)).toEqual([]);

      // Release frees exactly one unit, and exactly one more create then fits.
      await deleteClaim(db, project.id, (created[0] as PromiseFulfilledResult<{ claim: { name: string } }>).value.claim.name, actor);
      expect(await bucket(db, project.id)).toMatchObject({ allocated: 99, available: 1 });
      const again = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => createClaim(db, project.id, claim(`again${i}`, { family: 6 }), actor)));
      expect(again.filter((r) => r.status === 'fulfilled').length).toBe(1);
      expect(await bucket(db, project.id)).toMatchObject({ allocated: 100, available: 0, flag: 'Full' });
    } finally {
      await handle.close();
    }
  });

  test('denials are in the claim log with their reason; dry runs evaluate quota and store nothing', async () => {
    const { db, project } = await withNetwork();
    await updateGrant(db, project.id, `default-${project.slug}`, [{ resourceType: IPCLAIMS, amount: 1 }], operator);
    const preview = await createClaim(db, project.id, claim('a'), actor, { dryRun: true });
    expect(preview.claim.name).toBe('a');
    expect(await bucket(db, project.id)).toMatchObject({ limit: 1, allocated: 0 });
    await createClaim(db, project.id, claim('a'), actor);
    await expect(createClaim(db, project.id, claim('b'), actor, { dryRun: true })).rejects.toMatchObject({ code: 'QuotaExceeded' });
    await expect(createClaim(db, project.id, claim('b'), actor)).rejects.toMatchObject({
      code: 'QuotaExceeded',
      message: 'requested 1 ipam.miloapis.com/ipclaims, available 0, limit 1',
    });
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from ip_claims where project_id = ${project.id}`)) as unknown as { n: number }[];
    expect(n).toBe(1);
    const log = await listClaimLog(db, project.id, { status: 'Denied', limit: 10, offset: 0 });
    // The dry run's denial is not logged; the real one is.
    expect(log.items).toHaveLength(1);
    expect(log.items[0]).toMatchObject({
      name: 'ipclaim-b',
      status: 'Denied',
      reason: 'QuotaExceeded',
      message: 'requested 1 ipam.miloapis.com/ipclaims, available 0, limit 1',
      resourceRef: { kind: 'IPClaim', name: 'b' },
      allocations: [{ resourceType: IPCLAIMS, amount: 1, status: 'Denied', reason: 'QuotaExceeded' }],
    });
  });

  test('shrinking a grant below allocated revokes nothing, shows the bucket over its limit, and denies new claims', async () => {
    const { db, project } = await withNetwork();
    for (const n of ['a', 'b', 'c']) await createClaim(db, project.id, claim(n), actor);
    const result = await updateGrant(
      db,
      project.id,
      `default-${project.slug}`,
      [
        { resourceType: IPCLAIMS, amount: 2 },
        { resourceType: 'metal.datumapis.com/machines', amount: 10 },
      ],
      operator,
    );
    expect(result.buckets.find((b) => b.resourceType === IPCLAIMS)).toMatchObject({ limit: 2, allocated: 3 });
    expect(await bucket(db, project.id)).toMatchObject({ limit: 2, allocated: 3, available: 0, flag: 'Over' });
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from ip_claims where project_id = ${project.id}`)) as unknown as { n: number }[];
    expect(n).toBe(3);
    await expect(createClaim(db, project.id, claim('d'), actor)).rejects.toMatchObject({
      code: 'QuotaExceeded',
      message: 'requested 1 ipam.miloapis.com/ipclaims, available 0, limit 2',
    });
    await deleteClaim(db, project.id, 'a', actor);
    await expect(createClaim(db, project.id, claim('d'), actor)).rejects.toMatchObject({ code: 'QuotaExceeded' });
    await deleteClaim(db, project.id, 'b', actor);
    await createClaim(db, project.id, claim('d'), actor);
    expect(await bucket(db, project.id)).toMatchObject({ limit: 2, allocated: 2, flag: 'Full' });
    const events = (await db.execute(sql`select reason from events where project_id = ${project.id} and action = 'quota.grant.update'`)) as unknown as {
      reason: string;
    }[];
    expect(events[0].reason).toContain('allocated 3 > limit 2');
    // Deleting the grant drops the limit to 0 but leaves the claims.
    await deleteGrant(db, project.id, `default-${project.slug}`, operator);
    expect(await bucket(db, project.id)).toMatchObject({ limit: 0, allocated: 2, grantCount: 0, flag: 'Over' });
  });
});

describe('a batch of IP claim creates decides quota once (quota_admit_many)', () => {
  type Books = { allocated: number; claimCount: number; live: number; ipclaims: number; batches: number; inserts: number };
  async function books(db: Db, projectId: string): Promise<Books> {
    const [b] = (await db.execute(sql`
      select (select allocated from allowance_buckets where project_id = ${projectId} and resource_type = ${IPCLAIMS})::int as allocated,
             (select claim_count from allowance_buckets where project_id = ${projectId} and resource_type = ${IPCLAIMS})::int as "claimCount",
             (select count(*) from resource_claims where project_id = ${projectId} and status = 'Granted' and released_at is null)::int as live,
             (select count(*) from ip_claims where project_id = ${projectId})::int as ipclaims,
             -- Claims written by one transaction share its start time: fewer distinct times than claims means batches.
             (select count(distinct created_at) from resource_claims where project_id = ${projectId} and status = 'Granted')::int as batches,
             -- Rows written by one statement share their transaction and command ids.
             (select count(distinct (xmin::text, cmin::text)) from resource_claims where project_id = ${projectId} and status = 'Granted')::int as inserts`)) as unknown as Books[];
    return b;
  }
  async function granted(db: Db, projectId: string) {
    return (await db.execute(sql`
      select name, message, ref_uid as "refUid", (select id::text from ip_claims i where i.project_id = c.project_id and i.name = c.ref_name) as "ipClaimId"
      from resource_claims c where project_id = ${projectId} and status = 'Granted' and released_at is null`)) as unknown as {
      name: string;
      message: string;
      refUid: string;
      ipClaimId: string | null;
    }[];
  }
  /** `n` concurrent creates named `<prefix>0`…: each one's outcome, `created` or its error's code. */
  async function burst(db: Db, projectId: string, prefix: string, n: number, extra: Record<string, unknown> = { family: 6 }) {
    const results = await Promise.allSettled(Array.from({ length: n }, (_, i) => createClaim(db, projectId, claim(`${prefix}${i}`, extra), actor)));
    return results.map((r) => (r.status === 'fulfilled' ? 'created' : ((r.reason as { code?: string }).code ?? String(r.reason))));
  }
  const tally = (outcomes: string[]) => outcomes.reduce<Record<string, number>>((t, o) => ({ ...t, [o]: (t[o] ?? 0) + 1 }), {});
  /** The audit's recount finds the project's books exact. */
  const noDrift = async (db: Db, projectId: string) => expect((await auditQuotaBooks(db)).drifted.filter((d) => d.projectId === projectId)).toEqual([]);

  test('claims that fit go in batches: every claim written with its running total, the bucket grown once per batch, books exact', async () => {
    const { db, project } = await withNetwork('2001:db8:510::/112', { maxPrefixLength: 128, defaultPrefixLength: 128 });
    await updateGrant(db, project.id, `default-${project.slug}`, [{ resourceType: IPCLAIMS, amount: 1000 }], operator);
    const outcomes = await burst(db, project.id, 'b', 120);
    expect(tally(outcomes)).toEqual({ created: 120 });
    const b = await books(db, project.id);
    expect(b).toMatchObject({ allocated: 120, claimCount: 120, live: 120, ipclaims: 120 });
    expect(b.batches).toBeLessThan(120);
    // A batch's claims go in one insert (a claim-by-claim decision writes each row with its own).
    expect(b.inserts).toBe(b.batches);
    // Each claim's message carries the bucket as it stood after that claim: 1..120, each once.
    const claims = await granted(db, project.id);
    const totals = claims.map((c) => Number(/\(allocated (\d+) of 1000\)$/.exec(c.message)?.[1])).sort((x, y) => x - y);
    expect(totals).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    // The quota claim names the IP claim it was written for.
    for (const c of claims) expect(c.refUid).toBe(c.ipClaimId);
    await noDrift(db, project.id);
  });

  test('a batch with more than the bucket has room for is decided claim by claim: exactly the room is granted', async () => {
    const { db, project } = await withNetwork('2001:db8:511::/112', { maxPrefixLength: 128, defaultPrefixLength: 128 });
    await updateGrant(db, project.id, `default-${project.slug}`, [{ resourceType: IPCLAIMS, amount: 7 }], operator);
    const outcomes = await burst(db, project.id, 'r', 40);
    expect(tally(outcomes)).toEqual({ created: 7, QuotaExceeded: 33 });
    expect(await books(db, project.id)).toMatchObject({ allocated: 7, claimCount: 7, live: 7, ipclaims: 7 });
    await noDrift(db, project.id);
  });

  test('claims admitted together whose network then runs out give their quota back', async () => {
    // A /30 of /32s: four addresses for twelve claims, with quota room for all twelve.
    const { db, project } = await withNetwork('198.51.100.0/30');
    const outcomes = await burst(db, project.id, 'x', 12, {});
    expect(tally(outcomes)).toEqual({ created: 4, Exhausted: 8 });
    expect(await books(db, project.id)).toMatchObject({ allocated: 4, claimCount: 4, live: 4, ipclaims: 4 });
    await noDrift(db, project.id);
  });

  test('a quota claim name already held by a live claim fails only that claim; the rest of its batch is created', async () => {
    const { db, project } = await withNetwork('2001:db8:512::/112', { maxPrefixLength: 128, defaultPrefixLength: 128 });
    // Another object's live claim under the name the IPClaim policy renders for "n5" (its books kept).
    await db.execute(sql`
      insert into resource_claims (project_id, name, requests, status, reason, message, allocations, ref_kind, ref_name, created_by)
      values (${project.id}, 'ipclaim-n5', ${JSON.stringify([{ resourceType: IPCLAIMS, amount: 1 }])}::jsonb, 'Granted', 'QuotaAvailable', 'granted',
              ${JSON.stringify([{ resourceType: IPCLAIMS, amount: 1, status: 'Granted', reason: 'QuotaAvailable', message: 'granted' }])}::jsonb,
              'Widget', 'n5', 'test')`);
    await db.execute(
      sql`update allowance_buckets set allocated = allocated + 1, claim_count = claim_count + 1 where project_id = ${project.id} and resource_type = ${IPCLAIMS}`,
    );
    const outcomes = await burst(db, project.id, 'n', 30);
    expect(outcomes[5]).toBe('PolicyFailed');
    expect(tally(outcomes)).toEqual({ created: 29, PolicyFailed: 1 });
    expect(await books(db, project.id)).toMatchObject({ allocated: 30, claimCount: 30, live: 30, ipclaims: 29 });
    await noDrift(db, project.id);
  });

  test('projects that share a batch lane are decided together, each against its own bucket', async () => {
    const { db } = testDb();
    // Two projects whose claims go in one lane (claim-batch.ts: lanes by project), so their creates share batches.
    const lane = (id: string) => laneOf(4, id);
    const { project: a } = await makeProject(db);
    let b = (await makeProject(db)).project;
    while (lane(b.id) !== lane(a.id)) b = (await makeProject(db)).project;
    for (const [p, limit] of [
      [a, 25],
      [b, 1000],
    ] as const) {
      await createNetwork(db, p.id, { name: 'vpc', cidrs: [{ cidr: '2001:db8:514::/112', maxPrefixLength: 128, defaultPrefixLength: 128 }] }, actor);
      await updateGrant(db, p.id, `default-${p.slug}`, [{ resourceType: IPCLAIMS, amount: limit }], operator);
    }
    const [outA, outB] = await Promise.all([burst(db, a.id, 'm', 60), burst(db, b.id, 'm', 60)]);
    // Some transaction wrote claims of both.
    const [{ shared }] = (await db.execute(sql`
      select count(*)::int as shared from (select xmin::text from ip_claims where project_id in (${a.id}, ${b.id})
                                           group by xmin::text having count(distinct project_id) = 2) t`)) as unknown as { shared: number }[];
    expect(shared).toBeGreaterThan(0);
    expect(tally(outA)).toEqual({ created: 25, QuotaExceeded: 35 });
    expect(tally(outB)).toEqual({ created: 60 });
    expect(await books(db, a.id)).toMatchObject({ allocated: 25, claimCount: 25, live: 25, ipclaims: 25 });
    expect(await books(db, b.id)).toMatchObject({ allocated: 60, claimCount: 60, live: 60, ipclaims: 60 });
    // Each project's running totals are its own: 1..n, each once.
    for (const [p, n, limit] of [
      [a, 25, 25],
      [b, 60, 1000],
    ] as const) {
      const totals = (await granted(db, p.id)).map((c) => Number(new RegExp(`\\(allocated (\\d+) of ${limit}\\)$`).exec(c.message)?.[1])).sort((x, y) => x - y);
      expect(totals).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    }
    await noDrift(db, a.id);
    await noDrift(db, b.id);
  });

  test('a limit lowered while batches run: no claim is granted past the limit it was decided against, books exact', async () => {
    const { db, project } = await withNetwork('2001:db8:513::/112', { maxPrefixLength: 128, defaultPrefixLength: 128 });
    await updateGrant(db, project.id, `default-${project.slug}`, [{ resourceType: IPCLAIMS, amount: 1000 }], operator);
    const creating = burst(db, project.id, 'l', 300);
    await new Promise((r) => setTimeout(r, 50));
    await updateGrant(db, project.id, `default-${project.slug}`, [{ resourceType: IPCLAIMS, amount: 40 }], operator);
    const outcomes = await creating;
    expect(outcomes.filter((c) => c !== 'created' && c !== 'QuotaExceeded')).toEqual([]);
    for (const c of await granted(db, project.id)) {
      const [, allocated, limit] = /\(allocated (\d+) of (\d+)\)$/.exec(c.message)!.map(Number);
      expect(allocated).toBeLessThanOrEqual(limit);
    }
    const b = await books(db, project.id);
    expect(b.allocated).toBe(outcomes.filter((c) => c === 'created').length);
    expect(b).toMatchObject({ live: b.allocated, ipclaims: b.allocated, claimCount: b.allocated });
    // Whatever was granted before the limit fell stays; while at or over it, nothing more is.
    const after = createClaim(db, project.id, claim('after', { family: 6 }), actor);
    if (b.allocated >= 40) await expect(after).rejects.toMatchObject({ code: 'QuotaExceeded' });
    else await after;
    await noDrift(db, project.id);
  });
});

describe('ClaimCreationPolicy', () => {
  test('both name forms render the same object name', async () => {
    const { db } = testDb();
    const a = await ownKind(db, { grant: 5 });
    await createClaimPolicy(
      db,
      {
        name: `p-${a.suffix}`,
        description: '',
        triggerKind: a.kind,
        constraints: [],
        claimNameTemplate: 'w-{{trigger.metadata.name}}',
        requests: [{ resourceType: a.resourceType, amount: 1 }],
        enabled: true,
      },
      operator,
    );
    const b = await ownKind(db, { grant: 5 });
    await createClaimPolicy(
      db,
      {
        name: `p-${b.suffix}`,
        description: '',
        triggerKind: b.kind,
        constraints: [],
        claimNameTemplate: 'w-{{requestInfo.name}}-{{requestInfo.namespace}}',
        requests: [{ resourceType: b.resourceType, amount: '{{ int(trigger.spec.size) }}' }],
        enabled: true,
      },
      operator,
    );
    const ra = await db.transaction((tx) => admit(tx, a.request('alpha')));
    const rb = await db.transaction((tx) => admit(tx, b.request('alpha', { size: 3 })));
    expect(ra).toMatchObject({ managed: true, claim: { name: 'w-alpha', requests: [{ resourceType: a.resourceType, amount: 1 }] } });
    expect(rb).toMatchObject({ managed: true, claim: { name: `w-alpha-${b.project.slug}`, requests: [{ resourceType: b.resourceType, amount: 3 }] } });
    expect(await bucket(db, b.project.id, b.resourceType)).toMatchObject({ limit: 5, allocated: 3 });
  });

  test('invalid CEL is stored not Ready with the compiler message, and is not applied (creates fail closed)', async () => {
    const { db } = testDb();
    const w = await ownKind(db, { grant: 5 });
    const policy = await createClaimPolicy(
      db,
      {
        name: `p-${w.suffix}`,
        description: '',
        triggerKind: w.kind,
        constraints: [{ expression: 'trigger.spec.size >' }],
        claimNameTemplate: 'w-{{ triger.metadata.name }}',
        requests: [{ resourceType: w.resourceType, amount: 1 }],
        enabled: true,
      },
      operator,
    );
    expect(policy).toMatchObject({ ready: false, readyReason: 'CompilationFailed' });
    expect(policy.readyMessage).toContain('constraints[0].expression: ');
    expect(policy.readyMessage).toContain("claimNameTemplate: undeclared reference to 'triger'");
    await expect(db.transaction((tx) => admit(tx, w.request('x')))).rejects.toMatchObject({
      code: 'PolicyFailed',
      message: expect.stringContaining('is not Ready (CompilationFailed'),
    });
    expect(await bucket(db, w.project.id, w.resourceType)).toMatchObject({ allocated: 0 });
    // Fixing it makes it Ready and applied.
    const fixed = await updateClaimPolicy(
      db,
      `p-${w.suffix}`,
      {
        description: '',
        triggerKind: w.kind,
        constraints: [],
        claimNameTemplate: 'w-{{ trigger.metadata.name }}',
        requests: [{ resourceType: w.resourceType, amount: 1 }],
        enabled: true,
      },
      operator,
    );
    expect(fixed).toMatchObject({ ready: true, generation: 2 });
    await db.transaction((tx) => admit(tx, w.request('x')));
    expect(await bucket(db, w.project.id, w.resourceType)).toMatchObject({ allocated: 1 });
  });

  test('an expression failing at run time fails the create with PolicyFailed and stores nothing', async () => {
    const { db } = testDb();
    const w = await ownKind(db, { grant: 5 });
    await createClaimPolicy(
      db,
      {
        name: `p-${w.suffix}`,
        description: '',
        triggerKind: w.kind,
        constraints: [{ expression: 'trigger.spec.tier == "gold"' }],
        claimNameTemplate: 'w-{{requestInfo.name}}',
        requests: [{ resourceType: w.resourceType, amount: 1 }],
        enabled: true,
      },
      operator,
    );
    await expect(db.transaction((tx) => admit(tx, w.request('x', {})))).rejects.toMatchObject({
      code: 'PolicyFailed',
      message: expect.stringMatching(/failed at constraints\[0\]: field not found: tier/),
    });
    // A false constraint means the policy does not apply: not quota-managed, admitted without a claim.
    expect(await db.transaction((tx) => admit(tx, w.request('y', { tier: 'silver' })))).toEqual({ managed: false, claim: null });
    expect((await db.transaction((tx) => admit(tx, w.request('z', { tier: 'gold' })))).managed).toBe(true);
    expect(await bucket(db, w.project.id, w.resourceType)).toMatchObject({ allocated: 1 });
  });

  test('registered without a grant: limit 0, denied; unregistered: not quota-managed; other kinds: ValidationFailed', async () => {
    const { db } = testDb();
    const w = await ownKind(db);
    await createClaimPolicy(
      db,
      {
        name: `p-${w.suffix}`,
        description: '',
        triggerKind: w.kind,
        constraints: [],
        claimNameTemplate: 'w-{{requestInfo.name}}',
        requests: [{ resourceType: w.resourceType, amount: 2 }],
        enabled: true,
      },
      operator,
    );
    await expect(db.transaction((tx) => admit(tx, w.request('x')))).rejects.toMatchObject({
      code: 'QuotaExceeded',
      message: `requested 2 ${w.resourceType}, available 0, limit 0`,
    });

    const u = await ownKind(db, { register: false });
    await createClaimPolicy(
      db,
      {
        name: `p-${u.suffix}`,
        description: '',
        triggerKind: u.kind,
        constraints: [],
        claimNameTemplate: 'w-{{requestInfo.name}}',
        requests: [{ resourceType: u.resourceType, amount: 1 }],
        enabled: true,
      },
      operator,
    );
    expect(await db.transaction((tx) => admit(tx, u.request('x')))).toEqual({ managed: false, claim: null });

    // A kind the registration does not allow: denied with ValidationFailed, and logged after rollback.
    const v = await ownKind(db, { grant: 5 });
    await createClaimPolicy(
      db,
      {
        name: `p-${v.suffix}`,
        description: '',
        triggerKind: `${v.kind}X`,
        constraints: [],
        claimNameTemplate: 'v-{{requestInfo.name}}',
        requests: [{ resourceType: v.resourceType, amount: 1 }],
        enabled: true,
      },
      operator,
    );
    const error = await db.transaction((tx) => admit(tx, { ...v.request('x'), kind: `${v.kind}X` })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PolicyFailed', message: expect.stringContaining(`${v.kind}X may not claim ${v.resourceType}`) });
    const { recordDeniedClaim } = await import('./admission');
    await recordDeniedClaim(db, error);
    const log = await listClaimLog(db, v.project.id, { limit: 5, offset: 0 });
    expect(log.items[0]).toMatchObject({ status: 'Denied', reason: 'ValidationFailed' });
  });

  test('machines go through the same functions (admitMachine / releaseMachine)', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const r = await db.transaction((tx) => admitMachine(tx, project.id, { name: 'm1', spec: { class: 'c1' } }, actor));
    expect(r).toMatchObject({
      managed: true,
      claim: { name: 'machine-m1', buckets: [{ resourceType: 'metal.datumapis.com/machines', limit: 10, allocated: 1, available: 9 }] },
    });
    expect(await db.transaction((tx) => releaseMachine(tx, project.id, 'm1'))).toBe(true);
    expect(await db.transaction((tx) => releaseMachine(tx, project.id, 'm1'))).toBe(false);
    expect(await bucket(db, project.id, 'metal.datumapis.com/machines')).toMatchObject({ allocated: 0, claimCount: 0 });
  });
});

describe('grants and registrations', () => {
  test('a grant for an unregistered type waits inactive; registering the type activates it and sets the limit', async () => {
    const { db } = testDb();
    const w = await ownKind(db, { register: false });
    const { grant } = await createGrant(
      db,
      {
        projectId: w.project.id,
        name: 'early',
        allowances: [
          { resourceType: w.resourceType, amount: 7 },
          { resourceType: IPCLAIMS, amount: 5 },
        ],
        source: 'Operator',
      },
      operator,
    );
    expect(grant).toMatchObject({ active: false, activeReason: 'UnregisteredResourceType', activeMessage: `not registered: ${w.resourceType}` });
    // An inactive grant adds nothing, not even its registered types.
    expect(await bucket(db, w.project.id)).toMatchObject({ limit: 100 });
    expect(await bucket(db, w.project.id, w.resourceType)).toMatchObject({ limit: 0 });
    await createRegistration(
      db,
      {
        resourceType: w.resourceType,
        consumerKind: 'Project',
        type: 'Allocation',
        description: '',
        baseUnit: 'w',
        displayUnit: 'w',
        unitConversionFactor: 1,
        claimingKinds: [w.kind],
      },
      operator,
    );
    expect(await bucket(db, w.project.id)).toMatchObject({ limit: 105, grantCount: 2 });
    expect(await bucket(db, w.project.id, w.resourceType)).toMatchObject({ limit: 7 });
    // A registration in use cannot be removed.
    await expect(deleteRegistration(db, w.resourceType, operator)).rejects.toMatchObject({ code: 'Conflict', message: expect.stringContaining('1 grant(s)') });
    await deleteGrant(db, w.project.id, 'early', operator);
    await deleteRegistration(db, w.resourceType, operator);
    await expect(
      createGrant(
        db,
        { projectId: w.project.id, name: `default-${w.project.slug}`, allowances: [{ resourceType: IPCLAIMS, amount: 1 }], source: 'Operator' },
        operator,
      ),
    ).rejects.toMatchObject({ code: 'Conflict', field: 'name' });
  });

  test('a GrantCreationPolicy with constraints applies to matching projects; a run-time error fails project creation', async () => {
    const { db } = testDb();
    const slug = uniq('gp');
    const bad = uniq('gpbad');
    await createGrantPolicy(
      db,
      {
        name: `${slug}-extra`,
        description: '',
        constraints: [{ expression: `trigger.metadata.name == "${slug}"` }],
        grantNameTemplate: 'extra-{{ trigger.spec.organization }}',
        allowances: [{ resourceType: IPCLAIMS, amount: 50 }],
        enabled: true,
      },
      operator,
    );
    await createGrantPolicy(
      db,
      {
        name: `${bad}-broken`,
        description: '',
        constraints: [{ expression: `trigger.metadata.name == "${bad}"` }],
        grantNameTemplate: 'x-{{ trigger.spec.nothing }}',
        allowances: [{ resourceType: IPCLAIMS, amount: 1 }],
        enabled: true,
      },
      operator,
    );
    const invalid = await createGrantPolicy(
      db,
      {
        name: `${slug}-invalid`,
        description: '',
        constraints: [{ expression: 'trigger.metadata.name ==' }],
        grantNameTemplate: 'never',
        allowances: [{ resourceType: IPCLAIMS, amount: 1000 }],
        enabled: true,
      },
      operator,
    );
    expect(invalid).toMatchObject({ ready: false, readyReason: 'CompilationFailed' });
    try {
      const { project } = await makeProject(db, slug);
      expect(await bucket(db, project.id)).toMatchObject({ limit: 150, grantCount: 2 });
      const grants = await listGrants(db, { projectId: project.id, limit: 10, offset: 0 });
      expect(grants.items.map((g) => g.name).sort()).toEqual([`default-${slug}`, `extra-${slug}-org`]);
      await expect(makeProject(db, bad)).rejects.toMatchObject({ code: 'PolicyFailed', message: expect.stringContaining('field not found: nothing') });
      const [{ n }] = (await db.execute(sql`select count(*)::int as n from projects where slug = ${bad}`)) as unknown as { n: number }[];
      expect(n).toBe(0);
    } finally {
      for (const name of [`${slug}-extra`, `${bad}-broken`, `${slug}-invalid`]) await deleteGrantPolicy(db, name, operator);
    }
  });
});

describe('increase requests', () => {
  test('tenant asks, operator approves (a grant, limit grows) or rejects with a reason; deciding twice is a conflict', async () => {
    const { db, project } = await withNetwork();
    const tenant: Actor = { type: 'user', id: '00000000-0000-0000-0000-000000000002', label: 'tenant@example.com' };
    const req = await createIncreaseRequest(db, project.id, { resourceType: IPCLAIMS, amount: 25, reason: 'more pods' }, tenant);
    expect(req).toMatchObject({ status: 'Pending', amount: 25, bucket: { limit: 100, allocated: 0 } });
    await expect(createIncreaseRequest(db, project.id, { resourceType: IPCLAIMS, amount: 5, reason: 'again' }, tenant)).rejects.toMatchObject({
      code: 'Conflict',
    });
    await expect(createIncreaseRequest(db, project.id, { resourceType: 'nope.example.com/things', amount: 5, reason: 'x y z' }, tenant)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'resourceType',
    });
    const queue = await listIncreaseRequests(db, { status: 'Pending', limit: 500, offset: 0 });
    expect(queue.items.some((q) => q.id === req.id)).toBe(true);

    const approved = await approveIncreaseRequest(db, { id: req.id, reason: 'ok' }, operator);
    expect(approved).toMatchObject({
      status: 'Approved',
      approvedAmount: 25,
      decidedBy: 'operator@example.com',
      grantName: `increase-${req.id.slice(0, 8)}`,
      bucket: { limit: 125 },
    });
    expect(await bucket(db, project.id)).toMatchObject({ limit: 125, grantCount: 2 });
    await expect(approveIncreaseRequest(db, { id: req.id }, operator)).rejects.toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining('already approved'),
    });

    const second = await createIncreaseRequest(db, project.id, { resourceType: IPCLAIMS, amount: 1000, reason: 'a lot' }, tenant);
    await expect(rejectIncreaseRequest(db, { id: second.id, reason: '  ' }, operator)).rejects.toMatchObject({ code: 'ValidationFailed', field: 'reason' });
    const rejected = await rejectIncreaseRequest(db, { id: second.id, reason: 'too many for this tier' }, operator);
    expect(rejected).toMatchObject({ status: 'Rejected', decisionReason: 'too many for this tier', grantName: null });
    expect(await bucket(db, project.id)).toMatchObject({ limit: 125 });
    const mine = await listIncreaseRequests(db, { projectId: project.id, limit: 10, offset: 0 });
    expect(mine.items.map((i) => i.status)).toEqual(['Rejected', 'Approved']);
  });
});

describe('audit of the books', () => {
  test('finds drift injected behind the application, records it as an event and a metric, repairs nothing', async () => {
    const { db, project } = await withNetwork();
    await createClaim(db, project.id, claim('a'), actor);
    await db.execute(sql`update allowance_buckets set allocated = allocated + 7 where project_id = ${project.id} and resource_type = ${IPCLAIMS}`);
    await db.execute(sql`update allowance_buckets set "limit" = 3 where project_id = ${project.id} and resource_type = 'metal.datumapis.com/machines'`);
    const before = (await db.execute(
      sql`select coalesce(sum(value), 0)::int as v from metric_counters where metric = 'meridian_quota_drift_total'`,
    )) as unknown as { v: number }[];

    await quotaAudit({}, { db, helpers: {} as never });

    const events = (await db.execute(sql`
      select object_name as "objectName", reason, before, after from events
      where project_id = ${project.id} and action = 'quota.drift' order by object_name`)) as unknown as {
      objectName: string;
      reason: string;
      before: { allocated: number; limit: number };
      after: { allocated: number; limit: number };
    }[];
    expect(events.map((e) => e.objectName)).toEqual([IPCLAIMS, 'metal.datumapis.com/machines']);
    expect(events[0].reason).toContain('allocated 8 recorded, 1 from live granted claims');
    expect(events[0]).toMatchObject({ before: { allocated: 8 }, after: { allocated: 1 } });
    expect(events[1].reason).toContain('limit 3 recorded, 10 from active grants');
    const after = (await db.execute(
      sql`select coalesce(sum(value), 0)::int as v from metric_counters where metric = 'meridian_quota_drift_total'`,
    )) as unknown as { v: number }[];
    expect(after[0].v - before[0].v).toBeGreaterThanOrEqual(2);
    // Nothing was repaired.
    expect(await bucket(db, project.id)).toMatchObject({ allocated: 8 });
    await db.execute(sql`update allowance_buckets set allocated = 1 where project_id = ${project.id} and resource_type = ${IPCLAIMS}`);
    await db.execute(sql`update allowance_buckets set "limit" = 10 where project_id = ${project.id} and resource_type = 'metal.datumapis.com/machines'`);
    const clean = await auditQuotaBooks(db);
    expect(clean.drifted.filter((d) => d.projectId === project.id)).toEqual([]);
  });
});

describe('claim log retention', () => {
  test('old denied and released claims are pruned; live granted claims never are', async () => {
    const { db, project } = await withNetwork();
    await createClaim(db, project.id, claim('live'), actor);
    await createClaim(db, project.id, claim('gone'), actor);
    await deleteClaim(db, project.id, 'gone', actor);
    await updateGrant(db, project.id, `default-${project.slug}`, [{ resourceType: IPCLAIMS, amount: 1 }], operator);
    await expect(createClaim(db, project.id, claim('no'), actor)).rejects.toMatchObject({ code: 'QuotaExceeded' });
    await db.execute(
      sql`update resource_claims set created_at = now() - interval '100 days', released_at = case when released_at is null then null else now() - interval '100 days' end where project_id = ${project.id}`,
    );
    expect(await pruneClaimLog(db)).toBeGreaterThanOrEqual(2);
    const log = await listClaimLog(db, project.id, { limit: 10, offset: 0 });
    expect(log.items.map((c) => [c.name, c.status])).toEqual([['ipclaim-live', 'Granted']]);
  });
});
