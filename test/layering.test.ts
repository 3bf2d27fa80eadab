/**
 * The layering, read from the code's own imports (TypeScript's parser, so `import type`, `export …
 * from`, `import('…')` and `typeof import('…')` are all seen):
 *
 *   app ──▶ components ──▶ lib                       bin (entry points) ──▶ anything below
 *    │          └─(types only)─▶ server              simulator ──▶ lib (its own program)
 *    ▼                                               cni (the CNI plugin) ──▶ nothing of ours
 *   server adapters (trpc, http, api, auth, live, worker)
 *    │
 *    ▼
 *   server/workflows (what spans domains) ──▶ server domains ──▶ server platform ──▶ db ──▶ lib
 *
 * Checked: no import cycle between files (type-only imports included) or between folders; db, lib,
 * the simulator and components import only what is below them; domain and platform code imports no
 * next/*, @trpc/*, react or UI, and no adapter or workflow. A domain's `rest.ts` (its REST routes,
 * declared beside it) is REST-adapter code: it may import the HTTP helpers, and its folder's own
 * code never imports it. Tests and test support may import anything, but not into a cycle.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';

const root = path.resolve(__dirname, '..');

/** The product's folders; `test` holds test support (fixtures, the test database), scanned for file cycles only. */
const scanned = ['app', 'components', 'server', 'db', 'lib', 'simulator', 'bin', 'cni', 'test'];

/** What each folder under server/ is: the registry ESLint's boundary rules read too (server/layers.json). */
const serverFolders = z
  .record(z.string(), z.enum(['adapter', 'workflow', 'domain', 'platform', 'tests']))
  .parse(JSON.parse(readFileSync(path.join(root, 'server/layers.json'), 'utf8')).server);

interface Edge {
  from: string;
  to: string;
  /** Erased at run time: `import type`, every name marked `type`, `typeof import(…)`. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const abs = path.join(root, dir);
  if (!existsSync(abs)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(abs, { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...sourceFiles(rel));
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(rel.split(path.sep).join('/'));
    }
  }
  return out;
}

/** A specifier of ours (`@/…` or relative) as a repository path; a package stays as written; null: not a source file (CSS, JSON). */
function resolveSpecifier(from: string, specifier: string): string | null {
  let base: string;
  if (specifier.startsWith('@/')) base = specifier.slice(2);
  else if (specifier.startsWith('.')) base = path.posix.join(path.posix.dirname(from), specifier);
  else return specifier;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) {
    const abs = path.join(root, candidate);
    if (/\.tsx?$/.test(candidate) && existsSync(abs) && statSync(abs).isFile()) return candidate;
  }
  return null;
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const edges: Edge[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const to = resolveSpecifier(file, specifier);
    if (to !== null) edges.push({ from: file, to, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const everyNameTyped = !!clause && !clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier.text, !!clause?.isTypeOnly || everyNameTyped);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier.text, node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) add(argument.text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

const isTest = (file: string) => /\.test\.tsx?$/.test(file) || file.startsWith('test/') || file.includes('/test-support/');
const isOurs = (target: string) => /\.tsx?$/.test(target);

/**
 * The folder a file belongs to for the folder graph: a top-level folder, a folder under server/
 * (server/'s own files — env, errors — are `server`), and a domain's `rest.ts` as a node of its own
 * (REST-adapter code).
 */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'server' || parts.length === 2) return parts[0];
  if (parts.length === 3 && parts[2] === 'rest.ts' && serverFolders[parts[1]] === 'domain') return file;
  return `server/${parts[1]}`;
}

const serverKind = (file: string) => (file.startsWith('server/') && file.split('/').length > 2 ? serverFolders[file.split('/')[1]] : undefined);
const isRestDeclaration = (file: string) => /^server\/[^/]+\/rest\.ts$/.test(file) && serverKind(file) === 'domain';

/** A graph of nodes (files or folders), with one import that makes each arrow, to name it in a failure. */
type Graph = Map<string, Map<string, Edge>>;

function graphOf(edges: Edge[], node: (file: string) => string): Graph {
  const graph: Graph = new Map();
  for (const e of edges) {
    const [a, b] = [node(e.from), node(e.to)];
    if (a === b && e.from !== e.to) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, e);
  }
  return graph;
}

/**
 * The cycles of a graph: for each strongly connected component with more than one member (or a
 * member importing itself), its shortest cycle through its first member, each arrow with an import
 * that makes it.
 */
function cycles(graph: Graph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return components.map((component) => {
    const members = new Set(component);
    const start = component[0];
    const previous = new Map<string, string>();
    const queue = [start];
    let last: string | undefined;
    while (queue.length > 0 && last === undefined) {
      const v = queue.shift()!;
      for (const w of graph.get(v)?.keys() ?? []) {
        if (w === start) {
          last = v;
          break;
        }
        if (members.has(w) && !previous.has(w)) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    const path = [start];
    for (let v = last!; v !== start; v = previous.get(v)!) path.splice(1, 0, v);
    return path.map((v, i) => {
      const next = path[(i + 1) % path.length];
      const e = graph.get(v)!.get(next)!;
      return v === e.from && next === e.to ? `${v} -> ${next}` : `${v} -> ${next} (${e.from} -> ${e.to})`;
    });
  });
}

const files = scanned.flatMap(sourceFiles);
const edges = files.flatMap(importsOf);
const ours = edges.filter((e) => isOurs(e.to));
/** Imports made by product code (not tests, not test support). */
const product = edges.filter((e) => !isTest(e.from));
const show = (e: Edge) => `${e.from} -> ${e.to}${e.typeOnly ? ' (type)' : ''}`;

describe('the import graph', () => {
  test('is read from the code: files, runtime and type-only imports are all seen', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(ours).toContainEqual({ from: 'components/trpc/client.tsx', to: 'server/trpc/root.ts', typeOnly: true });
    expect(ours).toContainEqual({ from: 'server/trpc/root.ts', to: 'server/trpc/init.ts', typeOnly: false });
    expect(edges.some((e) => e.from.startsWith('app/') && /^next(\/|$)/.test(e.to))).toBe(true);
  });

  test('has no cycle between files', () => {
    expect(cycles(graphOf(ours, (file) => file))).toEqual([]);
  });

  test('has no cycle between folders', () => {
    expect(
      cycles(
        graphOf(
          ours.filter((e) => !isTest(e.from)),
          folderOf,
        ),
      ),
    ).toEqual([]);
  });

  test('places every folder under server/', () => {
    const folders = new Set(files.filter((f) => f.startsWith('server/') && f.split('/').length > 2).map((f) => f.split('/')[1]));
    expect([...folders].filter((f) => !(f in serverFolders))).toEqual([]);
  });

  test("ESLint's boundary rules read the same registry: every domain and platform folder, every adapter", async () => {
    const eslint = (await import(pathToFileURL(path.join(root, 'eslint.config.mjs')).href)) as { domainFolders: string[]; adapterFolders: string[] };
    const ofKind = (...kinds: string[]) =>
      Object.entries(serverFolders)
        .filter(([, kind]) => kinds.includes(kind))
        .map(([folder]) => folder)
        .sort();
    expect(eslint.domainFolders).toEqual(ofKind('domain', 'platform'));
    expect(eslint.adapterFolders).toEqual(ofKind('adapter'));
  });
});

describe('the layers', () => {
  const violations = (keep: (e: Edge) => boolean) => product.filter(keep).map(show);

  test('db imports nothing above it', () => {
    expect(violations((e) => e.from.startsWith('db/') && isOurs(e.to) && !e.to.startsWith('db/') && !e.to.startsWith('lib/'))).toEqual([]);
  });

  test('lib imports only lib', () => {
    expect(violations((e) => e.from.startsWith('lib/') && isOurs(e.to) && !e.to.startsWith('lib/'))).toEqual([]);
  });

  test('the simulator imports only its own code and lib', () => {
    expect(violations((e) => e.from.startsWith('simulator/') && isOurs(e.to) && !e.to.startsWith('simulator/') && !e.to.startsWith('lib/'))).toEqual([]);
  });

  test('the CNI plugin imports nothing of the server', () => {
    expect(violations((e) => e.from.startsWith('cni/') && isOurs(e.to) && !e.to.startsWith('cni/') && !e.to.startsWith('lib/'))).toEqual([]);
  });

  test('components import server code for its types only, and no page, database, simulator or entry point', () => {
    expect(
      violations((e) => e.from.startsWith('components/') && ((e.to.startsWith('server/') && !e.typeOnly) || /^(app|db|simulator|bin)\//.test(e.to))),
    ).toEqual([]);
  });

  test('domain, workflow and platform code imports no framework, UI or app', () => {
    const framework = /^(next|next-auth|react|react-dom|@trpc\/[^/]+|@tanstack\/react-query)(\/|$)/;
    const pure = (file: string) =>
      (file.startsWith('server/') && file.split('/').length === 2) || ['domain', 'workflow', 'platform'].includes(serverKind(file) ?? '');
    expect(violations((e) => pure(e.from) && (framework.test(e.to) || /^(app|components)\//.test(e.to)))).toEqual([]);
  });

  test('domain and platform code imports no adapter (tasks, routers, REST, auth, live streams) and no workflow', () => {
    const below = (file: string) =>
      ((file.startsWith('server/') && file.split('/').length === 2) || ['domain', 'platform'].includes(serverKind(file) ?? '')) && !isRestDeclaration(file);
    const above = (file: string) => ['adapter', 'workflow'].includes(serverKind(file) ?? '') || isRestDeclaration(file) || /^(app|bin)\//.test(file);
    expect(violations((e) => below(e.from) && above(e.to))).toEqual([]);
  });
});
