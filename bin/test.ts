/**
 * `npm test`: type checking, lint (`npm run lint`: ESLint with the import-boundary rules, and the
 * Prettier check), unit + integration tests (Vitest, real PostgreSQL: a fresh database per run on a
 * throwaway embedded server, or on TEST_DATABASE_URL's server), the database suites
 * again on a database an older release made and this build migrated (`upgrade`), a production build,
 * the Playwright end-to-end suite in Debian's Chromium, then the system tests on that build:
 * `scale-out` (2 web + 2 worker processes and the simulator on one database), `chaos` (the same,
 * killed with SIGKILL under load), `stall` (one web process's database stalled: pages, auth routes and
 * probes answer within the deadline) and, last, `failover` (the database stalled, then its primary
 * killed and a synchronous standby promoted, under load), `patroni` (a three-member cluster under
 * Patroni and etcd deciding failovers under the same load: the leader's postmaster killed, the leader
 * node lost, the leader cut off from etcd) and `images` (`npm run build:images`, then the meridian
 * image's root file system run against a PostgreSQL on loopback). Stops at the first failing stage.
 *
 * Opt-in stages run only when TEST_STAGES names them: `patroni` (a three-member Patroni cluster on
 * etcd deciding failovers under load, test/system/patroni.test.ts) until its node-lost and
 * partition faults meet the 15 s recovery target (docs/deployment.md, "Production database"), and
 * `images` (builds both images, then the smoke test) until it has passed twice in a row in the
 * default run's place; `audit` (bin/audit.ts) needs the registry's
 * advisory endpoint, which the registry this project's machines and CI reach does not serve (it
 * answers 405), so in the default run it could only fail.
 *
 * CI shows only the tail of this output: a failed stage's digest (`test-results/<stage>-digest.txt`,
 * written by the system tests when they fail: seed, logs, violations) is printed after the summary.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
const only = process.env.TEST_STAGES?.split(',');
const digestOf = (stage: string) => path.join(root, 'test-results', `${stage}-digest.txt`);

const stages: { name: string; cmd: string; args: string[]; env?: NodeJS.ProcessEnv; optIn?: boolean }[] = [
  { name: 'typecheck', cmd: bin('tsc'), args: ['--noEmit'] },
  { name: 'lint', cmd: 'npm', args: ['run', '--silent', 'lint'] },
  { name: 'unit+integration', cmd: bin('vitest'), args: ['run'] },
  { name: 'upgrade', cmd: bin('vitest'), args: ['run', '--config', 'test/upgrade/vitest.config.ts'] },
  { name: 'build', cmd: process.execPath, args: ['--import', 'tsx', path.join(root, 'bin', 'build.ts')] },
  { name: 'e2e', cmd: bin('playwright'), args: ['test'] },
  { name: 'scale-out', cmd: bin('vitest'), args: ['run', '--config', 'test/system/vitest.config.ts', 'test/system/scale-out.test.ts'] },
  { name: 'chaos', cmd: bin('vitest'), args: ['run', '--config', 'test/system/vitest.config.ts', 'test/system/chaos.test.ts'] },
  { name: 'stall', cmd: bin('vitest'), args: ['run', '--config', 'test/system/vitest.config.ts', 'test/system/stall.test.ts'] },
  { name: 'failover', cmd: bin('vitest'), args: ['run', '--config', 'test/system/vitest.config.ts', 'test/system/failover.test.ts'] },
  { name: 'patroni', cmd: bin('vitest'), args: ['run', '--config', 'test/system/vitest.config.ts', 'test/system/patroni.test.ts'], optIn: true },
  { name: 'images', cmd: bin('vitest'), args: ['run', '--config', 'test/images/vitest.config.ts'], optIn: true },
  { name: 'audit', cmd: process.execPath, args: ['--import', 'tsx', path.join(root, 'bin', 'audit.ts')], optIn: true },
];

const results: { name: string; ok: boolean; seconds: number }[] = [];
for (const stage of stages) {
  if (only ? !only.includes(stage.name) : stage.optIn) continue;
  process.stdout.write(`\n=== ${stage.name} ===\n`);
  rmSync(digestOf(stage.name), { force: true });
  const started = Date.now();
  const { status } = spawnSync(stage.cmd, stage.args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...stage.env },
  });
  results.push({ name: stage.name, ok: status === 0, seconds: (Date.now() - started) / 1000 });
  if (status !== 0) break;
}
process.stdout.write('\n=== summary ===\n');
for (const r of results) process.stdout.write(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name} (${r.seconds.toFixed(1)} s)\n`);
for (const r of results) {
  if (!r.ok && existsSync(digestOf(r.name))) process.stdout.write(`\n=== ${r.name}: digest ===\n${readFileSync(digestOf(r.name), 'utf8')}`);
}
const failed = results.some((r) => !r.ok) || results.length === 0;
process.exit(failed ? 1 : 0);
