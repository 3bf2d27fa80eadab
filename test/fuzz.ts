/**
 * Shared pieces of the property-based fuzz suites (server/http/rest-fuzz.test.ts,
 * cni/plugin-fuzz.test.ts): reproducible fast-check parameters, hostile values, and "near-valid"
 * mutations of a valid request (one field changed).
 *
 * Seeds: every property has a fixed default seed (derived from its name), so CI runs the same
 * inputs every time and a failure reproduces exactly. `FUZZ_SEED=<n>` overrides it (`FUZZ_SEED=random`
 * draws a fresh one, printed on failure), `FUZZ_PATH=<path>` replays the shrunk counterexample
 * fast-check printed, `FUZZ_RUNS=<n>` scales the number of runs.
 */
import fc from 'fast-check';

const BASE_SEED = 0x6d657269; // "meri"

function hashName(name: string): number {
  let h = BASE_SEED;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h | 0;
}

const randomSeed = Date.now() ^ (Math.random() * 0x7fffffff);

/** The seed a property runs with: FUZZ_SEED, else a fixed one per property name. */
export function fuzzSeed(name: string): number {
  const env = process.env.FUZZ_SEED;
  if (env === 'random') return randomSeed | 0;
  if (env !== undefined && env !== '') return Number(env) | 0;
  return hashName(name);
}

/**
 * Runs an async property with a reproducible seed and a bounded number of runs. On failure the
 * error names the seed and path and the command line that replays it.
 */
export async function checkProperty<Ts extends [unknown, ...unknown[]]>(
  name: string,
  property: fc.IAsyncPropertyWithHooks<Ts>,
  options: { numRuns: number; file: string },
): Promise<void> {
  const seed = fuzzSeed(name);
  const numRuns = process.env.FUZZ_RUNS ? Math.max(1, Number(process.env.FUZZ_RUNS)) : options.numRuns;
  const path = process.env.FUZZ_PATH || undefined;
  const details = await fc.check(property, { seed, numRuns, path });
  if (details.failed) {
    const replay = `FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath ?? ''} npx vitest run ${options.file} -t '${name}'`;
    const reason = details.errorInstance instanceof Error ? (details.errorInstance.stack ?? details.errorInstance.message) : String(details.errorInstance);
    throw new Error(
      `property "${name}" failed (seed ${details.seed}, path ${details.counterexamplePath}) after ${details.numRuns} run(s), shrunk ${details.numShrinks} time(s)\n` +
        `counterexample: ${fc.stringify(details.counterexample)}\n` +
        `reproduce: ${replay}\n${reason}`,
    );
  }
}

/** Strings that have broken parsers, databases and loggers before. */
export const nastyStrings = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '%00',
  '\u202eevil',
  '\ud800',
  'a\udfffb',
  '\uffff',
  '\ufeffbom',
  'e\u0301\u0301\u0301',
  '👩‍👩‍👧‍👦',
  'ＡＢＣ',
  'İ',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '1e309',
  'true',
  '[]',
  '{}',
  '"',
  "'; drop table networks; --",
  '../../etc/passwd',
  '${process.exit()}',
  '{{ 1 / 0 }}',
  '<script>alert(1)</script>',
  '\\',
  '%',
  '_',
  '%%',
  'UPPER-case',
  '-leading',
  'trailing-',
  'a'.repeat(63),
  'a'.repeat(64),
  'a'.repeat(254),
  'x'.repeat(5000),
];

/** Malformed, odd and edge-case CIDR and address texts of both families. */
export const oddCidrs = [
  '192.0.2.0/24',
  '192.0.2.1/24',
  '192.0.2.0/33',
  '192.0.2.0/-1',
  '192.0.2.0/',
  '192.0.2.0',
  '192.0.2.0/024',
  '192.0.2.0/24/24',
  '192.0.2/24',
  '192.0.2.256/32',
  '192.0.2.00/32',
  '0192.0.2.0/24',
  '0x7f.0.0.1/32',
  '1.2.3.4.5/32',
  '0.0.0.0/0',
  '255.255.255.255/32',
  ' 192.0.2.0/24 ',
  '192.0.2.0 /24',
  '192.0.2.0/ 24',
  '192.0.2.0/2a',
  '192.0.2.0/1e1',
  '198.51.100.0/24',
  '203.0.113.7/32',
  '2001:db8::/32',
  '2001:db8::1/32',
  '2001:db8::/129',
  '2001:db8::/-0',
  '2001:db8:::/48',
  '2001:db8::/48::',
  '2001:DB8::/48',
  '2001:0db8:0000::/48',
  '[2001:db8::]/48',
  '2001:db8::%eth0/64',
  'fe80::1%eth0/128',
  '::/0',
  '::/128',
  '::1/128',
  '::ffff:192.0.2.1/128',
  '::ffff:192.0.2.0/120',
  '::192.0.2.1/128',
  '2001:db8::192.0.2.1/128',
  '1:2:3:4:5:6:7:8:9/128',
  '2001:db8:g::/48',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128',
  '2001:db8::/0128',
  'localhost/32',
  '/24',
  '/',
  '1/1',
];

/** Numbers (and number-like values) that are out of range, fractional, unsafe or the wrong type. */
export const oddNumbers: unknown[] = [
  -1,
  -0,
  0,
  1,
  0.5,
  1.5,
  7,
  16,
  20,
  24,
  28,
  31,
  32,
  33,
  64,
  112,
  120,
  126,
  127,
  128,
  129,
  255,
  256,
  65536,
  2 ** 31,
  -(2 ** 31),
  2 ** 32,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  1e21,
  1e-7,
  '28',
  '0x1c',
  '',
  null,
  true,
];

/**
 * Values JSON cannot express from JavaScript but a client can send: they are spliced into the
 * body text in place of these sentinel strings by `serializeBody`.
 */
export const rawJsonSentinels: Record<string, string> = {
  '\u0001raw:1e999': '1e999',
  '\u0001raw:-1e999': '-1e999',
  '\u0001raw:big': '123456789012345678901234567890',
  '\u0001raw:-0.0': '-0.0',
  '\u0001raw:1E2': '1E2',
};

/** Nested arrays/objects `depth` levels deep. */
export function deepValue(depth: number, kind: 'array' | 'object'): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

/** Any hostile value, with field-aware weighting: CIDR-ish keys get odd CIDRs, numeric keys odd numbers. */
export function hostileValue(key: string): fc.Arbitrary<unknown> {
  const generic = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...nastyStrings) },
    { weight: 2, arbitrary: fc.constantFrom(...oddNumbers) },
    { weight: 1, arbitrary: fc.constantFrom(...Object.keys(rawJsonSentinels)) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.integer() },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }, ['x'], JSON.parse('{"__proto__":{"polluted":1}}'), {
        constructor: { prototype: {} },
      }),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: 30, max: 3000 }), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([d, k]) => deepValue(d, k)),
    },
  );
  if (/cidr|address|dst|gw/i.test(key)) return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...oddCidrs) }, { weight: 1, arbitrary: generic });
  if (/prefix|length|amount|limit|seconds|reserve|classes|timeout|mtu|priority|table|scope/i.test(key)) {
    return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...oddNumbers) }, { weight: 1, arbitrary: generic });
  }
  return generic;
}

type Path = (string | number)[];

/** Every path in a JSON value (objects' keys and arrays' indexes), the root excluded. */
export function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => [[...prefix, i], ...pathsOf(v, [...prefix, i])]);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k])]);
  return [];
}

/**
 * Paths of the objects inside a value, the root included (places to add an unknown field), not
 * descending into the keys named in `open` (maps whose keys are data, such as labels).
 */
export function objectPaths(value: unknown, open: ReadonlySet<string> = new Set(), prefix: Path = []): Path[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => objectPaths(v, open, [...prefix, i]));
  if (value && typeof value === 'object')
    return [prefix, ...Object.entries(value).flatMap(([k, v]) => (open.has(k) ? [] : objectPaths(v, open, [...prefix, k])))];
  return [];
}

export type Mutation = { op: 'set'; path: Path; value: unknown } | { op: 'delete'; path: Path } | { op: 'extra'; path: Path; key: string; value: unknown };

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Applies one mutation to a copy of `base`. */
export function applyMutation(base: unknown, m: Mutation): unknown {
  const copy = clone(base);
  const parentPath = m.op === 'extra' ? m.path : m.path.slice(0, -1);
  let parent = copy as Record<string | number, unknown>;
  for (const k of parentPath) parent = parent[k] as Record<string | number, unknown>;
  // defineProperty, so that a key like "__proto__" becomes an own field (as JSON.parse makes it).
  const put = (key: string | number, value: unknown) => Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
  if (m.op === 'extra') put(m.key, m.value);
  else if (m.op === 'set') put(m.path[m.path.length - 1], m.value);
  else if (Array.isArray(parent)) parent.splice(Number(m.path[m.path.length - 1]), 1);
  else delete parent[m.path[m.path.length - 1]];
  return copy;
}

/** One mutation of a valid value: a field set to a hostile value, removed, or an unknown field added. */
export function mutationOf(base: unknown): fc.Arbitrary<Mutation> {
  const paths = pathsOf(base);
  const objects = objectPaths(base);
  const arbs: fc.WeightedArbitrary<Mutation>[] = [];
  if (paths.length) {
    arbs.push({
      weight: 6,
      arbitrary: fc.constantFrom(...paths).chain((path) => hostileValue(String(path[path.length - 1])).map((value): Mutation => ({ op: 'set', path, value }))),
    });
    arbs.push({ weight: 1, arbitrary: fc.constantFrom(...paths).map((path): Mutation => ({ op: 'delete', path })) });
  }
  if (objects.length) {
    arbs.push({
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...objects),
          fc.oneof(fc.constantFrom('__proto__', 'constructor', 'projectId', 'project', 'id', 'status', 'x'), fc.string({ maxLength: 10 })),
          hostileValue('extra'),
        )
        .map(([path, key, value]): Mutation => ({ op: 'extra', path, key, value })),
    });
  }
  return fc.oneof(...arbs);
}

/** JSON text of a value, with the raw sentinels spliced in (see `rawJsonSentinels`). */
export function serializeBody(value: unknown): string {
  let text = JSON.stringify(value) ?? 'null';
  for (const [sentinel, raw] of Object.entries(rawJsonSentinels)) text = text.split(JSON.stringify(sentinel)).join(raw);
  return text;
}
