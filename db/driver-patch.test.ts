/**
 * The postgres driver's patch (patches/postgres+<version>.patch, applied by patch-package from npm's
 * postinstall; see CONTRIBUTING.md, "A patch to a dependency"): made for the installed version, and
 * every line it adds is in the installed driver, so an install that skipped or lost it fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

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
});
