/**
 * The audit log at scale: `node --import tsx bench/audit.ts [events]` (default 1,000,000).
 *
 * A fresh database (DATABASE_URL's server, or a throwaway embedded PostgreSQL) gets `events` audit
 * events in one set-based INSERT: 200 projects (one in ten events outside any project), 500 actors,
 * the object kinds and actions the code writes, spread evenly over 90 days. Then it times
 * listEvents — what the console's audit page and its tRPC procedure call — for each filter the page
 * offers, alone and combined, on the first page and ten pages deep (keyset cursor), 50 events a
 * page: p50/p95 per filter and over all of them. Target: a filtered page p95 ≤ 300 ms. It also
 * times the filter choices (distinct actions and kinds) and a full CSV export of one project.
 * Figures only; nothing is asserted.
 */
import { sql } from 'drizzle-orm';
import { auditCsv } from '../server/audit/csv';
import { auditFilterChoices, listEvents, type EventFilter } from '../server/audit/events';
import { benchDatabase, percentile } from './lib/harness';

const total = Number(process.argv[2] ?? 1_000_000);
const samples = Number(process.env.BENCH_SAMPLES ?? 20);

const kinds = ['machine', 'network', 'ipclaim', 'apiToken', 'project', 'pool', 'cluster', 'resourcegrant', 'quotaincreaserequest', 'user', 'operation'];
const verbs = ['create', 'delete', 'update', 'release.requested', 'phase.Ready', 'phase.Released'];

async function main() {
  const bench = await benchDatabase();
  const { db } = bench.handle;
  try {
    const loadStart = performance.now();
    // Projects and actors drawn at random (seeded: the same data every run), independent of the action.
    await db.transaction(async (tx) => {
      await tx.execute(sql`select setseed(0.42)`);
      await tx.execute(sql`
      insert into events (at, actor_type, actor_id, actor_label, project_id, action, object_type, object_id, object_name, reason)
      select now() - interval '90 days' + (g::double precision / ${total}) * interval '90 days',
             case when g % 3 = 0 then 'system' else 'user' end,
             null,
             'actor-' || floor(random() * 500)::int || '@example.com',
             case when g % 10 = 0 then null else ('00000000-0000-4000-8000-' || lpad(floor(random() * 200)::int::text, 12, '0'))::uuid end,
             (${sql.raw(`array[${kinds.map((k) => `'${k}'`).join(',')}]`)})[1 + g % ${kinds.length}] || '.' ||
               (${sql.raw(`array[${verbs.map((v) => `'${v}'`).join(',')}]`)})[1 + (g / ${kinds.length}) % ${verbs.length}],
             (${sql.raw(`array[${kinds.map((k) => `'${k}'`).join(',')}]`)})[1 + g % ${kinds.length}],
             g::text,
             'object-' || g,
             case when g % 17 = 0 then 'bench reason ' || g else null end
      from generate_series(1::bigint, ${total}::bigint) g`);
    });
    await db.execute(sql`analyze events`);
    const loadMs = performance.now() - loadStart;
    const [{ n }] = (await db.execute(sql`select count(*)::int as n from events`)) as unknown as { n: number }[];
    console.log(`loaded ${n.toLocaleString('en')} events in ${(loadMs / 1000).toFixed(1)} s (insert + analyze)`);

    const project = '00000000-0000-4000-8000-000000000042';
    const day = 86_400_000;
    const now = Date.now();
    const filters: [string, Omit<EventFilter, 'limit' | 'cursor'>][] = [
      ['none', {}],
      ['project', { projectId: project }],
      ['actor', { actor: 'actor-42@example.com' }],
      ['object kind', { objectType: 'machine' }],
      ['action', { action: 'machine.release.requested' }],
      ['action group (machine.)', { action: 'machine.' }],
      ['time range (one day, 30 days ago)', { since: new Date(now - 31 * day), until: new Date(now - 30 * day) }],
      ['project + object kind', { projectId: project, objectType: 'machine' }],
      ['project + action', { projectId: project, action: 'machine.release.requested' }],
      ['project + actor', { projectId: project, actor: 'actor-42@example.com' }],
      ['actor + time range (7 days)', { actor: 'actor-42@example.com', since: new Date(now - 37 * day), until: new Date(now - 30 * day) }],
      ['object kind + time range (7 days)', { objectType: 'network', since: new Date(now - 37 * day), until: new Date(now - 30 * day) }],
      [
        'project + kind + action + range',
        { projectId: project, objectType: 'machine', action: 'machine.create', since: new Date(now - 60 * day), until: new Date(now) },
      ],
    ];

    const all: number[] = [];
    console.log(`\n${'filter'.padEnd(38)} ${'rows'.padStart(5)}  first page p50 / p95   10 pages deep p50 / p95`);
    for (const [label, filter] of filters) {
      // The cursor ten pages deep, found once.
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) cursor = (await listEvents(db, { ...filter, limit: 50, cursor })).nextCursor ?? undefined;
      const first: number[] = [];
      const deep: number[] = [];
      let rows = 0;
      for (let i = 0; i < samples; i++) {
        let t = performance.now();
        rows = (await listEvents(db, { ...filter, limit: 50 })).items.length;
        first.push(performance.now() - t);
        t = performance.now();
        await listEvents(db, { ...filter, limit: 50, cursor });
        deep.push(performance.now() - t);
      }
      all.push(...first, ...deep);
      const f = (v: number[]) => `${percentile(v, 50).toFixed(1)} / ${percentile(v, 95).toFixed(1)} ms`;
      console.log(`${label.padEnd(38)} ${String(rows).padStart(5)}  ${f(first).padEnd(22)} ${f(deep)}`);
    }
    console.log(
      `\nall filtered pages (${all.length}): p50 ${percentile(all, 50).toFixed(1)} ms, p95 ${percentile(all, 95).toFixed(1)} ms (target p95 ≤ 300 ms)`,
    );

    const choiceTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await auditFilterChoices(db);
      choiceTimes.push(performance.now() - t);
    }
    console.log(`filter choices (distinct actions and kinds, projects): p50 ${percentile(choiceTimes, 50).toFixed(1)} ms`);

    const t = performance.now();
    let lines = 0;
    for await (const chunk of auditCsv(db, { projectId: project })) lines += chunk.split('\r\n').length - 1;
    const ms = performance.now() - t;
    console.log(
      `CSV export of one project: ${(lines - 1).toLocaleString('en')} events in ${(ms / 1000).toFixed(2)} s (${Math.round((lines - 1) / (ms / 1000)).toLocaleString('en')} events/s)`,
    );
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
