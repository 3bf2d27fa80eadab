import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@/bin/lib/embedded-postgres';
import { systemActor } from '@/server/audit/events';
import { createNetwork } from '@/server/ipam/networks';
import { createOrganization } from '@/server/tenancy/projects';
import { createProject } from '@/server/workflows/project-creation';
import { freePort } from '@/test/global-setup';
import { uniq } from '@/test/db';
import { createDb, type DbHandle } from './client';
import { pgCode } from '@/server/errors';
import { migrateDatabase } from './migrate';

/**
 * Least privilege on the real PostgreSQL: `npm start`'s embedded server gives the processes a role
 * that is no superuser and owns nothing; after migrating, that role reads and writes rows and runs
 * the domain's SQL, but cannot change the schema or the append-only audit log.
 */
let embedded: EmbeddedDatabase;
let dir: string;
let app: DbHandle;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-roles-'));
  embedded = await startEmbeddedPostgres({ dataDir: dir, port: await freePort(), database: 'meridian' });
  await migrateDatabase(embedded.url, { appRole: 'meridian_app' });
  app = createDb(embedded.appUrl, { max: 2, applicationName: 'roles-test' });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await embedded?.stop();
  await rm(dir, { recursive: true, force: true });
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'allowed',
    (e: unknown) => pgCode(e) ?? String(e),
  );

describe('the application role', () => {
  test('is not a superuser and owns no table', async () => {
    const [me] = (await app.db.execute(sql`select rolsuper, rolcreatedb, rolcreaterole from pg_roles where rolname = current_user`)) as unknown as {
      rolsuper: boolean;
      rolcreatedb: boolean;
      rolcreaterole: boolean;
    }[];
    expect(me).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false });
    const [{ owned }] = (await app.db.execute(sql`select count(*)::int as owned from pg_tables where tableowner = current_user`)) as unknown as {
      owned: number;
    }[];
    expect(owned).toBe(0);
  });

  test('does the domain’s work: projects, networks and their audit events', async () => {
    const actor = systemActor('roles-test');
    const org = await createOrganization(app.db, { slug: uniq('org'), name: 'org' }, actor);
    const project = await createProject(app.db, { organizationId: org.id, slug: uniq('p'), name: 'p' }, actor);
    await createNetwork(app.db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] } as never, actor);
    const [{ n }] = (await app.db.execute(sql`select count(*)::int as n from events where project_id = ${project.id}`)) as unknown as { n: number }[];
    expect(n).toBeGreaterThan(0);
  });

  test('adds background jobs and sees them, as the worker must (graphile-worker’s tables are under row-level security)', async () => {
    const task = uniq('roles_test').replace(/-/g, '_');
    await app.db.execute(sql`select graphile_worker.add_job(${task}, '{}'::json)`);
    const [{ n }] = (await app.db.execute(sql`
      select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = ${task}`)) as unknown as { n: number }[];
    expect(n).toBe(1);
  });

  test('cannot change the schema, nor change or delete audit events', async () => {
    expect(await refusal(app.db.execute(sql`create table intruder (id int)`))).toBe('42501');
    expect(await refusal(app.db.execute(sql`alter table events add column note text`))).toBe('42501');
    expect(await refusal(app.db.execute(sql`update events set reason = 'rewritten'`))).toBe('42501');
    expect(await refusal(app.db.execute(sql`delete from events`))).toBe('42501');
    expect(await refusal(app.db.execute(sql`truncate events`))).toBe('42501');
  });

  test('a superuser is never granted as the application role', async () => {
    await expect(migrateDatabase(embedded.url, { appRole: 'meridian' })).rejects.toThrow(/superuser/);
  });
});
