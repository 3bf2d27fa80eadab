/**
 * The postgres driver's patch (patches/postgres+<version>.patch, applied by patch-package from npm's
 * postinstall; see CONTRIBUTING.md, "A patch to a dependency"): made for the installed version, and
 * every line it adds is in the installed driver, so an install that skipped or lost it fails here;
 * and what it changes, run against real servers: `target_session_attrs=read-write` never lands on a
 * hot standby (Debian's PostgreSQL server binaries, a primary and its streaming standby).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { describe, expect, test } from 'vitest';
import { startReplicatedPair } from '@/test/system/replication';

const root = path.resolve(__dirname, '..');

/** Each file a unified diff changes, with the lines it adds. */
function addedLines(patch: string): Map<string, string[]> {
  const files = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of patch.split('\n')) {
    const file = /^\+\+\+ b\/(.+)$/.exec(line);
    if (file) files.set(file[1], (current = []));
    else if (current && line.startsWith('+')) current.push(line.slice(1));
  }
  return files;
}

describe('the postgres driver patch', () => {
  const patches = readdirSync(path.join(root, 'patches')).filter((f) => f.startsWith('postgres+'));
  const installed = JSON.parse(readFileSync(path.join(root, 'node_modules', 'postgres', 'package.json'), 'utf8')) as { version: string };

  test('there is one, made for the installed version', () => {
    expect(patches).toEqual([`postgres+${installed.version}.patch`]);
  });

  test('every line it adds is in the installed driver (src, cjs and cf builds)', () => {
    const files = addedLines(readFileSync(path.join(root, 'patches', patches[0]), 'utf8'));
    expect([...files.keys()].sort()).toEqual(['cf/src/connection.js', 'cjs/src/connection.js', 'src/connection.js'].map((f) => `node_modules/postgres/${f}`));
    for (const [file, lines] of files) {
      const text = readFileSync(path.join(root, file), 'utf8').split('\n');
      expect(lines.length, file).toBeGreaterThan(0);
      for (const line of lines) expect(text, `${file}: ${line}`).toContain(line);
    }
  });

  test('target_session_attrs=read-write skips a hot standby listed first and lands every connection on the primary', async () => {
    const pair = await startReplicatedPair();
    const sql = postgres(`postgres://postgres@127.0.0.1:${pair.standbyPort},127.0.0.1:${pair.primaryPort}/postgres?target_session_attrs=read-write`, {
      max: 4,
      onnotice: () => {},
    });
    try {
      // Four statements at once: four connections, each opened through the host list.
      const answers = await Promise.all(
        [1, 2, 3, 4].map(
          () => sql<{ standby: boolean; port: number }[]>`select pg_is_in_recovery() as standby, current_setting('port')::int as port, pg_sleep(0.2)`,
        ),
      );
      expect(answers.map(([a]) => ({ standby: a.standby, port: a.port }))).toEqual(Array(4).fill({ standby: false, port: pair.primaryPort }));
      // The standby itself, asked directly, is one: the URL's first host was skipped, not absent.
      const direct = postgres(`postgres://postgres@127.0.0.1:${pair.standbyPort}/postgres`, { max: 1, onnotice: () => {} });
      try {
        const [{ standby }] = await direct<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`;
        expect(standby).toBe(true);
      } finally {
        await direct.end();
      }
    } finally {
      await sql.end();
      await pair.stop();
    }
  }, 120_000);
});
