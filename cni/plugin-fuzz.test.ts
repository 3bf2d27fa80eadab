/**
 * Property-based fuzzing of the meridian-ipam plugin's input (issue 8, "Bad input"): CNI_COMMAND,
 * CNI_CONTAINERID, CNI_IFNAME, CNI_NETNS, CNI_ARGS, CNI_PATH, MERIDIAN_NODE_NAME and the network
 * configuration on stdin (arbitrary bytes, JSON with missing or wrong-typed fields, unsupported
 * versions, huge input, garbage prevResult), against the REAL lease API on the test database.
 *
 * Most runs call the plugin's `run()` in-process (the same code the executable runs, minus the
 * process); a few run the built executable, to cover what only a process shows (arbitrary bytes on
 * stdin, the exit status, stdout holding nothing but the JSON, no stack trace on stderr).
 *
 * Properties: never an internal error (999) or a stack trace; exit status 0 or 1; stdout empty or
 * one JSON document — on failure exactly `{cniVersion, code, msg[, details]}` with a spec code
 * (or the plugin's documented 100+ codes); input that is certainly bad fails with its spec code
 * (4 environment, 6 undecodable, 1 incompatible version, 7 invalid config, 11 server unreachable);
 * and a failed invocation leaves the server's leases as they were.
 *
 * Seeds: see test/fuzz.ts (`FUZZ_SEED`, `FUZZ_PATH`, `FUZZ_RUNS`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { applyMutation, checkProperty, mutationOf, nastyStrings } from '@/test/fuzz';
import { freePort } from '@/test/global-setup';
import { run } from './main';
import { pluginExecutable } from './test-support/plugin-executable';
import { runPlugin } from './test-support/run-plugin';
import { serveLeaseApi } from './test-support/serve-lease-api';
import { SUPPORTED_VERSIONS } from './version';

const FILE = 'cni/plugin-fuzz.test.ts';
const actor = systemActor('test');
const COMMANDS = ['ADD', 'DEL', 'CHECK', 'GC', 'STATUS', 'VERSION'];
/** The spec's codes this plugin uses, and its own documented 100–105; 999 (a bug) is not allowed. */
const KNOWN_CODES = new Set([1, 4, 5, 6, 7, 11, 50, 100, 101, 102, 103, 104, 105]);
const STACK = /\n\s+at .+:\d+:\d+|node:internal|Uncaught|\bTypeError\b|\bRangeError\b|\bReferenceError\b/;

let api: Awaited<ReturnType<typeof serveLeaseApi>>;
let dir = '';
let plugin = '';
let tokenFile = '';
let projectId = '';
let projectSlug = '';
/** A loopback port nothing listens on: "server unreachable" without leaving the host. */
let closedUrl = '';

beforeAll(async () => {
  const { db } = testDb();
  const { project } = await makeProject(db);
  projectId = project.id;
  projectSlug = project.slug;
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
  const cluster = await createCluster(db, project.id, { name: 'k1', network: 'vpc', nodeBlockPrefixV4: 28, issueToken: true }, actor);
  api = await serveLeaseApi();
  closedUrl = `http://127.0.0.1:${await freePort()}`;
  dir = await mkdtemp(path.join(os.tmpdir(), 'meridian-ipam-fuzz-'));
  tokenFile = path.join(dir, 'token');
  await writeFile(tokenFile, `${cluster.token!.secret}\n`, { mode: 0o600 });
  plugin = await pluginExecutable(path.join(dir, 'bin'));
}, 120_000);

afterAll(async () => {
  await api?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function leaseCount(): Promise<number> {
  const [{ n }] = (await testDb().db.execute(sql`select count(*)::int as n from pod_leases where project_id = ${projectId}`)) as unknown as { n: number }[];
  return n;
}

// ---- Inputs ---------------------------------------------------------------------------------

function conf(version = '1.1.0', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: version,
    name: 'podnet',
    type: 'bridge',
    ipam: { type: 'meridian-ipam', serverUrl: api.url, tokenFile, project: projectSlug, cluster: 'k1', network: 'vpc', timeoutMs: 5000 },
    ...extra,
  };
}

/** A config every verb accepts: CHECK's prevResult and GC's attachment list included. */
const fullConf = (version = '1.1.0') =>
  conf(version, {
    prevResult: { cniVersion: version, ips: [{ address: '198.51.100.2/28', gateway: '198.51.100.1' }] },
    'cni.dev/valid-attachments': [{ containerID: 'c1', ifname: 'eth0' }],
  });

let seq = 0;
const containerId = () => `fz${(seq++).toString(36)}c0ffee`;

function env(command: string, overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    CNI_COMMAND: command,
    CNI_CONTAINERID: containerId(),
    CNI_NETNS: '/var/run/netns/fuzz',
    CNI_IFNAME: 'eth0',
    CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=web-1',
    CNI_PATH: '/opt/cni/bin',
    MERIDIAN_NODE_NAME: 'node-1',
    MERIDIAN_CNI_QUIET: '1', // the in-process runs would log to this process's fd 2
    ...overrides,
  };
}

interface Case {
  category: string;
  env: Record<string, string | undefined>;
  stdin: string;
  /** The code certainly-bad input must fail with; undefined where any protocol answer is fine. */
  expectCode?: number;
}

const attachVerbs = fc.constantFrom('ADD', 'DEL', 'CHECK');
const stdinVerbs = fc.constantFrom('ADD', 'DEL', 'CHECK', 'GC', 'STATUS');
const text = (v: unknown) => JSON.stringify(v);

const badCommand: fc.Arbitrary<Case> = fc
  .oneof(fc.constantFrom('', 'add', 'Add', 'ADD ', ' ADD', 'ADD\n', 'DELETE', 'VERSION\u0000', 'STATUS;', 'ＡＤＤ'), fc.string({ maxLength: 12 }))
  .filter((c) => !COMMANDS.includes(c))
  .map((c) => ({ category: 'bad CNI_COMMAND', env: env(c), stdin: text(fullConf()), expectCode: 4 }));

const badEnvValues: Record<string, string[]> = {
  CNI_CONTAINERID: ['', '-abc', '_abc', '.', 'a b', 'a/b', 'a:b', 'é', 'c\u0000', 'x'.repeat(257), '\n'],
  CNI_IFNAME: ['', '.', '..', 'a'.repeat(16), 'eth 0', 'eth/0', 'eth:0', 'eth0\t', 'éééééééé', '\u00a0'],
  CNI_NETNS: [''],
  CNI_ARGS: ['novalue', '=x', 'a=b;;=c', ';=;', 'K8S_POD_NAME'],
  MERIDIAN_NODE_NAME: ['-node', 'node 1', 'node/1', 'ñode', '_x'],
};

const badEnv: fc.Arbitrary<Case> = fc
  .tuple(attachVerbs, fc.constantFrom(...Object.keys(badEnvValues)))
  .filter(([verb, variable]) => !(verb === 'DEL' && variable === 'CNI_NETNS')) // DEL does not need a netns
  .chain(([verb, variable]) =>
    fc.constantFrom(...badEnvValues[variable]).map((value): Case => ({
      category: `bad ${variable}`,
      env: env(verb, { [variable]: value }),
      stdin: text(fullConf()),
      // The node name is only read by ADD; for DEL/CHECK a bad one is simply unused.
      expectCode: variable === 'MERIDIAN_NODE_NAME' && verb !== 'ADD' ? undefined : 4,
    })),
  );

const isJsonObject = (s: string) => {
  try {
    const v = JSON.parse(s) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

const undecodable: fc.Arbitrary<Case> = fc
  .tuple(
    stdinVerbs,
    fc.oneof(
      fc.constantFrom('', ' ', 'null', '[]', '[{}]', '"{}"', '1', 'true', '{', '{"cniVersion":"1.1.0"', '\ufeff{}', "{'a':1}", '{"a":1,}', '\u0000'),
      fc.string({ maxLength: 60 }),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('utf8')),
    ),
  )
  .filter(([, s]) => !isJsonObject(s))
  .map(([verb, stdin]) => ({ category: 'stdin not a JSON object', env: env(verb), stdin, expectCode: 6 }));

const badVersion: fc.Arbitrary<Case> = fc
  .tuple(
    stdinVerbs,
    fc.oneof(
      fc.constantFrom('0.1.0', '0.2.0', '1.2.0', '2.0.0', '1.0', 'v1.0.0', '1.0.0 ', '1.0.0-rc1', '01.0.0', '1.1.0\u0000'),
      fc.string({ minLength: 1, maxLength: 10 }),
    ),
  )
  .filter(([, v]) => v.trim() !== '' && !(SUPPORTED_VERSIONS as readonly string[]).includes(v))
  .map(([verb, v]) => ({ category: 'unsupported cniVersion', env: env(verb), stdin: text({ ...fullConf(), cniVersion: v }), expectCode: 1 }));

/** Verbs the config's version does not have: CHECK before 0.4.0, GC and STATUS before 1.1.0. */
const verbTooNew: fc.Arbitrary<Case> = fc
  .oneof(
    fc.tuple(fc.constant('CHECK'), fc.constantFrom('0.3.0', '0.3.1')),
    fc.tuple(fc.constantFrom('GC', 'STATUS'), fc.constantFrom('0.3.0', '0.3.1', '0.4.0', '1.0.0')),
  )
  .map(([verb, v]) => ({ category: 'verb newer than the config version', env: env(verb), stdin: text(fullConf(v)), expectCode: 1 }));

/** One field of the config made certainly invalid: each of these is a code 7 naming the field. */
const invalidFields: [string[], unknown[]][] = [
  [['cniVersion'], [undefined, null, 1, 1.1, true, [], {}, '', ' ']],
  [['name'], [undefined, null, 5, '', ' ', '-net', 'a b', 'ñ', 'net/1', '.x', ['podnet']]],
  [['type'], [undefined, null, 5, '', '  ', {}]],
  [['ipam'], [undefined, null, 'meridian-ipam', 5, [], true]],
  [
    ['ipam', 'type'],
    [undefined, null, 1, '', ' '],
  ],
  [
    ['ipam', 'serverUrl'],
    [
      undefined,
      null,
      1,
      '',
      'nope',
      '127.0.0.1:80',
      'ftp://127.0.0.1',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'http://user:pw@127.0.0.1',
      'http://127.0.0.1/?q=1',
      'http://127.0.0.1/#f',
      'http://[::1',
      'http://127.0.0.1:99999',
      'http://',
    ],
  ],
  [
    ['ipam', 'tokenFile'],
    [undefined, null, 1, '', ' ', ['x']],
  ],
  [
    ['ipam', 'project'],
    [undefined, null, 1, '', '-p', 'a b', 'ü', 'p/q'],
  ],
  [
    ['ipam', 'cluster'],
    [undefined, null, 1, '', '-k', 'k 1', 'k/1', '..'],
  ],
  [
    ['ipam', 'network'],
    [1, true, [], {}],
  ],
  [
    ['ipam', 'timeoutMs'],
    [0, -1, 1.5, 300_001, 1e21, '100', true, [], {}],
  ],
  [
    ['ipam', 'node'],
    [1, '-n', 'n 1', 'n/1'],
  ],
  [
    ['ipam', 'caFile'],
    [1, [], {}],
  ],
  [
    ['ipam', 'routes'],
    [
      '0.0.0.0/0',
      1,
      {},
      [1],
      [null],
      [{}],
      [{ dst: 1 }],
      [{ dst: 'x' }],
      [{ dst: '10.0.0.0/33' }],
      [{ dst: '10.0.0.0' }],
      [{ dst: '::/129' }],
      [{ dst: '0.0.0.0/0', gw: 'x' }],
      [{ dst: '0.0.0.0/0', gw: 5 }],
      [{ dst: '0.0.0.0/0', mtu: -1 }],
      [{ dst: '0.0.0.0/0', priority: 1.5 }],
      [{ dst: '0.0.0.0/0', table: '1' }],
    ],
  ],
  [
    ['ipam', 'dns'],
    ['x', 1, [], { nameservers: 'x' }, { nameservers: ['x'] }, { nameservers: [1] }, { search: 'a' }, { search: [1] }, { domain: 5 }, { options: [null] }],
  ],
  [['prevResult'], ['x', 5, [], true]],
  [['cni.dev/valid-attachments'], ['x', 5, {}, [1], [null], [{}], [{ containerID: 5, ifname: 'eth0' }], [{ containerID: 'c', ifname: [] }]]],
];

const invalidConfig: fc.Arbitrary<Case> = fc.tuple(stdinVerbs, fc.constantFrom(...invalidFields)).chain(([verb, [field, values]]) =>
  fc.constantFrom(...values).map((value): Case => {
    const c = fullConf();
    let parent = c as Record<string, unknown>;
    for (const k of field.slice(0, -1)) parent = parent[k] as Record<string, unknown>;
    if (value === undefined) delete parent[field[field.length - 1]];
    else parent[field[field.length - 1]] = value;
    return { category: `invalid ${field.join('.')}`, env: env(verb), stdin: text(c), expectCode: 7 };
  }),
);

/** CHECK's prevResult must be an object with `ips` (a list of at most 8 `{address}`): 7 otherwise. */
const badPrevResult: fc.Arbitrary<Case> = fc
  .constantFrom<unknown>(
    undefined,
    null,
    {},
    { ips: 'x' },
    { ips: {} },
    { ips: [1] },
    { ips: [null] },
    { ips: [{}] },
    { ips: [{ address: 5 }] },
    { ips: [{ address: 'x'.repeat(65) }] },
    { ips: Array.from({ length: 9 }, () => ({ address: '198.51.100.2/28' })) },
  )
  .map((prevResult) => {
    const c = fullConf();
    if (prevResult === undefined) delete c.prevResult;
    else c.prevResult = prevResult;
    return { category: 'bad prevResult', env: env('CHECK'), stdin: text(c), expectCode: 7 };
  });

/** Meridian unreachable (a closed loopback port): try again later (11); STATUS: not available (50). */
const unreachable: fc.Arbitrary<Case> = stdinVerbs.map((verb) => {
  const c = fullConf();
  (c.ipam as Record<string, unknown>).serverUrl = closedUrl;
  return { category: 'server unreachable', env: env(verb), stdin: text(c), expectCode: verb === 'STATUS' ? 50 : 11 };
});

/** Anything goes: generic mutations of the config and arbitrary environment values; protocol properties only. */
const anyEnvValue = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(...nastyStrings),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);
const anything: fc.Arbitrary<Case> = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('ADD', 'CHECK') },
      { weight: 4, arbitrary: fc.constantFrom(...COMMANDS) },
      { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
    ),
    fc.constantFrom(...SUPPORTED_VERSIONS),
    fc.oneof(
      { weight: 3, arbitrary: fc.constant({}) },
      {
        weight: 2,
        arbitrary: fc.dictionary(fc.constantFrom('CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_ARGS', 'CNI_PATH', 'MERIDIAN_NODE_NAME'), anyEnvValue, {
          maxKeys: 2,
        }),
      },
    ),
  )
  .chain(([command, version, overrides]) => {
    const base = fullConf(version);
    // The server URL stays this test's own: generated configs never point anywhere else.
    const mutable = { ...base, ipam: { ...(base.ipam as object), serverUrl: undefined } };
    return fc
      .oneof(
        { weight: 4, arbitrary: mutationOf(mutable).map((m) => restoreServer(applyMutation(mutable, m))) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
        { weight: 1, arbitrary: fc.constant(base) },
      )
      .map((c): Case => ({ category: 'anything', env: env(command, overrides as Record<string, string | undefined>), stdin: text(c) ?? '' }));
  });

function restoreServer(c: unknown): unknown {
  const ipam = (c as { ipam?: unknown } | null)?.ipam;
  if (ipam && typeof ipam === 'object' && !Array.isArray(ipam) && 'serverUrl' in ipam) (ipam as Record<string, unknown>).serverUrl = api.url;
  return c;
}

/** Huge input: megabytes of config. */
const huge: fc.Arbitrary<Case> = fc.tuple(stdinVerbs, fc.constantFrom('padding', 'name', 'deep', 'whitespace', 'routes')).map(([verb, kind]): Case => {
  const c = fullConf();
  let stdin: string;
  let expectCode: number | undefined;
  if (kind === 'padding') stdin = text({ ...c, padding: 'x'.repeat(2 << 20) });
  else if (kind === 'name') {
    stdin = text({ ...c, name: 'n'.repeat(1 << 20) });
    expectCode = 7;
  } else if (kind === 'deep') stdin = `${text(c).slice(0, -1)},"deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
  else if (kind === 'whitespace') stdin = ' '.repeat(2 << 20) + text(c);
  else {
    stdin = text({ ...c, ipam: { ...(c.ipam as object), routes: Array.from({ length: 50_000 }, () => ({ dst: '0.0.0.0/0', gw: 'x' })) } });
    expectCode = 7;
  }
  return { category: `huge ${kind}`, env: env(verb), stdin, expectCode };
});

const cases = fc.oneof(
  { weight: 2, arbitrary: badCommand },
  { weight: 3, arbitrary: badEnv },
  { weight: 2, arbitrary: undecodable },
  { weight: 2, arbitrary: badVersion },
  { weight: 1, arbitrary: verbTooNew },
  { weight: 5, arbitrary: invalidConfig },
  { weight: 2, arbitrary: badPrevResult },
  { weight: 1, arbitrary: unreachable },
  { weight: 10, arbitrary: anything },
);

// ---- Properties -----------------------------------------------------------------------------

function peekVersion(stdin: string): string {
  try {
    const v = (JSON.parse(stdin) as { cniVersion?: unknown }).cniVersion;
    return typeof v === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(v) ? v : '1.1.0';
  } catch {
    return '1.1.0';
  }
}

/** The protocol properties every invocation must have. */
function checkOutcome(c: Case, status: number | null, stdout: string): Record<string, unknown> | undefined {
  const where = `${c.category}: CNI_COMMAND=${JSON.stringify(c.env.CNI_COMMAND)} → status ${status}, stdout ${stdout.slice(0, 400)}`;
  expect([0, 1], where).toContain(status);
  let json: Record<string, unknown> | undefined;
  if (stdout !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(stdout);
    } catch {
      throw new Error(`stdout is not one JSON document: ${where}`);
    }
    expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), where).toBe(true);
    json = parsed as Record<string, unknown>;
  }
  const command = c.env.CNI_COMMAND ?? '';
  if (status === 0) {
    expect(COMMANDS, `success only for a CNI verb: ${where}`).toContain(command);
    if (command === 'ADD') {
      expect(json, where).toMatchObject({ cniVersion: peekVersion(c.stdin) });
      expect((json!.ips as unknown[]).length, where).toBeGreaterThan(0);
    } else if (command === 'VERSION') expect(json?.supportedVersions, where).toEqual([...SUPPORTED_VERSIONS]);
    else expect(stdout, `nothing on stdout: ${where}`).toBe('');
    expect(c.expectCode, `certainly-bad input succeeded: ${where}`).toBeUndefined();
  } else {
    expect(json, `an error JSON on stdout: ${where}`).toBeDefined();
    expect(
      Object.keys(json!).every((k) => ['cniVersion', 'code', 'msg', 'details'].includes(k)),
      where,
    ).toBe(true);
    // Labelled with the config's version once the config is read (a verb was named), else the plugin's.
    expect(json!.cniVersion, where).toBe(COMMANDS.includes(command) ? peekVersion(c.stdin) : '1.1.0');
    expect(KNOWN_CODES.has(json!.code as number), `a known code, never 999: ${where}`).toBe(true);
    expect(typeof json!.msg === 'string' && (json!.msg as string).length > 0, where).toBe(true);
    if (json!.details !== undefined) expect(typeof json!.details, where).toBe('string');
    expect(STACK.test(`${String(json!.msg)}\n${String(json!.details ?? '')}`), `no stack trace: ${where}`).toBe(false);
    if (c.expectCode !== undefined) expect(json!.code, where).toBe(c.expectCode);
  }
  return json;
}

describe('meridian-ipam fuzz', () => {
  it('in-process: protocol answers only, spec codes for bad input, no lease written by a failure', async () => {
    await checkProperty(
      'CNI fuzz in-process',
      fc.asyncProperty(cases, async (c) => {
        const before = await leaseCount();
        const { stdout, status } = await run(c.env as NodeJS.ProcessEnv, async () => c.stdin);
        const json = checkOutcome(c, status, stdout);
        const after = await leaseCount();
        const command = c.env.CNI_COMMAND;
        // A failed call writes no lease (a timeout, code 11, may fail after the server committed: the
        // runtime retries the idempotent ADD or DELs it); only a successful ADD adds any.
        if (status !== 0 && json?.code !== 11) expect(after, `no lease written: ${c.category}`).toBe(before);
        if (command !== 'ADD' || status !== 0) expect(after, `only ADD adds leases: ${c.category}`).toBeLessThanOrEqual(before);
      }),
      { numRuns: 300, file: FILE },
    );
  });

  it('huge input: bounded, answered in the protocol', async () => {
    await checkProperty(
      'CNI fuzz huge input',
      fc.asyncProperty(huge, async (c) => {
        const before = await leaseCount();
        const { stdout, status } = await run(c.env as NodeJS.ProcessEnv, async () => c.stdin);
        const json = checkOutcome(c, status, stdout);
        if (status !== 0 && json?.code !== 11) expect(await leaseCount()).toBe(before);
      }),
      { numRuns: 15, file: FILE },
    );
  });

  it('as a process: arbitrary bytes and environment never crash it', async () => {
    const envValue = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 40 }).filter((s) => !s.includes('\u0000')),
    );
    const processCase = fc.record({
      command: fc.oneof(
        fc.constantFrom(...COMMANDS),
        fc.string({ maxLength: 8 }).filter((s) => !s.includes('\u0000')),
      ),
      overrides: fc.dictionary(fc.constantFrom('CNI_CONTAINERID', 'CNI_NETNS', 'CNI_IFNAME', 'CNI_ARGS', 'CNI_PATH', 'MERIDIAN_NODE_NAME'), envValue, {
        maxKeys: 3,
      }),
      stdin: fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        fc.constant(Buffer.from([0xff, 0xfe, 0x7b, 0x7d])),
        fc.constantFrom('{}', '', '{"cniVersion":"1.1.0"}').map((s) => Buffer.from(s)),
        fc.constant(null).map(() => Buffer.from(text(fullConf()))),
      ),
    });
    await checkProperty(
      'CNI fuzz process',
      fc.asyncProperty(processCase, async ({ command, overrides, stdin }) => {
        const before = await leaseCount();
        const e = env(command, overrides as Record<string, string | undefined>);
        const r = await runPlugin(plugin, { env: e, stdin, killAfterMs: 20_000 });
        expect(r.signal, r.stderr).toBeNull();
        const c: Case = { category: 'process', env: e, stdin: stdin.toString('utf8') };
        const json = checkOutcome(c, r.status, r.stdout);
        expect(STACK.test(r.stderr), `no stack trace on stderr: ${r.stderr}`).toBe(false);
        if (r.status !== 0 && json?.code !== 11) expect(await leaseCount()).toBe(before);
      }),
      { numRuns: 12, file: FILE },
    );
  });
});

/** Inputs worth naming, pinned as examples beside the generated ones (in-process `run`, the real lease API). */
describe('meridian-ipam: pinned examples', () => {
  const invoke = async (e: Record<string, string | undefined>, stdin: string) => {
    const { stdout, status } = await run(e as NodeJS.ProcessEnv, async () => stdin);
    return { status, json: JSON.parse(stdout || 'null') as { cniVersion: string; code: number; msg: string; details?: string } | null };
  };

  it("an environment error is labelled with the config's cniVersion", async () => {
    const r = await invoke(env('ADD', { CNI_CONTAINERID: undefined }), text(conf('0.3.1')));
    expect(r).toMatchObject({ status: 1, json: { cniVersion: '0.3.1', code: 4 } });
    const unknown = await invoke(env('FROB'), text(conf('0.3.1')));
    expect(unknown.json).toMatchObject({ cniVersion: '1.1.0', code: 4 }); // stdin is not read for an unknown verb
  });

  it.each([
    ['a network name', () => ({ stdin: text({ ...conf(), name: 'n'.repeat(100_000) }) }), 7, 'name'],
    ['a network name (254)', () => ({ stdin: text({ ...conf(), name: 'n'.repeat(254) }) }), 7, 'name'],
    ['ipam.node', () => ({ stdin: text({ ...conf(), ipam: { ...(conf().ipam as object), node: 'n'.repeat(100_000) } }) }), 7, 'ipam.node'],
    ['MERIDIAN_NODE_NAME', () => ({ env: { MERIDIAN_NODE_NAME: 'n'.repeat(100_000) } }), 4, 'MERIDIAN_NODE_NAME'],
    ['K8S_POD_NAMESPACE in CNI_ARGS', () => ({ env: { CNI_ARGS: `K8S_POD_NAMESPACE=${'p'.repeat(100_000)}` } }), 4, 'CNI_ARGS'],
    ['K8S_POD_NAME in CNI_ARGS (254)', () => ({ env: { CNI_ARGS: `K8S_POD_NAME=${'p'.repeat(254)}` } }), 4, 'CNI_ARGS'],
  ] as [string, () => { env?: Record<string, string>; stdin?: string }, number, string][])(
    '%s longer than the lease API takes is refused naming it, before any request',
    async (_what, make, code, field) => {
      const before = await leaseCount();
      const input = make();
      const r = await invoke(env('ADD', input.env), input.stdin ?? text(conf()));
      expect(r.status).toBe(1);
      expect(r.json).toMatchObject({ code });
      expect(`${r.json!.msg} ${r.json!.details ?? ''}`).toContain(field);
      expect(await leaseCount()).toBe(before);
    },
  );

  it('a request the server refuses as too large (413) is an invalid config, 7', async () => {
    const attachments = Array.from({ length: 3000 }, (_, i) => ({ containerID: `container-${i.toString().padStart(20, '0')}`, ifname: 'eth0' }));
    const r = await invoke(env('GC'), text(conf('1.1.0', { 'cni.dev/valid-attachments': attachments })));
    expect(r).toMatchObject({ status: 1, json: { cniVersion: '1.1.0', code: 7 } });
    expect(r.json!.msg).toContain('413');
  });
});
