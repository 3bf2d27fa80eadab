/**
 * Writes test/upgrade/fixture.sql: a plain-SQL pg_dump of a database migrated and used by the
 * Meridian checkout this script runs in (the demo seed, then a network with IPv4 and IPv6 pools,
 * a few IP claims, a retained allocation, a cluster with pod leases on two nodes and a cluster
 * token). test/upgrade/global-setup.ts loads it and migrates it with the current build, and the
 * domain suites then run on that upgraded database.
 *
 * Run it from a checkout of the release whose databases the fixture stands for (the fixture is
 * that release's schema, functions and rows), against a PostgreSQL server whose pg_dump is on PATH:
 *
 *   git worktree add /tmp/meridian-old <commit> && cd /tmp/meridian-old && npm ci
 *   FIXTURE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx test/upgrade/make-fixture.ts <out.sql>
 *
 * The dump uses INSERT statements (no COPY) and drops psql's meta-commands, so it loads through
 * any driver's simple query protocol, into a fresh database (whose public schema exists).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { createDb } from '../../db/client';
import { migrateDatabase } from '../../db/migrate';
import { seedDemoData } from '../../bin/lib/seed';
import { systemActor } from '../../server/audit/events';
import { createCluster, findCluster } from '../../server/cni/clusters';
import { addLease, releaseLeases } from '../../server/cni/leases';
import { createClaim } from '../../server/ipam/claims';
import { createNetwork } from '../../server/ipam/networks';
import { createApiToken } from '../../server/tenancy/tokens';

async function main() {
  const server = process.env.FIXTURE_DATABASE_URL;
  const out = process.argv[2];
  if (!server || !out) throw new Error('usage: FIXTURE_DATABASE_URL=<server url> make-fixture.ts <out.sql>');
  const name = `meridian_fixture_${Date.now()}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const u = new URL(server);
  u.pathname = `/${name}`;
  const url = u.toString();
  try {
    await migrateDatabase(url);
    const handle = createDb(url, { max: 4 });
    try {
      const { db } = handle;
      const actor = systemActor('fixture');
      await seedDemoData(db, { password: 'fixture-password' });
      const [{ id: projectId }] = await handle.sql<{ id: string }[]>`select id from projects where slug = 'acme-prod'`;
      await createNetwork(db, projectId, { name: 'fixture-vpc', cidrs: [{ cidr: '198.51.100.0/22' }, { cidr: '2001:db8:100::/48' }] }, actor);
      for (const [i, prefixLength] of [28, 27, 29].entries()) {
        await createClaim(db, projectId, { name: `fixture-claim-${i}`, network: 'fixture-vpc', family: 4, prefixLength, reclaimPolicy: 'Delete' }, actor);
      }
      await createClaim(db, projectId, { name: 'fixture-v6', network: 'fixture-vpc', family: 6, prefixLength: 64, reclaimPolicy: 'Delete' }, actor);
      await createClaim(
        db,
        projectId,
        { name: 'fixture-gw', network: 'fixture-vpc', address: '198.51.103.254', reclaimPolicy: 'Retain', retentionSeconds: 3600 },
        actor,
      );
      await createCluster(db, projectId, { name: 'fixture-cluster', network: 'fixture-vpc' }, actor);
      const cluster = await findCluster(db, projectId, 'fixture-cluster');
      await createApiToken(db, { projectId, name: 'fixture-cni', clusterName: 'fixture-cluster' }, actor);
      for (const node of ['node-a', 'node-b']) {
        for (let i = 0; i < 3; i++) {
          await addLease(
            db,
            cluster,
            { cniNetwork: 'k8s-pod-network', containerId: `${node}-ctr${i}`, ifname: 'eth0', node, podNamespace: 'default', podName: `pod-${i}` },
            actor,
          );
        }
      }
      await releaseLeases(db, cluster, { key: { cniNetwork: 'k8s-pod-network', containerId: 'node-b-ctr2', ifname: 'eth0' } }, actor);
    } finally {
      await handle.close();
    }
    const dump = execFileSync('pg_dump', ['--no-owner', '--no-privileges', '--inserts', '--dbname', url], { encoding: 'utf8', maxBuffer: 64 << 20 });
    // A database has its public schema already: the dump creates it only if missing.
    const lines = dump
      .split('\n')
      .filter((l) => !l.startsWith('\\') && !l.startsWith('COMMENT ON SCHEMA public '))
      .map((l) => (l === 'CREATE SCHEMA public;' ? 'CREATE SCHEMA IF NOT EXISTS public;' : l));
    const header = `-- ${path.basename(out)}: written by test/upgrade/make-fixture.ts (see there) from a checkout of ${sourceCommit()}.\n`;
    writeFileSync(out, header + lines.join('\n'));
  } finally {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

/** The commit this checkout is at (FIXTURE_SOURCE when it is not a git checkout). */
function sourceCommit(): string {
  if (process.env.FIXTURE_SOURCE) return process.env.FIXTURE_SOURCE;
  try {
    return `commit ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}`;
  } catch {
    return 'an unknown commit';
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
