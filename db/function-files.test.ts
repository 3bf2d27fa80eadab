import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { prepareDatabase } from '@/test/global-setup';
import { checksumOf, definesTriggerFunction, readFunctionFiles, repositoryRoot, type FunctionFile } from './function-files';
import { migrateDatabase, migrationsFolder } from './migrate';

/** The last versioned migration released before SQL functions moved into function files. */
const LAST_MIGRATION_BEFORE_FUNCTION_FILES = '0031_token_rights.sql';

/**
 * SQL functions are source files (db/function-files.ts): after `migrate`, the database's functions
 * are exactly the files' (compared with the files run into a scratch schema), a file is applied
 * again only when it changes, and editing or deleting a file is all a signature change or a
 * removal takes. Each test uses databases of its own, prepared as the run's database is: empty, or
 * in the upgrade run (test/upgrade/vitest.config.ts) loaded with an older release's dump first.
 */
const databases: string[] = [];
let files: FunctionFile[];

async function ownDatabase(options: { prepare?: boolean } = {}): Promise<{ url: string; sql: postgres.Sql }> {
  const name = `meridian_fnfiles_${Date.now()}_${Math.random().toString(36).slice(2, 6)}`;
  const admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  databases.push(name);
  const u = new URL(inject('databaseUrl'));
  u.pathname = `/${name}`;
  if (options.prepare ?? true) await prepareDatabase(u.toString(), inject('upgradeFrom'));
  return { url: u.toString(), sql: postgres(u.toString(), { max: 2, onnotice: () => {} }) };
}

const open: postgres.Sql[] = [];
async function database(options: { prepare?: boolean } = {}) {
  const d = await ownDatabase(options);
  open.push(d.sql);
  return d;
}

beforeAll(async () => {
  files = await readFunctionFiles();
});

afterAll(async () => {
  await Promise.all(open.map((s) => s.end()));
  const admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  for (const name of databases) await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

const OWNED = `p.prokind in ('f', 'p') and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`;

/** Every function Meridian owns in `public`: signature → its definition as PostgreSQL prints it. */
async function publicFunctions(sql: postgres.Sql): Promise<Map<string, string>> {
  const rows = await sql.begin(async (tx) => {
    await tx`set local search_path = public`;
    return tx.unsafe<{ sig: string; def: string }[]>(
      `select p.proname || '(' || oidvectortypes(p.proargtypes) || ')' as sig, pg_get_functiondef(p.oid) as def
       from pg_proc p where p.pronamespace = 'public'::regnamespace and ${OWNED}`,
    );
  });
  return new Map(rows.map((r) => [r.sig, r.def]));
}

/** What `file` defines, run into a scratch schema (rolled back), printed as if it were in `public`. */
async function definedBy(sql: postgres.Sql, f: FunctionFile): Promise<Map<string, string>> {
  const scratch = `fnfiles_check_${Math.random().toString(36).slice(2, 8)}`;
  let defined = new Map<string, string>();
  await sql
    .begin(async (tx) => {
      await tx.unsafe(`create schema ${scratch}; set local check_function_bodies = off; set local search_path = ${scratch}, public`);
      await tx.unsafe(f.text).simple();
      await tx`set local search_path = public`;
      const rows = await tx.unsafe<{ sig: string; def: string }[]>(
        `select p.proname || '(' || oidvectortypes(p.proargtypes) || ')' as sig, pg_get_functiondef(p.oid) as def
         from pg_proc p where p.pronamespace = '${scratch}'::regnamespace and ${OWNED}`,
      );
      defined = new Map(rows.map((r) => [r.sig, r.def.replace(`FUNCTION ${scratch}.`, 'FUNCTION public.')]));
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  return defined;
}
class Rollback extends Error {}

/** The functions' rows in `pg_proc` as last written (xmin), to see that a migration left them alone. */
async function procVersions(sql: postgres.Sql): Promise<Record<string, string>> {
  const rows = await sql.unsafe<{ name: string; xmin: string }[]>(
    `select p.oid::regprocedure::text as name, p.xmin::text as xmin from pg_proc p where p.pronamespace = 'public'::regnamespace and ${OWNED}`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.xmin]));
}

async function recorded(sql: postgres.Sql): Promise<Record<string, { checksum: string; appliedAt: string }>> {
  const rows = await sql<{ file: string; checksum: string; applied_at: string }[]>`select file, checksum, applied_at::text from drizzle.function_files`;
  return Object.fromEntries(rows.map((r) => [r.file, { checksum: r.checksum, appliedAt: r.applied_at }]));
}

/** `files` with `file`'s text changed by `edit` (or without it, when `edit` is null). */
function withFile(file: string, edit: ((text: string) => string) | null): FunctionFile[] {
  expect(files.some((f) => f.file === file)).toBe(true);
  return files.flatMap((f) => (f.file !== file ? [f] : edit ? [{ file: f.file, text: edit(f.text) }] : []));
}

async function source(sql: postgres.Sql, fn: string): Promise<string | undefined> {
  const [row] = await sql<{ src: string }[]>`select prosrc as src from pg_proc where proname = ${fn} and pronamespace = 'public'::regnamespace`;
  return row?.src;
}

describe('function files', () => {
  test('live beside their domains, one function each, named after it, with CREATE OR REPLACE and unqualified names', async () => {
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) {
      expect(f.file).toMatch(/^(db\/sql|server\/[a-z-]+\/sql)\/[a-z0-9_]+\.sql$/);
      const creates = [...f.text.matchAll(/\bcreate\s+(or\s+replace\s+)?function\s+([\w."]+)\s*\(/gi)];
      expect(creates.length, f.file).toBeGreaterThan(0);
      for (const c of creates) {
        expect(c[1], `${f.file}: CREATE OR REPLACE`).toBeTruthy();
        expect(c[2], `${f.file}: the function is named after its file, unqualified`).toBe(path.basename(f.file, '.sql'));
      }
    }
  });

  test('no versioned migration since the function files defines, alters or drops a function', async () => {
    // The migrations released before the function files existed (through 0031) defined functions
    // themselves; released migrations never change, and the files replace what they defined.
    const offenders: string[] = [];
    const since = (await readdir(migrationsFolder)).filter((n) => n.endsWith('.sql') && n > LAST_MIGRATION_BEFORE_FUNCTION_FILES);
    expect(since.length).toBeGreaterThan(0);
    for (const name of since) {
      const text = await readFile(path.join(migrationsFolder, name), 'utf8');
      if (/\b(create\s+(or\s+replace\s+)?|alter\s+|drop\s+)(function|procedure|routine)\b/i.test(text)) offenders.push(name);
    }
    expect(offenders).toEqual([]);
  });

  test('after migrate, the database holds exactly the functions the files define, with their text', async () => {
    const { sql } = await database();
    const inDatabase = await publicFunctions(sql);
    const fromFiles = new Map<string, string>();
    for (const f of files) {
      const defined = await definedBy(sql, f);
      expect(defined.size, `${f.file} defines a function`).toBeGreaterThan(0);
      for (const [sig, def] of defined) {
        expect(fromFiles.has(sig), `${sig} is defined by one file only`).toBe(false);
        fromFiles.set(sig, def);
      }
    }
    expect([...inDatabase.keys()].sort()).toEqual([...fromFiles.keys()].sort());
    for (const [sig, def] of fromFiles) expect(inDatabase.get(sig), sig).toBe(def);
    // And the bookkeeping agrees, so the next migrate applies nothing.
    const rows = await recorded(sql);
    expect(Object.fromEntries(Object.entries(rows).map(([file, r]) => [file, r.checksum]))).toEqual(
      Object.fromEntries(files.map((f) => [f.file, checksumOf(f.text)])),
    );
  });

  test('trigger functions are recognised (they are applied before the migrations that create their triggers)', () => {
    const triggers = files.filter(definesTriggerFunction).map((f) => path.basename(f.file, '.sql'));
    expect(triggers.sort()).toEqual([
      'api_tokens_revoke_with_creator',
      'capacity_series_delete_samples',
      'events_refuse_change',
      'machine_allocations_immutable',
      'machine_capacity_device_ref_immutable',
      'machine_wait_history',
      'project_deletion_wake_on_release',
      'project_refuse_new_objects',
      'provider_operation_history',
    ]);
  });
});

describe('migrate and the function files', () => {
  test('running migrate again changes nothing; a changed file is applied again, alone', async () => {
    const { url, sql } = await database();
    const before = { rows: await recorded(sql), procs: await procVersions(sql) };
    expect(await migrateDatabase(url)).toEqual({ migrations: [], functionFiles: [], functionsDropped: [], functionFilesSkipped: false });
    expect(await recorded(sql)).toEqual(before.rows);
    expect(await procVersions(sql)).toEqual(before.procs);

    const file = 'server/ipam/sql/ipam_release.sql';
    const edited = withFile(file, (t) => t.replace('BEGIN\n', 'BEGIN\n  -- probe: this text came from the edited file\n'));
    const result = await migrateDatabase(url, { functionFiles: edited });
    expect(result).toEqual({ migrations: [], functionFiles: [file], functionsDropped: [], functionFilesSkipped: false });
    expect(await source(sql, 'ipam_release')).toContain('probe: this text came from the edited file');
    const after = await recorded(sql);
    for (const f of files) {
      if (f.file === file) expect(after[f.file].checksum).toBe(checksumOf(edited.find((e) => e.file === file)!.text));
      else expect(after[f.file], f.file).toEqual(before.rows[f.file]);
    }
    const procs = await procVersions(sql);
    for (const [name, xmin] of Object.entries(before.procs)) {
      if (name.startsWith('ipam_release(')) expect(procs[name]).not.toBe(xmin);
      else expect(procs[name], name).toBe(xmin);
    }

    // The file as it is: applied again, alone.
    expect((await migrateDatabase(url)).functionFiles).toEqual([file]);
    expect(await source(sql, 'ipam_release')).not.toContain('probe');
  });

  test('a function changed outside its file (by hand, or by a migration) is put back to the file’s text', async () => {
    const { url, sql } = await database();
    await sql.unsafe(`create or replace function ipam_buddy(b cidr) returns cidr language sql immutable as $$ select b $$`);
    expect((await migrateDatabase(url)).functionFiles).toEqual(['server/ipam/sql/ipam_buddy.sql']);
    expect(await source(sql, 'ipam_buddy')).toContain('broadcast');
    const [{ parallel }] = await sql<{ parallel: string }[]>`select proparallel as parallel from pg_proc where proname = 'ipam_buddy'`;
    expect(parallel).toBe('s');
  });

  test('a new signature replaces the old one; a changed return type or argument names replace the function', async () => {
    const { url, sql } = await database();
    const changed = withFile('server/quota/sql/quota_unadmit.sql', (t) => t.replace('p_count int,', 'p_count bigint,')).map((f) =>
      f.file === 'server/cni/sql/cni_node_block_return.sql'
        ? { ...f, text: f.text.replaceAll('p_block', 'p_pool') }
        : f.file === 'server/ipam/sql/ipam_buddy.sql'
          ? { ...f, text: f.text.replace('ipam_buddy(b cidr) RETURNS cidr', 'ipam_buddy(b cidr) RETURNS inet') }
          : f,
    );
    const result = await migrateDatabase(url, { functionFiles: changed });
    const three = ['server/cni/sql/cni_node_block_return.sql', 'server/ipam/sql/ipam_buddy.sql', 'server/quota/sql/quota_unadmit.sql'];
    expect(result.functionFiles.sort()).toEqual(three);
    expect(result.functionsDropped).toEqual(['quota_unadmit(uuid, jsonb, integer, uuid)']);
    const shapes = await sql<{ name: string; args: string; result: string }[]>`
      select p.oid::regprocedure::text as name, pg_get_function_arguments(p.oid) as args, pg_get_function_result(p.oid) as result
      from pg_proc p where p.proname in ('quota_unadmit', 'cni_node_block_return', 'ipam_buddy') order by 1`;
    expect(shapes).toEqual([
      { name: 'cni_node_block_return(uuid)', args: 'p_pool uuid', result: 'boolean' },
      { name: 'ipam_buddy(cidr)', args: 'b cidr', result: 'inet' },
      { name: 'quota_unadmit(uuid,jsonb,bigint,uuid)', args: 'p_project uuid, p_requests jsonb, p_count bigint, p_claim uuid', result: 'void' },
    ]);

    // Back to the source: the same three files again, the bigint overload dropped.
    const back = await migrateDatabase(url);
    expect(back.functionFiles.sort()).toEqual(three);
    expect(back.functionsDropped).toEqual(['quota_unadmit(uuid, jsonb, bigint, uuid)']);
    expect(await publicFunctions(sql)).toEqual(await publicFunctions((await database()).sql));
  });

  test('deleting a file drops its function; a trigger function whose trigger remains cannot be dropped, and migrate then changes nothing', async () => {
    const { url, sql } = await database();
    const result = await migrateDatabase(url, { functionFiles: withFile('server/ipam/sql/ipam_range_blocks.sql', null) });
    expect(result).toMatchObject({ functionFiles: [], functionsDropped: ['ipam_range_blocks(inet, inet)'] });
    expect(await source(sql, 'ipam_range_blocks')).toBeUndefined();
    expect(Object.keys(await recorded(sql))).not.toContain('server/ipam/sql/ipam_range_blocks.sql');

    const before = { rows: await recorded(sql), procs: await procVersions(sql) };
    // The source again (ipam_range_blocks is back), but without the append-only trigger's function.
    await expect(migrateDatabase(url, { functionFiles: withFile('db/sql/events_refuse_change.sql', null) })).rejects.toThrow(
      /events_refuse_change\(\).*trigger events_append_only/s,
    );
    expect(await recorded(sql)).toEqual(before.rows);
    expect(await procVersions(sql)).toEqual(before.procs);
    expect(await source(sql, 'ipam_range_blocks')).toBeUndefined();
  });

  test('a body that does not compile fails migrate, naming the file, and changes nothing', async () => {
    const { url, sql } = await database();
    const before = await procVersions(sql);
    const file = 'server/quota/sql/quota_unadmit.sql';
    await expect(
      migrateDatabase(url, { functionFiles: withFile(file, (t) => t.replace('FROM jsonb_array_elements', 'FROM no_such_table, jsonb_array_elements')) }),
    ).rejects.toThrow(/server\/quota\/sql\/quota_unadmit\.sql.*no_such_table/s);
    const broken = withFile('server/cni/sql/cni_lease_add.sql', (t) => t.replace('END IF;', 'END IFF;'));
    const line =
      broken
        .find((f) => f.file === 'server/cni/sql/cni_lease_add.sql')!
        .text.split('\n')
        .findIndex((l) => l.includes('END IFF;')) + 1;
    await expect(migrateDatabase(url, { functionFiles: broken })).rejects.toThrow(
      `function file server/cni/sql/cni_lease_add.sql (line ${line}): cni_lease_add(jsonb): syntax error`,
    );
    expect(await procVersions(sql)).toEqual(before);
  });

  test('a function defined by two files fails migrate', async () => {
    const { url } = await database();
    const copy = { file: 'server/cni/sql/ipam_buddy.sql', text: files.find((f) => f.file === 'server/ipam/sql/ipam_buddy.sql')!.text };
    await expect(migrateDatabase(url, { functionFiles: [...files, copy] })).rejects.toThrow(
      'function ipam_buddy(cidr) is defined by two function files, server/cni/sql/ipam_buddy.sql and server/ipam/sql/ipam_buddy.sql',
    );
  });

  test('a build older than the database (it lacks the database’s newest migration) leaves the functions alone', async () => {
    const { url, sql } = await database();
    const [{ newest }] = await sql<{ newest: string }[]>`select max(created_at)::text as newest from drizzle.__drizzle_migrations`;
    await sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('from a newer build', ${Number(newest) + 1})`;
    const result = await migrateDatabase(url, {
      functionFiles: withFile('server/ipam/sql/ipam_release.sql', (t) => t.replace('BEGIN\n', 'BEGIN\n  -- older\n')),
    });
    expect(result).toEqual({ migrations: [], functionFiles: [], functionsDropped: [], functionFilesSkipped: true });
    expect(await source(sql, 'ipam_release')).not.toContain('older');
  });

  test('concurrent migrates of a new database: each waits, one does the work, all succeed', async () => {
    const { url, sql } = await database({ prepare: false });
    const results = await Promise.all([1, 2, 3].map(() => migrateDatabase(url)));
    const working = results.filter((r) => r.functionFiles.length > 0);
    expect(working).toHaveLength(1);
    expect(working[0].functionFiles.sort()).toEqual(files.map((f) => f.file));
    expect(results.filter((r) => r.migrations.length === 0 && r.functionFiles.length === 0)).toHaveLength(2);
    expect((await publicFunctions(sql)).size).toBe(files.length);
  });

  test('the function files are where this build finds them', async () => {
    expect(repositoryRoot).toBe(path.resolve(migrationsFolder, '..', '..'));
    expect(files.map((f) => f.file)).toContain('db/sql/events_refuse_change.sql');
  });
});
