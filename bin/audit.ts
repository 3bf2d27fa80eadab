/**
 * The dependency audit: the production dependencies (`npm audit --omit=dev`) against the registry's
 * advisory database. Fails on any high or critical finding and lists them; moderate and low ones
 * are counted, not fatal. An advisory endpoint that does not answer is exit code 2, said plainly —
 * never a pass. Run it with `TEST_STAGES=audit npm test` or `node --import tsx bin/audit.ts`.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Advisory {
  title?: string;
  url?: string;
  severity?: string;
  range?: string;
}
interface Report {
  message?: string;
  vulnerabilities?: Record<string, { severity: string; range: string; isDirect: boolean; via: (Advisory | string)[] }>;
  metadata?: { vulnerabilities: Record<'info' | 'low' | 'moderate' | 'high' | 'critical' | 'total', number> };
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = spawnSync('npm', ['audit', '--omit=dev', '--json'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
let report: Report | undefined;
try {
  report = JSON.parse(npm.stdout) as Report;
} catch {
  // not JSON: reported below
}
if (!report?.metadata || !report.vulnerabilities) {
  const reason = report?.message ?? (npm.stderr.trim().split('\n').pop() || npm.error?.message || 'no report');
  process.stderr.write(`audit: the advisory database could not be queried (${reason}); nothing was checked\n`);
  process.exit(2);
}
const fatal = Object.entries(report.vulnerabilities).filter(([, v]) => v.severity === 'high' || v.severity === 'critical');
for (const [name, v] of fatal) {
  const advisories = v.via.filter((a): a is Advisory => typeof a === 'object').map((a) => `${a.title ?? 'advisory'} ${a.url ?? ''}`.trim());
  const through = v.via.filter((a): a is string => typeof a === 'string');
  process.stdout.write(
    `${v.severity.toUpperCase()} ${name} ${v.range}${v.isDirect ? ' (direct)' : ''}: ${[...advisories, ...through.map((t) => `via ${t}`)].join('; ')}\n`,
  );
}
const c = report.metadata.vulnerabilities;
process.stdout.write(`audit: ${c.critical} critical, ${c.high} high, ${c.moderate} moderate, ${c.low} low in production dependencies\n`);
process.exit(fatal.length > 0 ? 1 : 0);
