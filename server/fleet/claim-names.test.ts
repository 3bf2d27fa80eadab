import { describe, expect, it } from 'vitest';
import { resourceName } from '@/server/ipam/schemas';
import { machineClaimName } from './claim-names';

describe('machineClaimName', () => {
  it.each([
    ['web-1', 0, 'IPv4', 0, 'm-web-1-0-v4-0'],
    ['web-1', 3, 'IPv6', 3, 'm-web-1-3-v6-3'],
    ['a'.repeat(54), 0, 'IPv4', 0, `m-${'a'.repeat(54)}-0-v4-0`],
  ] as const)('%s, interface %i, %s, class %i → %s (the full form when it fits)', (machine, nic, family, n, expected) => {
    expect(machineClaimName(machine, nic, family, n)).toBe(expected);
  });

  // Cutting the full form at 63 characters would make every slot of a long-named machine one
  // claim (409 ClaimExists, or the same address twice): each slot keeps a name of its own.
  it('long machine names: every slot its own valid name, different machines different names', () => {
    const machines = ['a'.repeat(63), `${'a'.repeat(62)}b`, `${'a'.repeat(44)}-${'b'.repeat(18)}`, 'x'.repeat(56)];
    const names = new Set<string>();
    for (const machine of machines) {
      for (const nic of [0, 1, 2, 3]) {
        for (const family of ['IPv4', 'IPv6'] as const) {
          for (const n of [0, 1, 2, 3]) {
            const name = machineClaimName(machine, nic, family, n);
            expect(resourceName.safeParse(name).success, name).toBe(true);
            expect(machineClaimName(machine, nic, family, n)).toBe(name);
            names.add(name);
          }
        }
      }
    }
    expect(names.size).toBe(machines.length * 4 * 2 * 4);
  });
});
