import type postgres from 'postgres';

/**
 * Least privilege. Meridian's processes connect as an application role that owns nothing: it may
 * read and write rows (and run the SQL functions, and graphile-worker's), but not change the schema,
 * and not change or delete the append-only audit log, which is protected by privileges as well as
 * by its trigger (db/sql/events_refuse_change.sql). Migrations run as the owner role, which owns the tables, and end
 * by granting the application role what it needs, so tables added by later migrations are covered.
 */
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Grants `role` the application's privileges on the current database (run as the owner, after migrating). */
export async function grantApplicationRole(sql: postgres.Sql, role: string): Promise<void> {
  if (!ROLE_NAME.test(role)) throw new Error(`not a role name Meridian grants to: ${role}`);
  const [{ superuser }] = await sql<{ superuser: boolean }[]>`select rolsuper as superuser from pg_roles where rolname = ${role}`;
  if (superuser) throw new Error(`the application role "${role}" is a superuser; use a role without SUPERUSER, CREATEDB or CREATEROLE`);
  await sql.unsafe(`
    do $$ begin execute format('grant connect, temporary on database %I to ${role}', current_database()); end $$;
    grant usage on schema public, graphile_worker, drizzle to ${role};
    grant select, insert, update, delete on all tables in schema public, graphile_worker to ${role};
    grant select on all tables in schema drizzle to ${role};
    grant usage, select, update on all sequences in schema public, graphile_worker to ${role};
    grant execute on all functions in schema public, graphile_worker to ${role};
    revoke update, delete, truncate on public.events from ${role};
  `);
  // graphile-worker enables row-level security on its private tables and adds no policy, so that
  // only their owner sees rows: the application role, which adds and runs jobs, gets one of its own.
  await sql.unsafe(`
    do $$
    declare t text;
    begin
      for t in select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
               where n.nspname = 'graphile_worker' and c.relkind = 'r' and c.relrowsecurity loop
        if not exists (select 1 from pg_policy p where p.polrelid = format('graphile_worker.%I', t)::regclass and p.polname = 'rows_of_${role}') then
          execute format('create policy %I on graphile_worker.%I to ${role} using (true) with check (true)', 'rows_of_${role}', t);
        end if;
      end loop;
    end $$;
  `);
}

/** The user name of a PostgreSQL URL (single- or multi-host). */
export function roleOfUrl(url: string): string | undefined {
  const m = /^postgres(?:ql)?:\/\/([^:@/]+)(?::[^@/]*)?@/.exec(url);
  return m ? decodeURIComponent(m[1]) : undefined;
}
