/**
 * SQL functions are source code, not history. The current text of every SQL function Meridian
 * owns is one file beside its domain, `server/<domain>/sql/<name>.sql` (`db/sql/<name>.sql` for the
 * platform's), holding its `CREATE OR REPLACE FUNCTION` with its settings (a `SET` clause) and any
 * grants of its own. db/migrate.ts applies these files in the transaction that runs the versioned
 * migrations, each file only when its text changed (Flyway's repeatable migrations), and:
 *
 * - **Which functions a file defines** is learned by running it into a scratch schema first
 *   (names in a file are unqualified), and recorded with the file's checksum in
 *   `drizzle.function_files` (file, checksum, functions, definition, applied_at).
 * - **Order does not matter**: files are applied with `check_function_bodies = off` (a function may
 *   call one applied after it), then every function applied is checked by its language's
 *   validator with `check_function_bodies = on`, so a broken body still fails the migration.
 * - **Drift**: `definition` is a digest of the functions' `pg_get_functiondef` as applied; a file
 *   whose functions no longer read so (changed by hand, or by a migration) is applied again.
 * - **Signature changes and removals**: every function in schema `public` that no extension owns
 *   is Meridian's. After the files are applied, each such function that no file defines (an old
 *   signature of a changed file, the function of a deleted file) is dropped, without CASCADE: a
 *   trigger function still used by a trigger makes the migration fail until a versioned migration
 *   drops the trigger. So a file never drops anything itself; editing or deleting it is enough.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type postgres from 'postgres';

/** The repository root (function file paths are relative to it). */
export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One function file: its path from the repository root and its text. */
export interface FunctionFile {
  file: string;
  text: string;
}

/** The function files of this build: `db/sql/*.sql` and `server/<domain>/sql/*.sql`, by path. */
export async function readFunctionFiles(root = repositoryRoot): Promise<FunctionFile[]> {
  const dirs = ['db/sql'];
  for (const entry of await readdir(path.join(root, 'server'), { withFileTypes: true })) {
    if (entry.isDirectory()) dirs.push(`server/${entry.name}/sql`);
  }
  const files: FunctionFile[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = await readdir(path.join(root, dir));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    for (const name of names.filter((n) => n.endsWith('.sql'))) {
      files.push({ file: `${dir}/${name}`, text: await readFile(path.join(root, dir, name), 'utf8') });
    }
  }
  return files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

export const checksumOf = (text: string) => createHash('sha256').update(text).digest('hex');

const TRIGGER_FUNCTION = /\bcreate\s+or\s+replace\s+function\s+[\w"]+\s*\(\s*\)\s*returns\s+trigger\b/i;

/**
 * Whether the file defines a trigger function. Those are applied before the versioned migrations
 * too, because `CREATE TRIGGER` (schema, in a migration) needs its function to exist; taking no
 * arguments and returning `trigger`, they need nothing of the schema to be created.
 */
export const definesTriggerFunction = (f: FunctionFile) => TRIGGER_FUNCTION.test(f.text);

/** Bookkeeping beside drizzle's own `__drizzle_migrations`. */
export const FUNCTION_FILES_TABLE = `
  create table if not exists drizzle.function_files (
    file text primary key,
    checksum text not null,
    functions text[] not null,
    definition text not null,
    applied_at timestamptz not null default now()
  )`;

/**
 * A function's signature as recorded: its name and input argument types (what tells overloads
 * apart), as `search_path = public` prints them.
 */
const SIGNATURE = `p.proname || '(' || oidvectortypes(p.proargtypes) || ')'`;
/** What CREATE OR REPLACE cannot change in a function of the same signature: it is dropped first. */
const SHAPE = `p.prokind::text || ' ' || pg_get_function_arguments(p.oid) || ' -> ' || coalesce(pg_get_function_result(p.oid), '')`;
/** Functions (and procedures) of a schema that no extension owns. */
const OWNED = (schema: string) => `
  p.pronamespace = '${schema}'::regnamespace and p.prokind in ('f', 'p')
  and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`;

const SCRATCH = 'meridian_function_files_scratch';

export interface FunctionFilesResult {
  /** The files applied (changed, new, or drifted), by path. */
  applied: string[];
  /** The functions dropped because no file defines them any more. */
  dropped: string[];
}

type Tx = postgres.TransactionSql;

async function setting(tx: Tx, name: string, value: string) {
  await tx`select set_config(${name}, ${value}, true)`;
}

/** A PostgreSQL error's message with its detail and context (which trigger depends, which line of a body). */
function pgErrorText(e: unknown): string {
  const err = e as Error & { detail?: string; where?: string };
  return [err.message, err.detail, err.where].filter(Boolean).join('; ');
}

/**
 * Where in `f` a PostgreSQL error points: ` (line n)`, from the statement's position, or from the
 * position in a function body (which is the file's text verbatim); '' when it points nowhere.
 */
function lineIn(f: FunctionFile, e: unknown): string {
  const err = e as { position?: string; internal_position?: string; internal_query?: string };
  let offset = -1;
  if (err.position) offset = Number(err.position) - 1;
  else if (err.internal_position && err.internal_query) {
    const body = f.text.indexOf(err.internal_query);
    if (body >= 0) offset = body + Number(err.internal_position) - 1;
  }
  return offset >= 0 ? ` (line ${f.text.slice(0, offset).split('\n').length})` : '';
}

/** `f` run as one simple-protocol query; an error names the file and the line. */
async function runFile(tx: Tx, f: FunctionFile) {
  try {
    await tx.unsafe(f.text).simple();
  } catch (e) {
    throw new Error(`function file ${f.file}${lineIn(f, e)}: ${pgErrorText(e)}`, { cause: e });
  }
}

/** Drops a function without CASCADE: what still uses it (a trigger) makes the migration fail, saying so. */
async function dropRoutine(tx: Tx, routine: string, why: string) {
  try {
    await tx.unsafe(`drop routine ${routine}`);
  } catch (e) {
    throw new Error(`dropping ${routine} (${why}) failed: ${pgErrorText(e)}. Drop what uses it in a versioned migration`, { cause: e });
  }
}

/** A digest of the current definitions of `signatures` in `public` (a missing one counts as such). */
async function definitionOf(tx: Tx, signatures: string[]): Promise<string> {
  const [{ digest }] = await tx.unsafe<{ digest: string }[]>(
    `select md5(coalesce(string_agg(coalesce(pg_get_functiondef(p.oid), 'missing ' || s.sig), E'\\n' order by s.sig), '')) as digest
     from unnest($1::text[]) as s(sig)
     left join pg_proc p on ${OWNED('public')} and ${SIGNATURE} = s.sig`,
    [signatures],
  );
  return digest;
}

/**
 * Applies the files (of `files`, those `only` keeps) whose text or applied definition changed, in
 * the caller's transaction, which holds the migration lock. With `reconcile`, `files` is the whole
 * source: rows of files that are gone are deleted, and the functions no file defines are dropped.
 * Leaves bodies unchecked (see validateFunctions) and the session's settings as they were.
 */
export async function applyFunctionFiles(
  tx: Tx,
  files: FunctionFile[],
  options: { only?: (f: FunctionFile) => boolean; reconcile?: boolean } = {},
): Promise<FunctionFilesResult> {
  const [{ search_path: searchPath, check: checkBodies }] = await tx<{ search_path: string; check: string }[]>`
    select current_setting('search_path') as search_path, current_setting('check_function_bodies') as check`;
  const recorded = new Map(
    (
      await tx<{ file: string; checksum: string; functions: string[]; definition: string }[]>`
      select file, checksum, functions, definition from drizzle.function_files`
    ).map((r) => [r.file, r]),
  );
  const applied: string[] = [];
  const dropped: string[] = [];
  // Set for the transaction and put back at the end (an error rolls the transaction back whole).
  await setting(tx, 'search_path', 'public');
  await setting(tx, 'check_function_bodies', 'off');
  for (const f of files) {
    if (options.only && !options.only(f)) continue;
    const checksum = checksumOf(f.text);
    const row = recorded.get(f.file);
    if (row && row.checksum === checksum && (await definitionOf(tx, row.functions)) === row.definition) continue;

    await tx.unsafe(`create schema ${SCRATCH}`);
    await setting(tx, 'search_path', `${SCRATCH}, public`);
    await runFile(tx, f);
    await setting(tx, 'search_path', 'public');
    const defined = await tx.unsafe<{ sig: string; shape: string }[]>(
      `select ${SIGNATURE} as sig, ${SHAPE} as shape from pg_proc p where ${OWNED(SCRATCH)} order by 1`,
    );
    await tx.unsafe(`drop schema ${SCRATCH} cascade`);
    if (defined.length === 0) {
      throw new Error(`function file ${f.file} defines no function (a function file holds CREATE OR REPLACE FUNCTION statements, names unqualified)`);
    }
    const functions = defined.map((d) => d.sig);
    // A new return type, argument names, defaults or OUT arguments: CREATE OR REPLACE refuses them.
    const reshaped = await tx.unsafe<{ routine: string }[]>(
      `select p.oid::regprocedure::text as routine from pg_proc p join unnest($1::text[], $2::text[]) as d(sig, shape) on ${SIGNATURE} = d.sig
       where ${OWNED('public')} and ${SHAPE} <> d.shape`,
      [functions, defined.map((d) => d.shape)],
    );
    for (const { routine } of reshaped) await dropRoutine(tx, routine, `its file ${f.file} changes what CREATE OR REPLACE cannot`);

    await runFile(tx, f);
    const definition = await definitionOf(tx, functions);
    await tx`
      insert into drizzle.function_files (file, checksum, functions, definition) values (${f.file}, ${checksum}, ${functions}, ${definition})
      on conflict (file) do update set checksum = excluded.checksum, functions = excluded.functions, definition = excluded.definition, applied_at = now()`;
    recorded.set(f.file, { file: f.file, checksum, functions, definition });
    applied.push(f.file);
  }

  if (options.reconcile) {
    const present = new Set(files.map((f) => f.file));
    const gone = [...recorded.keys()].filter((file) => !present.has(file));
    if (gone.length > 0) await tx`delete from drizzle.function_files where file = any(${gone})`;
    const definedBy = new Map<string, string>();
    for (const r of recorded.values()) {
      if (!present.has(r.file)) continue;
      for (const sig of r.functions) {
        const other = definedBy.get(sig);
        if (other) throw new Error(`function ${sig} is defined by two function files, ${[other, r.file].sort().join(' and ')}: keep it in one`);
        definedBy.set(sig, r.file);
      }
    }
    const owned = await tx.unsafe<{ sig: string; routine: string }[]>(
      `select ${SIGNATURE} as sig, p.oid::regprocedure::text as routine from pg_proc p where ${OWNED('public')} order by 1`,
    );
    for (const { sig, routine } of owned) {
      if (definedBy.has(sig)) continue;
      await dropRoutine(tx, routine, 'it is in no function file');
      dropped.push(sig);
    }
  }
  await setting(tx, 'check_function_bodies', checkBodies);
  await setting(tx, 'search_path', searchPath);
  return { applied, dropped };
}

/**
 * Checks the bodies of the functions that `files` define (as recorded by applyFunctionFiles) with
 * their languages' validators and `check_function_bodies = on`, as CREATE FUNCTION would have:
 * once every file is applied, so that order among them never matters.
 */
export async function validateFunctions(tx: Tx, files: FunctionFile[]): Promise<void> {
  if (files.length === 0) return;
  const [{ search_path: searchPath, check }] = await tx<{ search_path: string; check: string }[]>`
    select current_setting('search_path') as search_path, current_setting('check_function_bodies') as check`;
  await setting(tx, 'search_path', 'public');
  await setting(tx, 'check_function_bodies', 'on');
  const rows = await tx.unsafe<{ file: string; routine: string; validator: string; oid: string }[]>(
    `select f.file, p.oid::regprocedure::text as routine, l.lanvalidator::regproc::text as validator, p.oid::int8::text as oid
     from drizzle.function_files f cross join unnest(f.functions) as s(sig)
     join pg_proc p on ${OWNED('public')} and ${SIGNATURE} = s.sig
     join pg_language l on l.oid = p.prolang
     where f.file = any($1::text[]) and l.lanvalidator <> 0
     order by f.file, 2`,
    [files.map((f) => f.file)],
  );
  for (const r of rows) {
    try {
      await tx.unsafe(`select ${r.validator}($1::oid)`, [r.oid]);
    } catch (e) {
      const f = files.find((x) => x.file === r.file)!;
      throw new Error(`function file ${r.file}${lineIn(f, e)}: ${r.routine}: ${pgErrorText(e)}`, { cause: e });
    }
  }
  await setting(tx, 'check_function_bodies', check);
  await setting(tx, 'search_path', searchPath);
}
