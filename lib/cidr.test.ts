import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Cidr,
  type Family,
  type InvalidCidrDetail,
  type ParseCidrOptions,
  InvalidCidrError,
  cidrContaining,
  cidrRange,
  cidrSize,
  compareCidrs,
  contains,
  containsAddress,
  familyBits,
  firstAddress,
  formatCidr,
  formatCount,
  formatIp,
  hostMask,
  isAligned,
  lastAddress,
  makeCidr,
  maxAddress,
  netMask,
  overlaps,
  parseCidr,
  parseCidrOrThrow,
  parseCount,
  parseIp,
  parseIpOrThrow,
  rangeSize,
  rangeToCidrs,
  subtractRange,
} from './cidr';

const c = (text: string): Cidr => parseCidrOrThrow(text);
const ip = (text: string): bigint => parseIpOrThrow(text).value;
const texts = (blocks: readonly Cidr[]): string[] => blocks.map(formatCidr);

describe('parseCidr: accepted input and canonical text', () => {
  it.each([
    // IPv4
    ['192.0.2.0/24', '192.0.2.0/24'],
    ['198.51.100.128/25', '198.51.100.128/25'],
    ['203.0.113.7/32', '203.0.113.7/32'],
    ['203.0.113.0/31', '203.0.113.0/31'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['255.255.255.255/32', '255.255.255.255/32'],
    // IPv6: case, leading zeros, full form and compression all normalise
    ['2001:db8::/32', '2001:db8::/32'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['2001:0db8:0000:0000:0000:0000:0000:0000/32', '2001:db8::/32'],
    ['2001:db8:0:0:1:0:0:1/128', '2001:db8::1:0:0:1/128'],
    ['2001:db8:0:1:1:1:1:1/128', '2001:db8:0:1:1:1:1:1/128'],
    ['2001:db8::1:0:0:0:1/128', '2001:db8:0:1::1/128'],
    ['2001:db8:ab::/48', '2001:db8:ab::/48'],
    ['2001:db8::/64', '2001:db8::/64'],
    ['2001:db8::ff00/120', '2001:db8::ff00/120'],
    ['::/0', '::/0'],
    ['::/128', '::/128'],
    ['::1/128', '::1/128'],
    ['1:2:3:4:5:6:7::/128', '1:2:3:4:5:6:7:0/128'],
    ['::1:2:3:4:5:6:7/128', '0:1:2:3:4:5:6:7/128'],
    // embedded IPv4 forms stay IPv6
    ['::ffff:192.0.2.1/128', '::ffff:192.0.2.1/128'],
    ['::FFFF:c000:0201/128', '::ffff:192.0.2.1/128'],
    ['::ffff:192.0.2.0/120', '::ffff:192.0.2.0/120'],
    ['2001:db8::192.0.2.1/128', '2001:db8::c000:201/128'],
    ['2001:db8:1:2:3:4:192.0.2.1/128', '2001:db8:1:2:3:4:c000:201/128'],
  ])('%s → %s', (input, canonical) => {
    const result = parseCidr(input);
    expect(result.ok && formatCidr(result.cidr)).toBe(canonical);
  });

  it('keeps embedded IPv4 forms in family 6', () => {
    expect(c('::ffff:192.0.2.1/128')).toEqual({ family: 6, network: 0xffffc0000201n, prefix: 128 });
  });

  it('masks host bits when not strict', () => {
    const loose: ParseCidrOptions = { strict: false };
    expect(formatCidr(parseCidrOrThrow('192.0.2.77/24', loose))).toBe('192.0.2.0/24');
    expect(formatCidr(parseCidrOrThrow('198.51.100.255/25', loose))).toBe('198.51.100.128/25');
    expect(formatCidr(parseCidrOrThrow('2001:db8::1/32', loose))).toBe('2001:db8::/32');
    expect(formatCidr(parseCidrOrThrow('203.0.113.9/0', loose))).toBe('0.0.0.0/0');
  });

  it('accepts a bare address as a host route only when allowed', () => {
    const bare: ParseCidrOptions = { allowBareAddress: true };
    expect(formatCidr(parseCidrOrThrow('192.0.2.1', bare))).toBe('192.0.2.1/32');
    expect(formatCidr(parseCidrOrThrow('2001:db8::1', bare))).toBe('2001:db8::1/128');
    expect(parseCidr('192.0.2.1').ok).toBe(false);
  });

  it('accepts the requested family only', () => {
    expect(parseCidr('192.0.2.0/24', { family: 4 }).ok).toBe(true);
    expect(parseCidr('2001:db8::/32', { family: 6 }).ok).toBe(true);
  });
});

describe('parseCidr: rejected input with its reason', () => {
  const cases: [string, ParseCidrOptions, InvalidCidrDetail, string][] = [
    ['', {}, 'Empty', 'empty CIDR'],
    ['/24', {}, 'MalformedAddress', 'missing address'],
    // prefix length
    ['192.0.2.0', {}, 'MissingPrefix', 'missing prefix length: did you mean 192.0.2.0/32?'],
    ['2001:db8::1', {}, 'MissingPrefix', 'missing prefix length: did you mean 2001:db8::1/128?'],
    ['192.0.2.0/33', {}, 'PrefixOutOfRange', 'prefix length out of range for IPv4 (0-32)'],
    ['192.0.2.0/99999999999999999999', {}, 'PrefixOutOfRange', 'prefix length out of range for IPv4 (0-32)'],
    ['2001:db8::/129', {}, 'PrefixOutOfRange', 'prefix length out of range for IPv6 (0-128)'],
    ['192.0.2.0/', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['192.0.2.0/024', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['192.0.2.0/-1', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['192.0.2.0/+24', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['192.0.2.0/24/24', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['192.0.2.0/ 24', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['192.0.2.0/24 ', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['192.0.2.0/2x', {}, 'MalformedPrefix', 'malformed prefix length'],
    ['2001:db8::/3.2', {}, 'MalformedPrefix', 'malformed prefix length'],
    // host bits
    ['192.0.2.1/24', {}, 'HostBitsSet', 'host bits set: did you mean 192.0.2.0/24?'],
    ['198.51.100.200/25', {}, 'HostBitsSet', 'host bits set: did you mean 198.51.100.128/25?'],
    ['203.0.113.1/0', {}, 'HostBitsSet', 'host bits set: did you mean 0.0.0.0/0?'],
    ['2001:db8::1/32', {}, 'HostBitsSet', 'host bits set: did you mean 2001:db8::/32?'],
    ['2001:db8:0:0:1::/64', {}, 'HostBitsSet', 'host bits set: did you mean 2001:db8::/64?'],
    // IPv4 address
    ['192.0.2/24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.2.0.0/24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0..0/24', {}, 'MalformedAddress', 'malformed address'],
    ['.192.0.2.0/24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.2.0./24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.2.-1/24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.2.0x/24', {}, 'MalformedAddress', 'malformed address'],
    ['0x0c.0.2.0/24', {}, 'MalformedAddress', 'malformed address'],
    ['1920.0.2.0/24', {}, 'MalformedAddress', 'malformed address'],
    [' 192.0.2.0/24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.2.0 /24', {}, 'MalformedAddress', 'malformed address'],
    ['١٩٢.0.2.0/24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.2.0\n/24', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.02.0/24', {}, 'MalformedAddress', 'malformed address: leading zeros in IPv4 octets are not allowed (ambiguous octal)'],
    ['192.0.2.00/24', {}, 'MalformedAddress', 'malformed address: leading zeros in IPv4 octets are not allowed (ambiguous octal)'],
    ['192.0.2.256/24', {}, 'MalformedAddress', 'malformed address: IPv4 octet out of range (0-255)'],
    ['192.0.2.999/24', {}, 'MalformedAddress', 'malformed address: IPv4 octet out of range (0-255)'],
    // IPv6 address
    ['fe80::1%eth0/64', {}, 'MalformedAddress', 'malformed address: zone ids are not allowed'],
    ['2001:db8::1%25/128', {}, 'MalformedAddress', 'malformed address: zone ids are not allowed'],
    ['2001:db8:::/32', {}, 'MalformedAddress', 'malformed address'],
    ['2001:db8::1::/32', {}, 'MalformedAddress', 'malformed address: "::" may appear only once'],
    ['2001:db8:0:0:0:0:0:0:0/32', {}, 'MalformedAddress', 'malformed address: an IPv6 address has 8 groups (or uses "::")'],
    ['2001:db8:0:0:0:0:0/32', {}, 'MalformedAddress', 'malformed address: an IPv6 address has 8 groups (or uses "::")'],
    ['2001:db8:0:0:0:0:0:0::/32', {}, 'MalformedAddress', 'malformed address: too many groups'],
    ['2001:db8:0:0::0:0:0:0/32', {}, 'MalformedAddress', 'malformed address: too many groups'],
    ['2001:db8::12345/32', {}, 'MalformedAddress', 'malformed address'],
    [':2001:db8::/32', {}, 'MalformedAddress', 'malformed address'],
    ['2001:db8:/32', {}, 'MalformedAddress', 'malformed address'],
    ['2001:db8::g/32', {}, 'MalformedAddress', 'malformed address'],
    ['2001:db8::-1/32', {}, 'MalformedAddress', 'malformed address'],
    [':/0', {}, 'MalformedAddress', 'malformed address'],
    [':::/0', {}, 'MalformedAddress', 'malformed address'],
    ['[2001:db8::]/32', {}, 'MalformedAddress', 'malformed address'],
    ['::ffff:192.0.2/128', {}, 'MalformedAddress', 'malformed address'],
    ['::192.0.2.1:0/128', {}, 'MalformedAddress', 'malformed address'],
    ['192.0.2.1::/128', {}, 'MalformedAddress', 'malformed address'],
    ['::ffff:192.0.2.01/128', {}, 'MalformedAddress', 'malformed address: leading zeros in IPv4 octets are not allowed (ambiguous octal)'],
    ['::ffff:192.0.2.300/128', {}, 'MalformedAddress', 'malformed address: IPv4 octet out of range (0-255)'],
    ['1:2:3:4:5:6:7:192.0.2.1/128', {}, 'MalformedAddress', 'malformed address: an IPv6 address has 8 groups (or uses "::")'],
    [`2001:db8::${'0:'.repeat(40)}1/128`, {}, 'MalformedAddress', 'malformed address: too long'],
    // family
    ['2001:db8::/32', { family: 4 }, 'FamilyMismatch', 'address family mismatch: expected IPv4, got IPv6'],
    ['192.0.2.0/24', { family: 6 }, 'FamilyMismatch', 'address family mismatch: expected IPv6, got IPv4'],
  ];

  it.each(cases)('%j %j → %s: %s', (input, options, detail, reason) => {
    const result = parseCidr(input, options);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(InvalidCidrError);
    expect(result.error.code).toBe('InvalidCidr');
    expect(result.error.input).toBe(input);
    expect(result.error.detail).toBe(detail);
    expect(result.error.reason).toBe(reason);
  });

  it('host bits are tolerated only when not strict, and the suggestion parses', () => {
    const strict = parseCidr('192.0.2.1/24');
    expect(strict.ok).toBe(false);
    if (strict.ok) return;
    expect(strict.error.suggestion).toBe('192.0.2.0/24');
    expect(parseCidr(strict.error.suggestion as string).ok).toBe(true);
    expect(parseCidr('192.0.2.1/24', { strict: false }).ok).toBe(true);
  });

  it('the thrown variant carries the same coded error', () => {
    expect(() => parseCidrOrThrow('192.0.2.1/24')).toThrow(InvalidCidrError);
    expect(() => parseCidrOrThrow('192.0.2.1/24')).toThrow('invalid CIDR "192.0.2.1/24": host bits set: did you mean 192.0.2.0/24?');
  });
});

describe('parseIp', () => {
  it.each([
    ['192.0.2.1', 4, 0xc0000201n],
    ['0.0.0.0', 4, 0n],
    ['255.255.255.255', 4, 0xffffffffn],
    ['2001:db8::1', 6, 0x20010db8000000000000000000000001n],
    ['::', 6, 0n],
    ['::ffff:203.0.113.9', 6, 0xffffcb007109n],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 6, (1n << 128n) - 1n],
  ] as const)('%s', (text, family, value) => {
    expect(parseIp(text)).toEqual({ ok: true, address: { family, value } });
  });

  it.each([
    ['', 'empty address'],
    ['192.0.2', 'malformed address'],
    ['192.0.2.1/32', 'malformed address'],
    ['192.0.2.01', 'malformed address: leading zeros in IPv4 octets are not allowed (ambiguous octal)'],
    ['fe80::1%1', 'malformed address: zone ids are not allowed'],
    ['2001:db8::1 ', 'malformed address'],
  ])('rejects %j: %s', (text, reason) => {
    const result = parseIp(text);
    expect(result.ok === false && result.error.reason).toBe(reason);
  });
});

describe('formatIp / formatCidr match PostgreSQL', () => {
  // Each pair was checked against PostgreSQL 15.20: SELECT '<input>'::cidr::text
  // (src/port/inet_net_ntop.c). The second column is PostgreSQL's output.
  it.each([
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['::/0', '::/0'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['192.0.2.1/32', '192.0.2.1/32'],
    ['::ffff:192.0.2.0/120', '::ffff:192.0.2.0/120'],
    ['::ffff:0:0/96', '::ffff:0.0.0.0/96'],
    ['::c000:201/128', '::192.0.2.1/128'],
    ['::2/128', '::2/128'],
    ['1:2:3:4:5:6:7::/128', '1:2:3:4:5:6:7:0/128'],
    ['::1:2:3:4:5:6:7/128', '0:1:2:3:4:5:6:7/128'],
    ['64:ff9b::192.0.2.1/128', '64:ff9b::c000:201/128'],
  ])('%s prints as %s', (input, postgres) => {
    expect(formatCidr(c(input))).toBe(postgres);
  });

  it.each([
    [0n, '::'],
    [1n, '::1'],
    [2n, '::2'],
    [0xffffn, '::ffff'],
    [0x10000n, '::0.1.0.0'],
    [0xc0000201n, '::192.0.2.1'],
    [0xffff00000000n, '::ffff:0.0.0.0'],
    [0xffffc0000201n, '::ffff:192.0.2.1'],
    [0x1ffffc0000201n, '::1:ffff:c000:201'],
    [0xffff0000c0000201n, '::ffff:0:c000:201'],
    [0x20010db8000000000000000000000001n, '2001:db8::1'],
    [0x20010db8000000010000000000000001n, '2001:db8:0:1::1'],
    [0x20010db8000000000001000000000000n, '2001:db8:0:0:1::'],
    [0x20010db8000100000000000100000000n, '2001:db8:1::1:0:0'],
    [0x20010db8000000010001000100010001n, '2001:db8:0:1:1:1:1:1'],
    [0x20010db800000000000000000000ffffn, '2001:db8::ffff'],
    [0x20010db8ffffffffffffffffffffffffn, '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
    [0xffff0000000000000000000000010000n, 'ffff::1:0'],
  ])('IPv6 %s prints as %s', (value, text) => {
    expect(formatIp(6, value)).toBe(text);
  });

  it('IPv4 always prints four decimal octets', () => {
    expect(formatIp(4, 0n)).toBe('0.0.0.0');
    expect(formatIp(4, 0xcb007100n)).toBe('203.0.113.0');
    expect(formatIp(4, 0xffffffffn)).toBe('255.255.255.255');
  });

  it('rejects values outside the family', () => {
    expect(() => formatIp(4, 1n << 32n)).toThrow(RangeError);
    expect(() => formatIp(6, -1n)).toThrow(RangeError);
  });
});

describe('sizes, bounds and relations', () => {
  it.each([
    ['192.0.2.0/24', 256n, '192.0.2.0', '192.0.2.255'],
    ['198.51.100.7/32', 1n, '198.51.100.7', '198.51.100.7'],
    ['203.0.113.128/25', 128n, '203.0.113.128', '203.0.113.255'],
    ['0.0.0.0/0', 4294967296n, '0.0.0.0', '255.255.255.255'],
    ['2001:db8::/32', 79228162514264337593543950336n, '2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
    ['2001:db8::/64', 18446744073709551616n, '2001:db8::', '2001:db8::ffff:ffff:ffff:ffff'],
    ['2001:db8::1/128', 1n, '2001:db8::1', '2001:db8::1'],
    ['::/0', 340282366920938463463374607431768211456n, '::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ])('%s: %s addresses, %s – %s', (text, size, first, last) => {
    const block = c(text);
    expect(cidrSize(block)).toBe(size);
    expect(formatIp(block.family, firstAddress(block))).toBe(first);
    expect(formatIp(block.family, lastAddress(block))).toBe(last);
    expect(rangeSize(cidrRange(block))).toBe(size);
  });

  it('counts are exact decimal strings both ways', () => {
    expect(formatCount(cidrSize(c('2001:db8::/32')))).toBe('79228162514264337593543950336');
    expect(formatCount(cidrSize(c('::/0')))).toBe('340282366920938463463374607431768211456');
    expect(parseCount('340282366920938463463374607431768211456')).toBe(1n << 128n);
    expect(parseCount('4096.000')).toBe(4096n);
    expect(parseCount('0')).toBe(0n);
    for (const bad of ['', '-1', '1e3', '0x10', '01', '1.5', ' 1']) expect(() => parseCount(bad)).toThrow(RangeError);
    expect(() => formatCount(-1n)).toThrow(RangeError);
  });

  it.each([
    ['192.0.2.0/24', '192.0.2.0/24', true, true],
    ['192.0.2.0/24', '192.0.2.128/25', true, true],
    ['192.0.2.128/25', '192.0.2.0/24', false, true],
    ['192.0.2.0/25', '192.0.2.128/25', false, false],
    ['192.0.2.0/24', '198.51.100.0/24', false, false],
    ['0.0.0.0/0', '203.0.113.5/32', true, true],
    ['2001:db8::/32', '2001:db8:ffff::/48', true, true],
    ['2001:db8::/33', '2001:db8:8000::/33', false, false],
    ['::/0', '2001:db8::1/128', true, true],
    ['::/0', '0.0.0.0/0', false, false],
    ['::ffff:192.0.2.0/120', '192.0.2.0/24', false, false],
  ])('%s ⊇ %s: %s, overlap: %s', (a, b, aContainsB, overlap) => {
    expect(contains(c(a), c(b))).toBe(aContainsB);
    expect(overlaps(c(a), c(b))).toBe(overlap);
    expect(overlaps(c(b), c(a))).toBe(overlap);
  });

  it('containsAddress respects family and bounds', () => {
    expect(containsAddress(c('192.0.2.0/24'), 4, ip('192.0.2.255'))).toBe(true);
    expect(containsAddress(c('192.0.2.0/24'), 4, ip('192.0.3.0'))).toBe(false);
    expect(containsAddress(c('::/0'), 4, ip('192.0.2.1'))).toBe(false);
  });

  it.each([
    ['192.0.2.0', 24, 4, true],
    ['192.0.2.128', 24, 4, false],
    ['192.0.2.128', 25, 4, true],
    ['192.0.2.1', 32, 4, true],
    ['0.0.0.0', 0, 4, true],
    ['192.0.2.0', 0, 4, false],
    ['2001:db8::', 32, 6, true],
    ['2001:db8::', 29, 6, true],
    ['2001:db8::', 28, 6, false],
    ['2001:db8::1', 128, 6, true],
  ] as const)('isAligned(%s, /%i, v%i) = %s', (address, prefix, family, aligned) => {
    expect(isAligned(ip(address), prefix, family)).toBe(aligned);
  });

  it('masks and constructors', () => {
    expect(netMask(4, 24)).toBe(0xffffff00n);
    expect(hostMask(4, 24)).toBe(0xffn);
    expect(netMask(6, 0)).toBe(0n);
    expect(hostMask(6, 128)).toBe(0n);
    expect(familyBits(4)).toBe(32);
    expect(familyBits(6)).toBe(128);
    expect(formatCidr(cidrContaining(4, ip('203.0.113.77'), 26))).toBe('203.0.113.64/26');
    expect(formatCidr(makeCidr(6, ip('2001:db8::'), 32))).toBe('2001:db8::/32');
    expect(() => makeCidr(4, ip('192.0.2.1'), 24)).toThrow(RangeError);
    expect(() => makeCidr(4, 0n, 33)).toThrow(RangeError);
    expect(() => makeCidr(4, 1n << 32n, 32)).toThrow(RangeError);
    expect(() => hostMask(4, 1.5)).toThrow(RangeError);
  });

  it('compareCidrs orders by family, address, then prefix', () => {
    const sorted = ['2001:db8::/32', '192.0.2.128/25', '192.0.2.0/24', '192.0.2.0/25', '::/0'].map(c).sort(compareCidrs);
    expect(texts(sorted)).toEqual(['192.0.2.0/24', '192.0.2.0/25', '192.0.2.128/25', '::/0', '2001:db8::/32']);
  });

  it('subtractRange leaves zero, one or two parts', () => {
    const r = (a: string, b: string) => ({ family: 4 as Family, start: ip(a), end: ip(b) });
    const show = (ranges: ReturnType<typeof subtractRange>) => ranges.map((x) => `${formatIp(4, x.start)}-${formatIp(4, x.end)}`);
    const base = r('192.0.2.0', '192.0.2.255');
    expect(show(subtractRange(base, r('192.0.2.10', '192.0.2.20')))).toEqual(['192.0.2.0-192.0.2.9', '192.0.2.21-192.0.2.255']);
    expect(show(subtractRange(base, r('192.0.2.0', '192.0.2.20')))).toEqual(['192.0.2.21-192.0.2.255']);
    expect(show(subtractRange(base, r('192.0.2.250', '192.0.3.5')))).toEqual(['192.0.2.0-192.0.2.249']);
    expect(show(subtractRange(base, r('192.0.1.0', '192.0.3.0')))).toEqual([]);
    expect(show(subtractRange(base, r('198.51.100.0', '198.51.100.9')))).toEqual(['192.0.2.0-192.0.2.255']);
  });
});

describe('rangeToCidrs', () => {
  it.each([
    ['192.0.2.0', '192.0.2.255', ['192.0.2.0/24']],
    ['192.0.2.5', '192.0.2.5', ['192.0.2.5/32']],
    ['198.51.100.10', '198.51.100.20', ['198.51.100.10/31', '198.51.100.12/30', '198.51.100.16/30', '198.51.100.20/32']],
    [
      '192.0.2.1',
      '192.0.2.254',
      [
        '192.0.2.1/32',
        '192.0.2.2/31',
        '192.0.2.4/30',
        '192.0.2.8/29',
        '192.0.2.16/28',
        '192.0.2.32/27',
        '192.0.2.64/26',
        '192.0.2.128/26',
        '192.0.2.192/27',
        '192.0.2.224/28',
        '192.0.2.240/29',
        '192.0.2.248/30',
        '192.0.2.252/31',
        '192.0.2.254/32',
      ],
    ],
    ['203.0.113.0', '203.0.113.127', ['203.0.113.0/25']],
    ['203.0.113.128', '203.0.114.3', ['203.0.113.128/25', '203.0.114.0/30']],
    ['0.0.0.0', '255.255.255.255', ['0.0.0.0/0']],
    ['0.0.0.0', '0.0.0.0', ['0.0.0.0/32']],
    ['255.255.255.255', '255.255.255.255', ['255.255.255.255/32']],
    ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', ['2001:db8::/32']],
    ['2001:db8::', '2001:db8::2', ['2001:db8::/127', '2001:db8::2/128']],
    ['2001:db8::ffff', '2001:db8::1:0', ['2001:db8::ffff/128', '2001:db8::1:0/128']],
    ['2001:db8:0:1::', '2001:db8:0:2:ffff:ffff:ffff:ffff', ['2001:db8:0:1::/64', '2001:db8:0:2::/64']],
    ['::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', ['::/0']],
  ])('%s – %s', (start, end, expected) => {
    const family = parseIpOrThrow(start).family;
    expect(texts(rangeToCidrs(family, ip(start), ip(end)))).toEqual(expected);
  });

  it('is empty for an empty range and rejects out-of-family addresses', () => {
    expect(rangeToCidrs(4, ip('192.0.2.10'), ip('192.0.2.9'))).toEqual([]);
    expect(() => rangeToCidrs(4, 0n, 1n << 32n)).toThrow(RangeError);
  });

  it('uses 2 × bits − 2 blocks in the worst case', () => {
    expect(rangeToCidrs(4, 1n, maxAddress(4) - 1n)).toHaveLength(62);
    expect(rangeToCidrs(6, 1n, maxAddress(6) - 1n)).toHaveLength(254);
  });

  /** start ≤ end, biased towards values near power-of-two boundaries where the logic branches. */
  const rangeArb = (family: Family) => {
    const bits = familyBits(family);
    const max = maxAddress(family);
    const address = fc.tuple(fc.bigInt({ min: 0n, max }), fc.integer({ min: 0, max: bits }), fc.constantFrom(0n, -1n, 1n)).map(([value, lowBits, nudge]) => {
      const v = (value & ~((1n << BigInt(lowBits)) - 1n)) + nudge;
      return v < 0n ? 0n : v > max ? max : v;
    });
    return fc.tuple(address, address).map(([a, b]) => (a <= b ? [a, b] : [b, a]) as [bigint, bigint]);
  };

  /** Why `blocks` is not the minimal aligned cover of [start, end], or undefined. Plain checks, not
   * `expect`, to keep thousands of runs fast. */
  function coverageProblem(family: Family, start: bigint, end: bigint, blocks: readonly Cidr[]): string | undefined {
    let next = start;
    for (const block of blocks) {
      const name = formatCidr(block);
      if (block.family !== family) return `${name}: wrong family`;
      if (!isAligned(block.network, block.prefix, family)) return `${name}: not aligned`;
      // sorted, disjoint and gap-free: each block starts right after the previous one
      if (block.network !== next) return `${name}: expected to start at ${formatIp(family, next)}`;
      next = lastAddress(block) + 1n;
      // maximal: the parent block sticks out of the range, so no shorter list exists
      if (block.prefix > 0) {
        const parent = cidrContaining(family, block.network, block.prefix - 1);
        if (parent.network >= start && lastAddress(parent) <= end) return `${name}: parent fits, not maximal`;
      }
    }
    if (next !== end + 1n) return `cover ends at ${next - 1n}, not ${end}`;
    if (blocks.length > Math.max(1, 2 * familyBits(family) - 2)) return `too many blocks: ${blocks.length}`;
    return undefined;
  }

  for (const family of [4, 6] as const) {
    it(`IPv${family}: blocks are aligned, sorted, contiguous, maximal and cover exactly [start, end]`, () => {
      fc.assert(
        fc.property(rangeArb(family), ([start, end]) => {
          const blocks = rangeToCidrs(family, start, end);
          expect(coverageProblem(family, start, end, blocks)).toBeUndefined();
        }),
        { numRuns: 2000 },
      );
    });
  }
});

describe('round trips', () => {
  it('IPv4: parse(format(x)) = x', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: maxAddress(4) }), fc.integer({ min: 0, max: 32 }), (value, prefix) => {
        expect(parseIpOrThrow(formatIp(4, value))).toEqual({ family: 4, value });
        const block = cidrContaining(4, value, prefix);
        expect(parseCidrOrThrow(formatCidr(block))).toEqual(block);
      }),
      { numRuns: 2000 },
    );
  });

  /** IPv6 values with many zero and 0xffff groups, where compression and mixed notation kick in. */
  const ipv6Arb = fc
    .array(fc.oneof(fc.constant(0), fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff })), {
      minLength: 8,
      maxLength: 8,
    })
    .map((words) => words.reduce((acc, w) => (acc << 16n) | BigInt(w), 0n));

  it('IPv6: parse(format(x)) = x, and the text is canonical', () => {
    fc.assert(
      fc.property(ipv6Arb, fc.integer({ min: 0, max: 128 }), (value, prefix) => {
        const text = formatIp(6, value);
        expect(parseIpOrThrow(text)).toEqual({ family: 6, value });
        expect(text).toBe(text.toLowerCase());
        expect(text).not.toMatch(/(^|:)0[0-9a-f]/);
        expect(text).not.toContain(':::');
        const block = cidrContaining(6, value, prefix);
        expect(parseCidrOrThrow(formatCidr(block))).toEqual(block);
      }),
      { numRuns: 3000 },
    );
  });

  it('IPv6: every textual variant of a value parses to that value', () => {
    const variant = fc.record({
      upper: fc.boolean(),
      padded: fc.boolean(),
      dotted: fc.boolean(),
      runStart: fc.integer({ min: 0, max: 7 }),
    });
    fc.assert(
      fc.property(ipv6Arb, variant, (value, { upper, padded, dotted, runStart }) => {
        const words = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
        let groups = words.map((w) => w.toString(16).padStart(padded ? 4 : 1, '0'));
        if (dotted) groups = [...groups.slice(0, 6), formatIp(4, value & 0xffffffffn)];
        // compress the zero run starting at runStart, if any (not necessarily the longest one)
        let runEnd = runStart;
        while (runEnd < groups.length && /^0+$/.test(groups[runEnd])) runEnd++;
        let text: string;
        if (runEnd > runStart) {
          text = `${groups.slice(0, runStart).join(':')}::${groups.slice(runEnd).join(':')}`;
        } else {
          text = groups.join(':');
        }
        if (upper) text = text.toUpperCase();
        expect(parseIp(text)).toEqual({ ok: true, address: { family: 6, value } });
      }),
      { numRuns: 3000 },
    );
  });
});
