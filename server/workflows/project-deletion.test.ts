/**
 * Project deletion on real parts: PostgreSQL, the simulator process and a worker process
 * (bin/worker.ts). The simulator is made unavailable while a project with claims, leases, a Ready
 * machine, quota claims and tokens is deleted: everything else is released at once, the machine
 * waits on the provider with a bounded number of retries, and the deletion completes by itself when
 * the provider is back.
 *
 * This file has a database of its own: its worker must not run other files' machine jobs against
 * this simulator (nor theirs against an outage they did not ask for).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { backupDatabase, restoreDatabase } from '@/db/backup';
import { configureDbPool, createDb, type DbHandle } from '@/db/client';
import { prepareDatabase } from '@/test/global-setup';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { systemActor } from '@/server/audit/events';
import { createCluster, findCluster } from '@/server/cni/clusters';
import { addLease } from '@/server/cni/leases';
import { getMachine, requestMachine } from '@/server/fleet/machines';
import { createClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { databaseMetricsText } from '@/server/observability/metrics';
import { createHttpProviderAdminClient, type ProviderAdminClient } from '@/server/provider';
import { createIncreaseRequest } from '@/server/quota/increases';
import { makeTempDir, randomToken, spawnSimulator, type SpawnedSimulator } from '@/simulator/spawn-simulator';
import { addMembership, createOrganization } from '@/server/tenancy/projects';
import { createProject } from '@/server/workflows/project-creation';
import type { MemberRole, SessionUser } from '@/server/tenancy/roles';
import { createApiToken, createOperatorToken } from '@/server/tenancy/tokens';
import { createUser } from '@/server/tenancy/users';
import { createCaller } from '@/server/trpc/root';
import { uniq } from '@/test/db';
import { deletionBackoffMs, deletionBackoffSchedule, getDeletionStatus, maxRetriesWithin, requestProjectDeletion } from './project-deletion';
import { routeHandlers } from '@/test/rest';

const projectRoute = routeHandlers('/api/v1/projects/{project}');
const grantsRoute = routeHandlers('/api/v1/projects/{project}/resourcegrants');
const whoamiRoute = routeHandlers('/api/v1/whoami');

const actor = systemActor('test');
/** The worker's schedules: the provider's retries (server/fleet/provider-ops backoffMs: 0.5 s doubling; cap far above the window) and the deletion passes'. */
const PROVIDER_BASE_MS = 500;
const DELETION = { baseMs: 500, capMs: 60_000 };

let handle: DbHandle;
let dropDatabase: () => Promise<void>;
let simulator: SpawnedSimulator;
let admin: ProviderAdminClient;
let removeDir: () => Promise<void>;
let worker: ChildProcess;
let operatorToken: string;

const db = () => handle.db;

/** A database of this file's own on the test server, prepared as the run's database is (empty or an older release's, then migrated) unless asked not to (see the file comment). */
async function ownDatabase(options: { migrate?: boolean } = {}) {
  const shared = inject('databaseUrl');
  const name = `meridian_deletion_${Date.now()}_${Math.random().toString(36).slice(2, 6)}`;
  const adminSql = postgres(shared, { max: 1, onnotice: () => {} });
  await adminSql.unsafe(`create database "${name}"`);
  await adminSql.end();
  const u = new URL(shared);
  u.pathname = `/${name}`;
  if (options.migrate ?? true) await prepareDatabase(u.toString(), inject('upgradeFrom'));
  return {
    url: u.toString(),
    drop: async () => {
      const a = postgres(shared, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists "${name}" with (force)`);
      await a.end();
    },
  };
}

beforeAll(async () => {
  const own = await ownDatabase();
  dropDatabase = own.drop;
  // The REST handlers use the process-wide pool: point it at this file's database before first use.
  configureDbPool({ url: own.url, max: 10 });
  handle = createDb(own.url, { max: 10, applicationName: 'meridian-deletion-test' });
  const tmp = await makeTempDir('meridian-deletion-test-');
  removeDir = tmp.remove;
  simulator = await spawnSimulator({ stateFile: path.join(tmp.dir, 'state.json'), adminToken: randomToken('admin'), env: { SIMULATOR_OPERATION_MS: '0' } });
  admin = createHttpProviderAdminClient({ baseUrl: simulator.adminUrl!, token: simulator.adminToken!, tls: { caFile: simulator.pki.caFile } });
  worker = spawn(process.execPath, ['--import', 'tsx', path.join(process.cwd(), 'bin/worker.ts')], {
    env: {
      ...process.env,
      DATABASE_URL: own.url,
      ...simulator.clientEnv('worker'),
      WORKER_CONCURRENCY: '4',
      PROVIDER_TIMEOUT_MS: '1500',
      PROVIDER_RETRY_CAP_MS: '60000',
      PROJECT_DELETION_RETRY_BASE_MS: String(DELETION.baseMs),
      PROJECT_DELETION_RETRY_CAP_MS: String(DELETION.capMs),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const operator = await makeUser(undefined, undefined, ['operator']);
  operatorToken = (await createOperatorToken(db(), { userId: operator.id, name: 'ops' }, actor)).secret;
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  await simulator?.kill('SIGTERM');
  await removeDir?.();
  await handle?.close();
  await dropDatabase?.();
});

async function makeUser(projectId?: string, role?: MemberRole, platformRoles: ('operator' | 'qa' | 'admin')[] = []): Promise<SessionUser> {
  const user = await createUser(
    db(),
    { email: `${uniq('u')}@example.com`, name: 'Test user', platformRoles, createdVia: 'admin', emailVerifiedBy: 'admin' },
    actor,
  );
  if (projectId && role) await addMembership(db(), { userId: user.id, role, projectId }, actor);
  return user;
}

async function makeProject() {
  const slug = uniq('del');
  const org = await createOrganization(db(), { slug: `${slug}-org`, name: slug }, actor);
  return createProject(db(), { organizationId: org.id, slug, name: slug }, actor);
}

/** A private corner of the fleet: a location, class, profile and `count` machines. */
async function makeFleet(count: number) {
  const tag = uniq('f');
  const [loc] = await db().insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
  await db().insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
  await db()
    .insert(machineClasses)
    .values({ name: `${tag}.cls`, cores: 8, memoryGib: 32, arch: 'x86_64' });
  const digest = 'sha256:' + 'cd'.repeat(32);
  const [cls] = (await db().execute(sql`select id from machine_classes where name = ${`${tag}.cls`}`)) as unknown as { id: string }[];
  await db()
    .insert(machineProfiles)
    .values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
  const devices: string[] = [];
  for (let i = 0; i < count; i++) {
    devices.push(`dev-${tag}-${i}`);
    await db().insert(machineCapacity).values({ deviceRef: devices[i], classId: cls.id, locationId: loc.id });
  }
  return { devices, spec: { class: `${tag}.cls`, profile: `${tag}-os`, location: tag, desiredPower: 'on' as const } };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false | null>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
async function rest(handler: Handler, method: string, token: string, params: Record<string, string>, body?: unknown) {
  const res = await handler(
    new Request('http://localhost/api/v1', {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }),
    { params: Promise.resolve(params) },
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: { code: string; message: string } } };
}

const projectRow = async (id: string) => ((await db().execute(sql`select phase from projects where id = ${id}`)) as unknown as { phase: string }[])[0];
const retriesTotal = async () =>
  (
    (await db().execute(
      sql`select coalesce(sum(value), 0)::int as n from metric_counters where metric = 'meridian_project_deletion_retries_total'`,
    )) as unknown as { n: number }[]
  )[0].n;

/** Rows still carrying the project's id, table by table, in every table with a project_id column but the audit log. */
async function rowsOfProject(projectId: string) {
  const tables = (await db().execute(sql`
    select table_name as name from information_schema.columns
    where table_schema = 'public' and column_name = 'project_id' and table_name <> 'events' order by 1`)) as unknown as { name: string }[];
  const counts: Record<string, number> = {};
  for (const t of tables) {
    const [{ n }] = (await db().execute(sql`select count(*)::int as n from ${sql.identifier(t.name)} where project_id = ${projectId}`)) as unknown as {
      n: number;
    }[];
    if (n > 0) counts[t.name] = n;
  }
  return counts;
}

describe('deleting a project while the provider is unavailable', () => {
  test('everything else is released at once, the machine waits on the provider with bounded retries, and deletion completes when it is back', async () => {
    const fleet = await makeFleet(1);
    const project = await makeProject();
    const pid = project.id;
    const owner = await makeUser(pid, 'owner');

    // What the project holds: two networks, claims (one Retain), a cluster with a pod lease, a Ready
    // machine with an address, a pending increase request, and tokens.
    await createNetwork(db(), pid, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }, { cidr: '2001:db8:40::/48' }] }, actor);
    await createNetwork(db(), pid, { name: 'spare', cidrs: [{ cidr: '203.0.113.0/24' }] }, actor);
    await createClaim(db(), pid, { name: 'web', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
    await createClaim(db(), pid, { name: 'db', network: 'vpc', family: 'IPv6', prefixLength: 64, reclaimPolicy: 'Retain' }, actor);
    await createClaim(db(), pid, { name: 'edge', network: 'spare', prefixLength: 30, reclaimPolicy: 'Delete' }, actor);
    const registered = await createCluster(db(), pid, { name: 'k1', network: 'vpc', issueToken: true }, actor);
    await addLease(
      db(),
      await findCluster(db(), pid, 'k1'),
      { cniNetwork: 'pods', containerId: 'ctr-1', ifname: 'eth0', node: 'n1', podNamespace: 'default', podName: 'web-0' },
      actor,
    );
    await createIncreaseRequest(db(), pid, { resourceType: 'ipam.miloapis.com/ipclaims', amount: 50, reason: 'launch' }, actor);
    const ownerToken = await createApiToken(db(), { projectId: pid, name: 'owner', role: 'owner' }, actor);
    const editorToken = await createApiToken(db(), { projectId: pid, name: 'ci', role: 'editor' }, actor);
    const machine = await requestMachine(
      db(),
      pid,
      { ...fleet.spec, name: 'web-1', interfaces: [{ network: 'vpc', families: ['IPv4'], addressClasses: 1 }] },
      actor,
    );
    await waitFor('the machine Ready', async () => (await getMachine(db(), pid, 'web-1')).phase === 'Ready');
    const epoch = (await getMachine(db(), pid, 'web-1')).epoch!;
    const [{ quotaClaims }] = (await db().execute(
      sql`select count(*)::int as "quotaClaims" from resource_claims where project_id = ${pid} and status = 'Granted' and released_at is null`,
    )) as unknown as { quotaClaims: number }[];
    expect(quotaClaims).toBe(5); // web, db, edge, the machine's address, the machine

    // The provider goes away; the owner deletes the project over REST.
    await admin.setFaults({ unavailable: { mode: 'reject' } });
    const retriesBefore = await retriesTotal();
    const t0 = Date.now();
    const deleted = await rest(projectRoute.DELETE as Handler, 'DELETE', ownerToken.secret, { project: project.slug });
    expect(deleted.status).toBe(202);
    expect(deleted.body).toMatchObject({ kind: 'Project', status: { phase: 'Deleting' } });

    // At once: every token revoked, creates refused with 409, reads still work.
    for (const secret of [ownerToken.secret, editorToken.secret, registered.token!.secret]) {
      expect((await rest(whoamiRoute.GET as Handler, 'GET', secret, {})).status).toBe(401);
    }
    const asOwner = createCaller({ db: db(), session: { user: owner } });
    await expect(asOwner.ipam.claims.create({ project: project.slug, name: 'late', network: 'vpc', prefixLength: 28 })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('is being deleted'),
    });
    await expect(asOwner.ipam.networks.create({ project: project.slug, name: 'late', cidrs: [{ cidr: '192.0.2.0/24' }] })).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await expect(asOwner.fleet.machines.create({ project: project.slug, name: 'late', ...fleet.spec })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(asOwner.tokens.create({ project: project.slug, name: 'late' })).rejects.toMatchObject({ code: 'CONFLICT' });
    const grant = await rest(
      grantsRoute.POST as Handler,
      'POST',
      operatorToken,
      { project: project.slug },
      { metadata: { name: 'late' }, spec: { allowances: [{ resourceType: 'ipam.miloapis.com/ipclaims', amount: 5 }] } },
    );
    expect(grant).toMatchObject({ status: 409, body: { error: { code: 'ProjectDeleting' } } });
    expect((await asOwner.projects.get({ project: project.slug })).phase).toBe('Deleting');
    expect((await asOwner.fleet.machines.get({ project: project.slug, name: 'web-1' })).machine.name).toBe('web-1');

    // Everything that does not need the provider goes; the machine waits on it, and says so.
    const waiting = await waitFor(
      'all but the machine released',
      async () => {
        const s = await getDeletionStatus(db(), pid);
        const r = s.remaining;
        return r.clusters === 0 &&
          r.leases === 0 &&
          r.retained === 0 &&
          r.increaseRequests === 0 &&
          r.networks === 1 &&
          r.claims === 1 &&
          s.blockers.length === 1
          ? s
          : null;
      },
      10_000,
    );
    expect(waiting.remaining).toMatchObject({ machines: 1, tokens: 0, grants: 1, quotaClaims: 2 });
    expect(waiting.blockers[0]).toMatchObject({ objectKind: 'Machine', objectName: 'web-1', waitingOn: 'provider' });
    const [cap] = (await db().execute(sql`select state from machine_capacity where device_ref = ${fleet.devices[0]}`)) as unknown as { state: string }[];
    expect(cap.state).toBe('Cleaning');

    // Over the outage the retries grow — the machine's calls to the provider and the deletion's
    // passes — but only as fast as their backoff allows. Sampled early and at the end of the window
    // (graphile-worker picks up jobs scheduled for later by polling, every 2 s: the window leaves room).
    const windowMs = 10_000;
    const providerAttempts = async () =>
      (
        (await db().execute(
          sql`select coalesce(max(attempts), 0)::int as n from provider_operations where machine_id = ${machine.id} and kind = 'cleanup'`,
        )) as unknown as { n: number }[]
      )[0].n;
    await sleepUntil(t0 + 1_500);
    const early = { blocker: (await getDeletionStatus(db(), pid)).blockers[0], retries: (await retriesTotal()) - retriesBefore };
    await sleepUntil(t0 + windowMs);
    const status = await getDeletionStatus(db(), pid);
    const blocker = status.blockers[0];
    const retries = (await retriesTotal()) - retriesBefore;
    const calls = await providerAttempts();
    const elapsed = Date.now() - t0;
    expect(blocker.lastError).toMatch(/Unavailable|503|unavailable/);
    expect(blocker.nextAttemptAt!.getTime()).toBeGreaterThan(t0);
    expect(blocker.attempts).toBeGreaterThan(early.blocker.attempts);
    expect(blocker.attempts).toBeLessThanOrEqual(calls);
    expect(retries).toBeGreaterThan(early.retries);
    // The provider's schedule (0.5 s doubling): at most log2(window/base) + 2 calls for the machine.
    expect(calls).toBeLessThanOrEqual(Math.floor(Math.log2(elapsed / PROVIDER_BASE_MS)) + 2);
    // The deletion's passes: within what their backoff allows, and so within log2(window/base) + 2.
    expect(retries).toBeLessThanOrEqual(maxRetriesWithin(elapsed, DELETION));
    expect(retries).toBeLessThanOrEqual(Math.floor(Math.log2(elapsed / DELETION.baseMs)) + 2);
    expect(Math.abs(status.passes - retries)).toBeLessThanOrEqual(1);
    const metrics = await databaseMetricsText(db(), { tenantSeries: true });
    expect(metrics).toContain('meridian_projects_deleting 1');
    expect(metrics).toContain('meridian_project_deletion_blockers{waiting_on="provider"} 1');
    expect(metrics).toMatch(/meridian_project_deletion_retries_total\{waiting_on="provider"\} \d+/);

    // The provider is back: the machine's cleanup goes through and is verified, and the deletion
    // finishes by itself.
    await admin.setFaults({ unavailable: null });
    await waitFor('the project gone', async () => !(await projectRow(pid)), 60_000);
    const [after] = (await db().execute(sql`select state, state_reason from machine_capacity where device_ref = ${fleet.devices[0]}`)) as unknown as {
      state: string;
      state_reason: string | null;
    }[];
    expect(after).toEqual({ state: 'Available', state_reason: null });
    const asset = await admin.getAsset(fleet.devices[0]);
    expect(asset.type === 'result' && asset.value.closedThroughEpoch).toBe(epoch);
    expect(await rowsOfProject(pid)).toEqual({});
    const [{ ops }] = (await db().execute(sql`select count(*)::int as ops from provider_operations where machine_id = ${machine.id}`)) as unknown as {
      ops: number;
    }[];
    expect(ops).toBe(0); // the capacity's operation log stays, no longer pointing at the machine

    // The audit log keeps the whole story.
    const actions = ((await db().execute(sql`select action from events where project_id = ${pid} order by id`)) as unknown as { action: string }[]).map(
      (e) => e.action,
    );
    for (const a of [
      'project.create',
      'project.delete',
      'token.revoke',
      'cluster.delete',
      'ipclaim.delete',
      'ipallocation.release',
      'network.delete',
      'quota.increase.reject',
      'machine.release.requested',
      'machine.phase.Released',
      'quota.grant.delete',
      'project.deleted',
    ]) {
      expect(actions, a).toContain(a);
    }
    expect(actions.at(-1)).toBe('project.deleted');
    expect(await databaseMetricsText(db(), { tenantSeries: true })).toContain('meridian_projects_deleting 0');
  }, 150_000);
});

describe('who may delete, and deleting twice', () => {
  test('viewers and editors are refused (console and REST); nothing changes', async () => {
    const project = await makeProject();
    const viewer = await makeUser(project.id, 'viewer');
    const editor = await makeUser(project.id, 'editor');
    for (const user of [viewer, editor]) {
      await expect(createCaller({ db: db(), session: { user } }).projects.delete({ project: project.slug, confirm: project.slug })).rejects.toMatchObject({
        code: 'FORBIDDEN',
      });
    }
    for (const role of ['viewer', 'editor'] as const) {
      const token = await createApiToken(db(), { projectId: project.id, name: role, role }, actor);
      const r = await rest(projectRoute.DELETE as Handler, 'DELETE', token.secret, { project: project.slug });
      expect(r).toMatchObject({ status: 403, body: { error: { code: 'Forbidden' } } });
      expect((await rest(whoamiRoute.GET as Handler, 'GET', token.secret, {})).status).toBe(200);
    }
    expect(await projectRow(project.id)).toEqual({ phase: 'Active' });
  });

  test('deleting twice (even at once) is one deletion: one request event, tokens revoked once, one job; then it is gone', async () => {
    const project = await makeProject();
    await createNetwork(db(), project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
    await createClaim(db(), project.id, { name: 'c', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
    await createApiToken(db(), { projectId: project.id, name: 't', role: 'editor' }, actor);
    const operator = await makeUser(undefined, undefined, ['operator']);
    const owner = await makeUser(project.id, 'owner');
    const results = await Promise.all([
      requestProjectDeletion(db(), project.id, { type: 'user', id: owner.id, label: owner.email }),
      createCaller({ db: db(), session: { user: operator } }).projects.delete({ project: project.slug, confirm: project.slug }),
      rest(projectRoute.DELETE as Handler, 'DELETE', operatorToken, { project: project.slug }),
    ]);
    expect(results[0].phase).toBe('Deleting');
    expect(results[1].phase).toBe('Deleting');
    expect(results[2].status === 202 || results[2].status === 404).toBe(true); // 404 only if it already finished
    await waitFor('the project gone', async () => !(await projectRow(project.id)), 30_000);
    const count = async (action: string) =>
      (
        (await db().execute(sql`select count(*)::int as n from events where project_id = ${project.id} and action = ${action}`)) as unknown as { n: number }[]
      )[0].n;
    expect(await count('project.delete')).toBe(1);
    expect(await count('token.revoke')).toBe(1);
    expect(await count('project.deleted')).toBe(1);
    expect(await rowsOfProject(project.id)).toEqual({});
    // And afterwards: nothing to delete.
    expect((await rest(projectRoute.DELETE as Handler, 'DELETE', operatorToken, { project: project.slug })).status).toBe(404);
    await expect(requestProjectDeletion(db(), project.id, actor)).rejects.toMatchObject({ code: 'NotFound' });
  });
});

describe('backup and restore', () => {
  test('a backup taken while a project is being deleted restores (the guard stands aside while rows load), deletion still under way', async () => {
    const source = await ownDatabase();
    const target = await ownDatabase({ migrate: false });
    const src = createDb(source.url, { max: 2 });
    const dst = createDb(target.url, { max: 2 });
    const tmp = await makeTempDir('meridian-deletion-backup-');
    try {
      const org = await createOrganization(src.db, { slug: uniq('bk'), name: 'bk' }, actor);
      const p = await createProject(src.db, { organizationId: org.id, slug: uniq('bk'), name: 'bk' }, actor);
      await createNetwork(src.db, p.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, actor);
      await createClaim(src.db, p.id, { name: 'c', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, actor);
      await requestProjectDeletion(src.db, p.id, actor); // no worker runs on this database: it stays Deleting
      const file = path.join(tmp.dir, 'backup.gz');
      await backupDatabase(source.url, createWriteStream(file));
      await restoreDatabase(target.url, createReadStream(file));
      const [row] = (await dst.db.execute(sql`
        select p.phase, (select count(*)::int from networks where project_id = p.id) as networks, (select count(*)::int from ip_claims where project_id = p.id) as claims,
               (select count(*)::int from graphile_worker._private_jobs where key = ${`project-delete:${p.id}`}) as jobs
        from projects p where p.id = ${p.id}`)) as unknown as { phase: string; networks: number; claims: number; jobs: number }[];
      expect(row).toEqual({ phase: 'Deleting', networks: 1, claims: 1, jobs: 1 });
      // And the guard is back once loaded: nothing new in it.
      await expect(createNetwork(dst.db, p.id, { name: 'late', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor)).rejects.toMatchObject({
        cause: { code: 'MP001' },
      });
    } finally {
      await src.close();
      await dst.close();
      await tmp.remove();
      await source.drop();
      await target.drop();
    }
  });
});

describe('the pass backoff', () => {
  test('capped exponential with equal jitter: within [ceiling/2, ceiling], ceiling doubling to the cap', () => {
    const schedule = { baseMs: 1_000, capMs: 60_000 };
    expect([1, 2, 3, 7, 30].map((n) => deletionBackoffMs(n, schedule, () => 0))).toEqual([500, 1_000, 2_000, 30_000, 30_000]);
    expect([1, 2, 3, 7, 30].map((n) => deletionBackoffMs(n, schedule, () => 1))).toEqual([1_000, 2_000, 4_000, 60_000, 60_000]);
    expect(deletionBackoffSchedule()).toEqual({ baseMs: 1_000, capMs: 60_000 });
  });

  test('the retry bound: at most log2(window/base) + 2 retries in a window, and capped retries at most one per half cap', () => {
    const schedule = { baseMs: 500, capMs: 60_000 };
    for (const window of [1_000, 8_000, 30_000, 120_000]) {
      expect(maxRetriesWithin(window, schedule)).toBeLessThanOrEqual(Math.floor(Math.log2(window / schedule.baseMs)) + 2);
    }
    // Once capped, one retry per at least half the cap: an hour-long outage costs ~2 per minute, not a storm.
    const hour = maxRetriesWithin(3_600_000, schedule);
    expect(hour).toBeLessThanOrEqual(8 + 3_600_000 / 30_000);
    // And the worst case (every delay at its minimum) really stays within the bound.
    let t = 0;
    let n = 0;
    while ((t += deletionBackoffMs(n + 1, schedule, () => 0)) <= 8_000) n++;
    expect(n).toBe(maxRetriesWithin(8_000, schedule));
  });
});
