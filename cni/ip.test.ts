/** cni/ip.ts answers as node:net's isIP does (the plugin's own copy, so the executable does not load node:net). */
import { isIP as nodeIsIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isIP } from './ip';

describe('isIP', () => {
  it.each([
    ['192.0.2.1', 4],
    ['0.0.0.0', 4],
    ['255.255.255.255', 4],
    ['256.0.0.1', 0],
    ['192.0.2.01', 0],
    ['192.0.2', 0],
    ['192.0.2.1/24', 0],
    ['2001:db8::1', 6],
    ['::', 6],
    ['::1', 6],
    ['::ffff:192.0.2.1', 6],
    ['fe80::1%eth0', 6],
    ['2001:db8::1::2', 0],
    ['2001:db8:0:0:0:0:0:0:1', 0],
    ['2001:db8::g', 0],
    ['', 0],
    [' 192.0.2.1', 0],
  ] as const)('%j → %d', (s, family) => {
    expect(isIP(s)).toBe(family);
    expect(nodeIsIP(s)).toBe(family);
  });

  it('agrees with node:net on generated addresses and near-misses', () => {
    const hex = fc.stringMatching(/^[0-9a-fA-F]{0,5}$/);
    const v6 = fc.array(hex, { minLength: 1, maxLength: 9 }).map((parts) => parts.join(':'));
    const v4 = fc.array(fc.oneof(fc.nat(300).map(String), fc.stringMatching(/^0\d{1,2}$/)), { minLength: 3, maxLength: 5 }).map((p) => p.join('.'));
    const mixed = fc.tuple(v6, v4).map(([a, b]) => `${a}:${b}`);
    fc.assert(
      fc.property(fc.oneof(v4, v6, mixed, fc.string()), (s) => {
        expect(isIP(s)).toBe(nodeIsIP(s));
      }),
      { numRuns: 20_000 },
    );
  });
});
