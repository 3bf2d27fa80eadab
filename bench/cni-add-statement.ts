/**
 * bench/cni-add-statement: what PostgreSQL spends on ONE lone CNI ADD statement (as a lone ADD's
 * request sends it: cni_lease_add_confirmed, one statement in autocommit, its commit included), apart
 * from HTTP and the web process. One connection runs ADDs one after another for new containers on a
 * node whose block is carved (then DELs them, unmeasured), and the figures are that backend's own CPU
 * per ADD (from /proc: steady however busy the machine is), the statement's time seen by the client,
 * and WAL bytes per ADD.
 *
 * Alternative definitions can be measured in the same run, interleaved round by round with the
 * files of this build: each extra argument is a .sql file of CREATE OR REPLACE FUNCTION statements
 * (e.g. an earlier version of server/cni/sql/cni_lease_add.sql from git show), applied before its
 * rounds; the build's files are applied again before theirs.
 *
 *   node --import tsx bench/cni-add-statement.ts [adds=200] [rounds=4] [alternative.sql ...]
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { systemActor } from '../server/audit/events';
import { createCluster, findCluster } from '../server/cni/clusters';
import { addLease } from '../server/cni/leases';
import { createNetwork } from '../server/ipam/networks';
import { createOrganization } from '../server/tenancy/projects';
import { createProject } from '../server/workflows/project-creation';
import { readFunctionFiles } from '../db/function-files';
import { benchDatabase, fmt, percentile, processCpuSeconds } from './lib/harness';

const actor = systemActor('bench');
const ADDS = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 4);
const alternatives = process.argv.slice(4);

async function main() {
  const bench = await benchDatabase();
  const { db } = bench.handle;
  const org = await createOrganization(db, { slug: 'bench', name: 'bench' }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: 'bench', name: 'bench' }, actor);
  await createNetwork(db, project.id, { name: 'pods', cidrs: [{ cidr: '10.64.0.0/16' }] }, actor);
  // A /22 block: a round's ADDs all fit in the block the resident pod's ADD carves.
  await createCluster(db, project.id, { name: 'lone', network: 'pods', nodeBlockPrefixV4: 22 }, actor);
  await addLease(db, await findCluster(db, project.id, 'lone'), { cniNetwork: 'k8s', containerId: 'resident', ifname: 'eth0', node: 'node-1' }, actor);

  const own = (await readFunctionFiles()).filter((f) => f.file.startsWith('server/cni/sql/') || f.file.startsWith('server/ipam/sql/'));
  const variants = [{ name: 'this build', sql: own.map((f) => f.text) }, ...alternatives.map((file) => ({ name: file, sql: [readFileSync(file, 'utf8')] }))];
  const client = postgres(bench.url, { max: 1, onnotice: () => {} });
  const [{ pid }] = await client`select pg_backend_pid() as pid`;
  const [{ id: clusterId }] = await client`select id from clusters where name = 'lone'`;
  const [{ network_id: networkId }] = await client`select network_id from clusters where name = 'lone'`;
  const results = new Map<string, { cpu: number[]; ms: number[]; wal: number[] }>(variants.map((v) => [v.name, { cpu: [], ms: [], wal: [] }]));
  const lsn = async () => {
    const [{ l }] = await client`select pg_current_wal_lsn() - '0/0'::pg_lsn as l`;
    return Number(l);
  };
  let seq = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const v of variants) {
      for (const text of v.sql) await client.unsafe(text);
      const args = (containerId: string) => ({
        cluster: clusterId,
        project: project.id,
        network: networkId,
        cniNetwork: 'k8s',
        containerId,
        ifname: 'eth0',
        node: 'node-1',
        podNamespace: 'default',
        podName: containerId,
        pod: `default/${containerId}`,
        objectName: `lone/${containerId}/eth0`,
        actor: { type: 'system', id: null, label: 'bench' },
      });
      const ids: string[] = [];
      const ms: number[] = [];
      const cpu0 = processCpuSeconds(Number(pid));
      const wal0 = await lsn();
      for (let i = 0; i < ADDS; i++) {
        const id = `c${seq++}`;
        ids.push(id);
        const t = performance.now();
        const [{ r }] = await client`select cni_lease_add_confirmed(${client.json(args(id))}) as r`;
        ms.push(performance.now() - t);
        if (!r.addresses) throw new Error(`ADD answered ${JSON.stringify(r)}`);
      }
      const wal = (await lsn()) - wal0;
      const cpu = processCpuSeconds(Number(pid)) - cpu0;
      for (const id of ids) {
        await client`select cni_lease_release(${client.json({ cluster: clusterId, project: project.id, mode: 'key', cniNetwork: 'k8s', containerId: id, ifname: 'eth0', action: 'cni.del', objectName: id, actor: { type: 'system', id: null, label: 'bench' }, blockGraceSeconds: 300 })})`;
      }
      // Round 0 warms plans and caches for every variant.
      if (round === 0) continue;
      const r = results.get(v.name)!;
      r.cpu.push((cpu * 1000) / ADDS);
      r.ms.push(...ms);
      r.wal.push(wal / ADDS);
    }
  }
  process.stdout.write(
    `| lone ADD statement (${ADDS} per round, ${ROUNDS} rounds) | backend CPU per ADD, each round | p50 | p90 | WAL per ADD |\n|---|---|---|---|---|\n`,
  );
  for (const [name, r] of results) {
    process.stdout.write(
      `| ${name} | ${r.cpu.map((c) => c.toFixed(3)).join(' / ')} ms | ${fmt(percentile(r.ms, 50))} | ${fmt(percentile(r.ms, 90))} | ${(r.wal.reduce((a, b) => a + b, 0) / r.wal.length).toFixed(0)} B |\n`,
    );
  }
  await client.end();
  await bench.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
