/**
 * The documentation stays navigable: the README stays a short front page, every document of docs/
 * is reachable from it, and every relative link in the README, CONTRIBUTING.md and docs/ names a
 * file of the repository (and, with a `#fragment`, a heading of that file).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

const root = path.resolve(__dirname, '..');

/** The README's longest allowed length: what Meridian is, the two commands, a tour and the map of docs/. */
export const README_MAX_LINES = 200;

/** The Markdown files whose links are checked, relative to the repository root. */
function documents(): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()];
}

/** The text outside fenced code blocks and inline code, where a `[text](target)` is a link. */
export function proseOf(markdown: string): string {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out.push(line.replace(/`[^`]*`/g, ''));
  }
  return out.join('\n');
}

/** The targets of the inline links and images of a Markdown text. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const m of proseOf(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
  return targets;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings (outside code blocks), duplicates numbered as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every relative link of `file` that names no file of the repository, or no heading of it. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const broken: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
    const [pathPart, fragment] = target.split('#', 2);
    const resolved = pathPart ? path.resolve(path.dirname(path.join(root, file)), decodeURIComponent(pathPart)) : path.join(root, file);
    if (!resolved.startsWith(root + path.sep) && resolved !== root) {
      broken.push(`${target} (outside the repository)`);
      continue;
    }
    if (!existsSync(resolved)) {
      broken.push(`${target} (no such file)`);
      continue;
    }
    if (fragment && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(fragment)) {
      broken.push(`${target} (no heading #${fragment})`);
    }
  }
  return broken;
}

describe('the documentation', () => {
  test(`the README has at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(path.join(root, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines, 'README.md: move detail into the docs/ file of its subject').toBeLessThanOrEqual(README_MAX_LINES);
  });

  test('the README starts with the two commands: npm install && npm start, then npm test', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const start = readme.indexOf('npm install && npm start');
    const test = readme.indexOf('\nnpm test\n');
    expect(start, 'the run command').toBeGreaterThan(-1);
    expect(test, 'the test command').toBeGreaterThan(start);
    expect(readme.slice(0, test).split('\n').length, 'both within the first 20 lines').toBeLessThanOrEqual(20);
  });

  test.each(documents())('every relative link of %s names an existing file and heading', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  test('every document of docs/ is linked from the README', () => {
    const linked = new Set(linkTargets(readFileSync(path.join(root, 'README.md'), 'utf8')).map((t) => t.split('#')[0]));
    const unlinked = documents()
      .filter((file) => file.startsWith('docs/'))
      .filter((file) => !linked.has(file));
    expect(unlinked).toEqual([]);
  });
});

describe('the link checker', () => {
  test('finds links outside code, and anchors as GitHub makes them', () => {
    expect(linkTargets('see [a](docs/a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```\n![d](d.png "t")')).toEqual(['docs/a.md#x', 'd.png']);
    expect(anchorOf("Tokens and their creators' rights")).toBe('tokens-and-their-creators-rights');
    expect(anchorOf('Installing the `meridian-ipam` plugin on nodes')).toBe('installing-the-meridian-ipam-plugin-on-nodes');
    expect(anchorOf('Pod addresses (CNI)')).toBe('pod-addresses-cni');
    expect([...anchorsOf('# A\n## B\n```\n# C\n```\n## B')]).toEqual(['a', 'b', 'b-1']);
  });
});
