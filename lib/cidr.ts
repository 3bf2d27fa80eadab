/**
 * Exact CIDR arithmetic for IPv4 and IPv6: parsing, PostgreSQL-compatible formatting, sizes,
 * containment and range decomposition. Addresses are unsigned `bigint`s throughout (an IPv6
 * address does not fit in a double), so every result is exact for both families.
 *
 * Pure module, shared by the server (ipam, cni) and the browser bundle (the address map in
 * components/ipam): no I/O, no database, no HTTP. Contract violations by callers (an address out of
 * range for its family, an unaligned network passed to `makeCidr`, …) throw `RangeError`;
 * invalid *user input* is reported by the parsers as an `InvalidCidrError` with a human reason.
 */

/** Address family: 4 (32-bit addresses) or 6 (128-bit addresses). */
export type Family = 4 | 6;

/**
 * An aligned network block: `network` has no bits set below the prefix (host bits are zero).
 * Build one with `makeCidr` (checks alignment) or `cidrContaining` (masks host bits).
 */
export interface Cidr {
  readonly family: Family;
  /** First address of the block, as an unsigned integer. */
  readonly network: bigint;
  /** Prefix length, 0..32 for IPv4, 0..128 for IPv6. */
  readonly prefix: number;
}

/** A parsed address. */
export interface IpAddress {
  readonly family: Family;
  readonly value: bigint;
}

/** An inclusive range of addresses `[start, end]` of one family. */
export interface AddressRange {
  readonly family: Family;
  readonly start: bigint;
  readonly end: bigint;
}

/** Which rule a rejected input broke; `reason` carries the human wording. */
export type InvalidCidrDetail = 'Empty' | 'MalformedAddress' | 'MissingPrefix' | 'MalformedPrefix' | 'PrefixOutOfRange' | 'HostBitsSet' | 'FamilyMismatch';

/**
 * Invalid address or CIDR text supplied by a user. `reason` is a short human sentence suitable for
 * a field-level message (`host bits set: did you mean 192.0.2.0/24?`); `suggestion` holds the
 * corrected text when there is an obvious one.
 */
export class InvalidCidrError extends Error {
  readonly code = 'InvalidCidr' as const;

  constructor(
    readonly input: string,
    readonly detail: InvalidCidrDetail,
    readonly reason: string,
    readonly suggestion?: string,
  ) {
    super(`invalid CIDR ${JSON.stringify(input.length > 64 ? `${input.slice(0, 64)}…` : input)}: ${reason}`);
    this.name = 'InvalidCidrError';
  }
}

export type ParseIpResult = { ok: true; address: IpAddress } | { ok: false; error: InvalidCidrError };
export type ParseCidrResult = { ok: true; cidr: Cidr } | { ok: false; error: InvalidCidrError };

export interface ParseCidrOptions {
  /**
   * `true` (the default) rejects host bits set (`192.0.2.1/24`) with a suggestion; `false`
   * masks them off (`192.0.2.1/24` → `192.0.2.0/24`).
   */
  readonly strict?: boolean;
  /** Accept a bare address as a /32 (IPv4) or /128 (IPv6). Default `false`. */
  readonly allowBareAddress?: boolean;
  /** Require this family; the other one is rejected with `FamilyMismatch`. */
  readonly family?: Family;
}

const IPV4_BITS = 32;
const IPV6_BITS = 128;
/** Longest accepted text: a full IPv6 address with embedded IPv4 plus "/128" is 49 characters. */
const MAX_TEXT_LENGTH = 64;

/** Number of address bits of a family: 32 or 128. */
export function familyBits(family: Family): 32 | 128 {
  return family === 4 ? IPV4_BITS : IPV6_BITS;
}

/** Human name of a family, as used in messages: `IPv4` / `IPv6`. */
export function familyName(family: Family): 'IPv4' | 'IPv6' {
  return family === 4 ? 'IPv4' : 'IPv6';
}

/** Largest address of a family (all ones). */
export function maxAddress(family: Family): bigint {
  return (1n << BigInt(familyBits(family))) - 1n;
}

function assertFamily(family: Family): void {
  if (family !== 4 && family !== 6) throw new RangeError(`unknown address family ${String(family)}`);
}

function assertAddress(family: Family, value: bigint): void {
  assertFamily(family);
  if (value < 0n || value > maxAddress(family)) {
    throw new RangeError(`address ${value} out of range for ${familyName(family)}`);
  }
}

function assertPrefix(family: Family, prefix: number): void {
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > familyBits(family)) {
    throw new RangeError(`prefix length ${prefix} out of range for ${familyName(family)}`);
  }
}

/** Mask of the host bits of a /prefix (the low `bits - prefix` bits set). */
export function hostMask(family: Family, prefix: number): bigint {
  assertPrefix(family, prefix);
  return (1n << BigInt(familyBits(family) - prefix)) - 1n;
}

/** Netmask of a /prefix (the high `prefix` bits set). */
export function netMask(family: Family, prefix: number): bigint {
  return maxAddress(family) ^ hostMask(family, prefix);
}

/** Whether `value` is the first address of some /prefix block, i.e. its host bits are zero. */
export function isAligned(value: bigint, prefix: number, family: Family): boolean {
  assertAddress(family, value);
  return (value & hostMask(family, prefix)) === 0n;
}

/** A CIDR from its parts; throws `RangeError` when the network has host bits set. */
export function makeCidr(family: Family, network: bigint, prefix: number): Cidr {
  assertAddress(family, network);
  assertPrefix(family, prefix);
  if ((network & hostMask(family, prefix)) !== 0n) {
    throw new RangeError(`${formatIp(family, network)}/${prefix} has host bits set`);
  }
  return { family, network, prefix };
}

/** The /prefix block containing `address` (host bits masked off). */
export function cidrContaining(family: Family, address: bigint, prefix: number): Cidr {
  assertAddress(family, address);
  return { family, network: address & netMask(family, prefix), prefix };
}

/** Number of addresses in the block: 2^(bits − prefix), exact. */
export function cidrSize(c: Cidr): bigint {
  return 1n << BigInt(familyBits(c.family) - c.prefix);
}

/** First address of the block (its network address). */
export function firstAddress(c: Cidr): bigint {
  return c.network;
}

/** Last address of the block (its broadcast address for IPv4). */
export function lastAddress(c: Cidr): bigint {
  return c.network + cidrSize(c) - 1n;
}

/** The inclusive address range the block covers. */
export function cidrRange(c: Cidr): AddressRange {
  return { family: c.family, start: c.network, end: lastAddress(c) };
}

/** Whether two CIDRs are the same block. */
export function sameCidr(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.prefix === b.prefix && a.network === b.network;
}

/** Whether block `a` contains block `b` (b ⊆ a; a block contains itself). */
export function contains(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family || a.prefix > b.prefix) return false;
  const shift = BigInt(familyBits(a.family) - a.prefix);
  return b.network >> shift === a.network >> shift;
}

/** Whether block `c` contains the single address `address` of `family`. */
export function containsAddress(c: Cidr, family: Family, address: bigint): boolean {
  if (c.family !== family) return false;
  const shift = BigInt(familyBits(c.family) - c.prefix);
  return address >> shift === c.network >> shift;
}

/**
 * Whether two blocks share at least one address. Aligned blocks are either nested or disjoint,
 * so this is containment one way or the other (PostgreSQL's `&&` on `cidr`).
 */
export function overlaps(a: Cidr, b: Cidr): boolean {
  return contains(a, b) || contains(b, a);
}

/**
 * Total order for sorting: family, then network address, then prefix length (a block sorts just
 * before the blocks it contains that start at the same address). For disjoint blocks, as in a
 * free-block set, this is plain address order.
 */
export function compareCidrs(a: Cidr, b: Cidr): number {
  if (a.family !== b.family) return a.family - b.family;
  if (a.network !== b.network) return a.network < b.network ? -1 : 1;
  return a.prefix - b.prefix;
}

// ---------------------------------------------------------------------------------------------
// Bit helpers
// ---------------------------------------------------------------------------------------------

/** Number of significant bits of a non-negative bigint (0 for 0). */
function bitLength(n: bigint): number {
  let length = 0;
  while (n > 0xffffffffn) {
    n >>= 32n;
    length += 32;
  }
  return length + (32 - Math.clz32(Number(n)));
}

/** Number of trailing zero bits of `n`, or `ifZero` when n is 0. */
function trailingZeros(n: bigint, ifZero: number): number {
  if (n === 0n) return ifZero;
  let count = 0;
  while ((n & 0xffffffffn) === 0n) {
    n >>= 32n;
    count += 32;
  }
  const low = Number(n & 0xffffffffn);
  return count + 31 - Math.clz32(low & -low);
}

// ---------------------------------------------------------------------------------------------
// Ranges
// ---------------------------------------------------------------------------------------------

/**
 * The minimal list of aligned CIDRs exactly covering the inclusive range `[start, end]`, in
 * address order. Each block is the largest aligned block that starts where the previous one
 * ended and still fits, which makes every block maximal (its parent block sticks out of the
 * range) and the list the unique minimal decomposition. At most 2 × bits − 2 blocks. An empty
 * range (`start > end`) yields `[]`.
 */
export function rangeToCidrs(family: Family, start: bigint, end: bigint): Cidr[] {
  assertAddress(family, start);
  assertAddress(family, end);
  const bits = familyBits(family);
  const blocks: Cidr[] = [];
  let next = start;
  while (next <= end) {
    const alignment = trailingZeros(next, bits);
    const fit = bitLength(end - next + 1n) - 1;
    const hostBits = Math.min(alignment, fit);
    blocks.push({ family, network: next, prefix: bits - hostBits });
    next += 1n << BigInt(hostBits);
  }
  return blocks;
}

/**
 * The parts of `range` not covered by `hole`: zero, one or two ranges, in address order.
 * Ranges of different families do not interact.
 */
export function subtractRange(range: AddressRange, hole: AddressRange): AddressRange[] {
  if (range.family !== hole.family || hole.end < range.start || hole.start > range.end) return [range];
  const parts: AddressRange[] = [];
  if (hole.start > range.start) parts.push({ family: range.family, start: range.start, end: hole.start - 1n });
  if (hole.end < range.end) parts.push({ family: range.family, start: hole.end + 1n, end: range.end });
  return parts;
}

/** Number of addresses in an inclusive range (0 for an empty one). */
export function rangeSize(range: AddressRange): bigint {
  return range.end >= range.start ? range.end - range.start + 1n : 0n;
}

// ---------------------------------------------------------------------------------------------
// Exact counters
// ---------------------------------------------------------------------------------------------

/**
 * Exact decimal text of a non-negative count, for `numeric` counters (IPv6 sizes overflow 64 bits
 * and doubles): `formatCount(cidrSize(/32 v6)) === "79228162514264337593543950336"`.
 */
export function formatCount(n: bigint): string {
  if (n < 0n) throw new RangeError(`negative count ${n}`);
  return n.toString(10);
}

/**
 * Parses a decimal count as stored in a `numeric` column (`"4096"`, also `"4096.000"` as
 * PostgreSQL may print a scaled numeric). Throws `RangeError` on anything else.
 */
export function parseCount(text: string): bigint {
  const match = /^(0|[1-9][0-9]*)(?:\.0+)?$/.exec(text);
  if (!match) throw new RangeError(`not an exact non-negative integer count: ${JSON.stringify(text)}`);
  return BigInt(match[1]);
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

function fail(input: string, detail: InvalidCidrDetail, reason: string, suggestion?: string) {
  return { ok: false as const, error: new InvalidCidrError(input, detail, reason, suggestion) };
}

/** Parses strict dotted-quad IPv4, or returns the reason it is malformed. */
function parseIpv4Value(text: string): bigint | string {
  const parts = text.split('.');
  if (parts.length !== 4) return 'malformed address';
  let value = 0n;
  for (const part of parts) {
    if (!/^[0-9]{1,3}$/.test(part)) return 'malformed address';
    if (part.length > 1 && part[0] === '0') {
      return 'malformed address: leading zeros in IPv4 octets are not allowed (ambiguous octal)';
    }
    const octet = Number(part);
    if (octet > 255) return 'malformed address: IPv4 octet out of range (0-255)';
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

/** Parses one side of an IPv6 "::" into 16-bit words (a final dotted IPv4 counts as two). */
function parseIpv6Groups(text: string, mayEndWithIpv4: boolean): number[] | string {
  if (text === '') return [];
  const groups = text.split(':');
  const words: number[] = [];
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i];
    if (mayEndWithIpv4 && i === groups.length - 1 && group.includes('.')) {
      const v4 = parseIpv4Value(group);
      if (typeof v4 === 'string') return v4;
      words.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
    } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
      words.push(parseInt(group, 16));
    } else {
      return 'malformed address';
    }
  }
  return words;
}

/** Parses RFC 4291 §2.2 IPv6 text (all three forms), or returns the reason it is malformed. */
function parseIpv6Value(text: string): bigint | string {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return 'malformed address';
  const halves = text.split('::');
  if (halves.length > 2) return 'malformed address: "::" may appear only once';
  let words: number[];
  if (halves.length === 2) {
    const head = parseIpv6Groups(halves[0], false);
    if (typeof head === 'string') return head;
    const tail = parseIpv6Groups(halves[1], true);
    if (typeof tail === 'string') return tail;
    // "::" stands for at least one zero group.
    if (head.length + tail.length > 7) return 'malformed address: too many groups';
    words = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = parseIpv6Groups(text, true);
    if (typeof all === 'string') return all;
    if (all.length !== 8) return 'malformed address: an IPv6 address has 8 groups (or uses "::")';
    words = all;
  }
  let value = 0n;
  for (const word of words) value = (value << 16n) | BigInt(word);
  return value;
}

/**
 * Parses an IPv4 or IPv6 address. IPv4 must be four decimal octets without leading zeros; IPv6
 * accepts the full, compressed (`::`) and embedded-IPv4 (`::ffff:192.0.2.1`, which stays an IPv6
 * address) forms, case-insensitively. Zone ids (`fe80::1%eth0`), whitespace and any other
 * character are rejected.
 */
export function parseIp(text: string): ParseIpResult {
  if (text === '') return fail(text, 'Empty', 'empty address');
  if (text.length > MAX_TEXT_LENGTH) return fail(text, 'MalformedAddress', 'malformed address: too long');
  if (text.includes('%')) return fail(text, 'MalformedAddress', 'malformed address: zone ids are not allowed');
  const family: Family = text.includes(':') ? 6 : 4;
  const value = family === 4 ? parseIpv4Value(text) : parseIpv6Value(text);
  if (typeof value === 'string') return fail(text, 'MalformedAddress', value);
  return { ok: true, address: { family, value } };
}

/**
 * Parses `address/prefix` text. See `ParseCidrOptions` for host bits, bare addresses and family.
 * Reasons (the `reason` of the returned error) include `malformed address`,
 * `prefix length out of range for IPv4 (0-32)`, `host bits set: did you mean 192.0.2.0/24?`,
 * `missing prefix length: did you mean 192.0.2.1/32?`.
 */
export function parseCidr(text: string, options: ParseCidrOptions = {}): ParseCidrResult {
  const strict = options.strict ?? true;
  if (text === '') return fail(text, 'Empty', 'empty CIDR');
  if (text.length > MAX_TEXT_LENGTH) return fail(text, 'MalformedAddress', 'malformed address: too long');
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const parsed = parseIp(addressText);
  if (!parsed.ok) {
    const { detail, reason } = parsed.error;
    return fail(text, detail === 'Empty' ? 'MalformedAddress' : detail, detail === 'Empty' ? 'missing address' : reason);
  }
  const { family, value } = parsed.address;
  const bits = familyBits(family);
  if (options.family !== undefined && options.family !== family) {
    return fail(text, 'FamilyMismatch', `address family mismatch: expected ${familyName(options.family)}, got ${familyName(family)}`);
  }
  let prefix: number;
  if (slash === -1) {
    const asHost = `${formatIp(family, value)}/${bits}`;
    if (!options.allowBareAddress) {
      return fail(text, 'MissingPrefix', `missing prefix length: did you mean ${asHost}?`, asHost);
    }
    prefix = bits;
  } else {
    const prefixText = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]*)$/.test(prefixText)) return fail(text, 'MalformedPrefix', 'malformed prefix length');
    prefix = Number(prefixText);
    if (prefix > bits) {
      return fail(text, 'PrefixOutOfRange', `prefix length out of range for ${familyName(family)} (0-${bits})`);
    }
  }
  const network = value & netMask(family, prefix);
  if (network !== value && strict) {
    const suggestion = `${formatIp(family, network)}/${prefix}`;
    return fail(text, 'HostBitsSet', `host bits set: did you mean ${suggestion}?`, suggestion);
  }
  return { ok: true, cidr: { family, network, prefix } };
}

/** `parseCidr` that throws the `InvalidCidrError` instead of returning it. */
export function parseCidrOrThrow(text: string, options?: ParseCidrOptions): Cidr {
  const result = parseCidr(text, options);
  if (!result.ok) throw result.error;
  return result.cidr;
}

/** `parseIp` that throws the `InvalidCidrError` instead of returning it. */
export function parseIpOrThrow(text: string): IpAddress {
  const result = parseIp(text);
  if (!result.ok) throw result.error;
  return result.address;
}

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 0xffn)).join('.');
}

/**
 * IPv6 text exactly as PostgreSQL prints `inet`/`cidr` (src/port/inet_net_ntop.c), which is RFC
 * 5952: lowercase, no leading zeros, the longest run of two or more zero groups (the first one on
 * a tie) compressed to "::". Following RFC 5952 §5 for the RFC 4291 embedded-IPv4 prefixes,
 * PostgreSQL uses mixed notation for IPv4-mapped `::ffff:a.b.c.d` and for the deprecated
 * IPv4-compatible `::a.b.c.d` when group 6 is non-zero (`::c000:201` prints as `::192.0.2.1`, but
 * `::2` stays `::2`); we do the same so values round-trip as identical strings.
 */
function formatIpv6(value: bigint): string {
  const words: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) words.push(Number((value >> shift) & 0xffffn));

  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestLength < 2) bestStart = -1;

  // PostgreSQL also tests a seven-group run (`::0.0.a.b`), but that branch is unreachable there:
  // group 6 lies inside the run, so `::2` prints as `::2`. Only these two cases take effect.
  const embedsIpv4 = bestStart === 0 && (bestLength === 6 || (bestLength === 5 && words[5] === 0xffff));
  const hexWords = embedsIpv4 ? 6 : 8;
  const ipv4Tail = embedsIpv4 ? formatIpv4(value & 0xffffffffn) : undefined;

  let text = '';
  for (let i = 0; i < hexWords; i++) {
    if (bestStart !== -1 && i >= bestStart && i < bestStart + bestLength) {
      if (i === bestStart) text += '::';
      continue;
    }
    if (text !== '' && !text.endsWith('::')) text += ':';
    text += words[i].toString(16);
  }
  if (ipv4Tail !== undefined) {
    if (!text.endsWith('::')) text += ':';
    text += ipv4Tail;
  }
  return text;
}

/**
 * Canonical text of an address: dotted quad for IPv4; for IPv6, RFC 5952 lowercase compressed
 * form exactly as PostgreSQL prints it (see `formatIpv6` above for embedded IPv4).
 */
export function formatIp(family: Family, value: bigint): string {
  assertAddress(family, value);
  return family === 4 ? formatIpv4(value) : formatIpv6(value);
}

/**
 * Canonical `address/prefix` text, identical to PostgreSQL's output for the `cidr` type (which
 * always prints the prefix length): `192.0.2.0/24`, `2001:db8::/32`, `192.0.2.1/32`.
 */
export function formatCidr(c: Cidr): string {
  return `${formatIp(c.family, c.network)}/${c.prefix}`;
}
