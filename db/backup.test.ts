import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { startEmbeddedPostgres } from '@/bin/lib/embedded-postgres';
import { createDb, type Db } from '@/db/client';
import type { SessionUser } from '@/server/tenancy/roles';
import { createCaller } from '@/server/trpc/root';
import { uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { freePort } from '@/test/global-setup';
import { backupDatabase, restoreDatabase } from './backup';
import { migrateDatabase, migrationJournal } from './migrate';

const run = promisify(execFile);
/** The real CLI, as an operator runs it (`npm run meridian -- …`). */
const cli = (args: string[], env: Record<string, string>) =>
  run(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
const cliFailure = (args: string[], env: Record<string, string>) =>
  cli(args, env).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => e,
  );

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

/** A database of its own on the test server (the shared test database has other files' rows in it). */
async function freshDatabase(): Promise<string> {
  const base = inject('databaseUrl');
  const name = `meridian_bk_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  cleanups.push(async () => {
    const a = postgres(base, { max: 1, onnotice: () => {} });
    await a.unsafe(`drop database if exists "${name}" with (force)`);
    await a.end();
  });
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

function sqlFor(url: string) {
  // Fixed output settings: the two servers may have different defaults.
  return postgres(url, { max: 1, onnotice: () => {}, connection: { TimeZone: 'UTC', DateStyle: 'ISO' } });
}

/**
 * Every row of every table, as PostgreSQL prints it, plus the sequences and the applied
 * migrations. Jobs are compared without their lock (restore releases it; checked separately).
 */
async function contents(url: string) {
  const sql = sqlFor(url);
  try {
    const tables = await sql<{ schema: string; name: string }[]>`
      select n.nspname as schema, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ('public', 'graphile_worker') and c.relkind = 'r' and c.relname <> 'migrations' order by 1, 2`;
    const out: Record<string, string[]> = {};
    for (const t of tables) {
      const select =
        t.name === '_private_jobs'
          ? `select concat_ws(' ', id, key, task_id, payload::text, run_at, attempts, max_attempts) as r from graphile_worker._private_jobs`
          : `select x::text as r from "${t.schema}"."${t.name}" x`;
      // Sorted here, not by the servers: their collations differ (the embedded one is C).
      out[`${t.schema}.${t.name}`] = (await sql.unsafe<{ r: string }[]>(select)).map((r) => r.r).sort();
    }
    out.sequences = (
      await sql<{ s: string }[]>`
      select schemaname || '.' || sequencename || '=' || coalesce(last_value::text, '-') as s from pg_sequences
      where schemaname in ('public', 'graphile_worker')`
    )
      .map((r) => r.s)
      .sort();
    out.migrations = (await sql<{ m: string }[]>`select hash || ' ' || created_at as m from drizzle.__drizzle_migrations order by created_at`).map((r) => r.m);
    return out;
  } finally {
    await sql.end();
  }
}

/** What the console shows these users: the tRPC read procedures behind its pages. */
async function consoleView(db: Db, owner: SessionUser, operator: SessionUser, project: string) {
  const tenant = createCaller({ db, session: { user: owner } });
  const staff = createCaller({ db, session: { user: operator } });
  return {
    projects: await tenant.projects.list(),
    project: await tenant.projects.get({ project }),
    networks: await tenant.ipam.networks.list({ project }),
    network: await tenant.ipam.networks.get({ project, name: 'vpc' }),
    map: await tenant.ipam.networks.map({ project, network: 'vpc' }),
    claims: await tenant.ipam.claims.list({ project }),
    claim: await tenant.ipam.claims.get({ project, name: 'web' }),
    tokens: await tenant.tokens.list({ project }),
    timeline: await tenant.audit.project({ project, limit: 200 }),
    buckets: await tenant.quota.buckets.list({ project }),
    quotaLog: await tenant.quota.claims.list({ project }),
    grants: await tenant.quota.grants.list({ project }),
    audit: await staff.audit.list({ limit: 200 }),
    pools: await staff.ipam.admin.pools({}),
    retained: await staff.ipam.admin.retained({}),
  };
}

/** The table sections of a backup file (everything but the HEADER line, which has the time). */
async function body(file: string) {
  return gunzipSync(await readFile(file))
    .toString('utf8')
    .split('\n')
    .filter((l) => !l.startsWith('HEADER '))
    .join('\n');
}

describe('backup and restore', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'meridian-backup-test-'));
    cleanups.push(() => rm(tmp, { recursive: true, force: true }));
  });

  test('a backup of DATABASE_URL restores into a fresh embedded data directory with the same rows and the same console', { timeout: 300_000 }, async () => {
    // The source: its own database, with a project, a network, claims (one retained), a token,
    // events, text that COPY must escape, and jobs (one locked by a worker that is gone).
    const sourceUrl = await freshDatabase();
    await migrateDatabase(sourceUrl);
    const source = createDb(sourceUrl, { max: 4 });
    cleanups.push(() => source.close());
    const { project } = await makeProject(source.db, uniq('bk'));
    const owner = await makeUser(source.db, { projectId: project.id, role: 'owner' });
    const operator = await makeUser(source.db, { platformRoles: ['operator'] });
    const tenant = createCaller({ db: source.db, session: { user: owner } });
    const awkward = 'tab\there, newline\nthere, backslash \\ and \\N and a line of\n\\.\n, snowman ☃, quote "\'';
    await tenant.ipam.networks.create({
      project: project.slug,
      name: 'vpc',
      description: awkward,
      cidrs: [{ cidr: '192.0.2.0/24' }, { cidr: '2001:db8::/48' }],
    });
    await tenant.ipam.claims.create({ project: project.slug, name: 'web', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' });
    await tenant.ipam.claims.create({ project: project.slug, name: 'db', network: 'vpc', prefixLength: 27, reclaimPolicy: 'Retain' });
    await tenant.ipam.claims.create({ project: project.slug, name: 'v6', network: 'vpc', family: 6, prefixLength: 64, reclaimPolicy: 'Delete' });
    await tenant.ipam.claims.delete({ project: project.slug, name: 'db' });
    await tenant.tokens.create({ project: project.slug, name: 'ci' });
    await source.sql`select graphile_worker.add_job('backup_test__noop', json_build_object('n', 1), job_key => 'backup-test-locked', run_at => now() + interval '1 day')`;
    await source.sql`select graphile_worker.add_job('backup_test__noop', json_build_object('n', 2), run_at => now() + interval '2 days')`;
    await source.sql`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'worker-that-is-gone' where key = 'backup-test-locked'`;
    const before = await contents(sourceUrl);
    expect(before['public.events'].length).toBeGreaterThan(5);
    expect(before['public.ip_claims']).toHaveLength(2);
    expect(before['graphile_worker._private_jobs'].some((j) => j.includes('backup-test-locked'))).toBe(true);
    const originalView = await consoleView(source.db, owner, operator, project.slug);
    expect(originalView.network.description).toBe(awkward);
    expect(originalView.retained.length).toBeGreaterThan(0);

    const backupFile = path.join(tmp, 'meridian.backup');
    const made = await cli(['backup', backupFile], { DATABASE_URL: sourceUrl });
    expect(made.stderr).toMatch(/backed up \d+ tables, \d+ rows/);
    expect((await stat(backupFile)).mode & 0o777).toBe(0o600);

    // Restore into a new, empty data directory, on a port of its own.
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'meridian-restored-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const embeddedEnv = { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(port) };
    const restored = await cli(['restore', backupFile], embeddedEnv);
    expect(restored.stderr).toMatch(/restored \d+ tables/);

    const embedded = await startEmbeddedPostgres({ dataDir, port, database: 'meridian' });
    cleanups.push(() => embedded.stop());
    const after = await contents(embedded.url);
    expect(after).toEqual(before);

    const target = createDb(embedded.url, { max: 4 });
    try {
      expect(await consoleView(target.db, owner, operator, project.slug)).toEqual(originalView);
      // The audit log is still append-only; the lock of a worker that does not exist is released.
      await expect(target.sql`update events set reason = 'rewritten'`).rejects.toThrow(/append-only/);
      await expect(target.sql`delete from events`).rejects.toThrow(/append-only/);
      const jobs = await target.sql<{ key: string | null; locked_by: string | null }[]>`select key, locked_by from graphile_worker._private_jobs`;
      expect(jobs.length).toBe(before['graphile_worker._private_jobs'].length);
      expect(jobs.filter((j) => j.locked_by !== null)).toEqual([]);
      expect(jobs.some((j) => j.key === 'backup-test-locked')).toBe(true);
      // New rows continue the restored sequences.
      const [{ max }] = await target.sql<{ max: string }[]>`select max(id)::text as max from events`;
      const [{ id }] = await target.sql<
        { id: string }[]
      >`insert into events (actor_type, actor_label, action, object_type) values ('system', 'test', 'test.after-restore', 'test') returning id::text`;
      expect(BigInt(id)).toBeGreaterThan(BigInt(max));
    } finally {
      await target.close();
    }
    // Migrations apply cleanly afterwards (nothing left to do).
    await migrateDatabase(embedded.url);
    const sql = sqlFor(embedded.url);
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
    await sql.end();
    expect(n).toBe((await migrationJournal()).length);

    // Back up the embedded database while it runs (as under `npm start`), and while it is stopped.
    const whileRunning = path.join(tmp, 'running.backup');
    await cli(['backup', whileRunning], embeddedEnv);
    await embedded.stop();
    const whileStopped = path.join(tmp, 'stopped.backup');
    await cli(['backup', whileStopped], embeddedEnv);
    expect(await body(whileStopped)).toEqual(await body(whileRunning));
    expect(await body(whileStopped)).toContain('test.after-restore');

    // A non-empty database is refused (--force is exercised below, on the library).
    const refused = await cliFailure(['restore', backupFile], embeddedEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not empty');
  });

  test('a backup from an older schema restores, then the newer migrations run on its rows', async () => {
    const sourceUrl = await freshDatabase();
    // Before quota (0006) and its defaults (0007), which give every existing project a grant.
    await migrateDatabase(sourceUrl, { through: '0005_cni' });
    const sql = sqlFor(sourceUrl);
    const slug = uniq('old');
    await sql`insert into organizations (slug, name) values (${`${slug}-org`}, 'Old org')`;
    await sql`insert into projects (organization_id, slug, name) select id, ${slug}, 'Old project' from organizations where slug = ${`${slug}-org`}`;
    await sql`insert into events (actor_type, actor_label, action, object_type, object_name) values ('system', 'test', 'project.create', 'project', ${slug})`;
    await sql.end();
    const file = path.join(tmp, 'old.backup');
    await backupDatabase(sourceUrl, createWriteStream(file));

    const targetUrl = await freshDatabase();
    const summary = await restoreDatabase(targetUrl, createReadStream(file));
    const journal = await migrationJournal();
    expect(summary.migrationsApplied).toBe(journal.length - 6);
    const target = sqlFor(targetUrl);
    try {
      expect(await target`select name from projects where slug = ${slug}`).toEqual([{ name: 'Old project' }]);
      expect(await target`select action from events where object_name = ${slug}`).toEqual([{ action: 'project.create' }]);
      // 0007 ran after the rows were loaded: the restored project got its default grant.
      expect(await target`select g.name from resource_grants g join projects p on p.id = g.project_id where p.slug = ${slug}`).toEqual([
        { name: `default-${slug}` },
      ]);
      const [{ n }] = await target<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
      expect(n).toBe(journal.length);
    } finally {
      await target.end();
    }
    await expect(restoreDatabase(targetUrl, createReadStream(file))).rejects.toMatchObject({ code: 'NotEmpty' });
    // --force replaces what is there: a row added since is gone, the backup's rows are back.
    const extra = sqlFor(targetUrl);
    await extra`insert into organizations (slug, name) values ('added-later', 'Added later')`;
    await extra.end();
    const before = await contents(targetUrl);
    await restoreDatabase(targetUrl, createReadStream(file), { force: true });
    const after = await contents(targetUrl);
    // (The rows that the newer migrations derive are made afresh, so only the backup's own are compared.)
    expect(after['public.organizations']).toEqual(before['public.organizations'].filter((r) => !r.includes('added-later')));
    expect(after['public.organizations']).toHaveLength(1);
    expect(after['public.projects']).toEqual(before['public.projects']);
    expect(after['public.events']).toEqual(before['public.events']);
  });

  test('a truncated or foreign file is refused and loads nothing', async () => {
    const sourceUrl = await freshDatabase();
    await migrateDatabase(sourceUrl);
    const source = createDb(sourceUrl, { max: 2 });
    await makeProject(source.db, uniq('cut'));
    await source.close();
    const file = path.join(tmp, 'whole.backup');
    await backupDatabase(sourceUrl, createWriteStream(file));

    const text = gunzipSync(await readFile(file)).toString('utf8');
    const cut = path.join(tmp, 'cut.backup');
    // Cut inside the events table: whole lines, so only the END check can tell.
    const at = text.indexOf('\n', text.indexOf('TABLE {"schema":"public","name":"events"') + 1) + 1;
    await writeFile(cut, gzipSync(text.slice(0, text.indexOf('\n', at) + 1)));
    const targetUrl = await freshDatabase();
    await expect(restoreDatabase(targetUrl, createReadStream(cut))).rejects.toMatchObject({ code: 'Corrupt' });
    const target = sqlFor(targetUrl);
    try {
      expect(await target`select count(*)::int as n from projects`).toEqual([{ n: 0 }]);
    } finally {
      await target.end();
    }

    const foreign = path.join(tmp, 'foreign.backup');
    await writeFile(foreign, 'PGDMP not ours');
    await expect(restoreDatabase(await freshDatabase(), createReadStream(foreign))).rejects.toMatchObject({ code: 'Corrupt' });
  });
});
