import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AllocationStrategy,
  ALLOCATION_STRATEGIES,
  FreeBlockSet,
  buddyChain,
  buddyOf,
  carve,
  childrenOf,
  chooseBlock,
  findContaining,
  initialFreeBlocks,
  isBetterSource,
  mergeFree,
  parentOf,
  reservationBlocks,
  reservationProblem,
  sameBlocks,
  splitBlock,
  totalSize,
} from './blocks';
import { type Cidr, type Family, cidrSize, compareCidrs, familyBits, formatCidr, parseCidrOrThrow, rangeToCidrs } from '@/lib/cidr';

const c = (text: string): Cidr => parseCidrOrThrow(text);
const cs = (...list: string[]): Cidr[] => list.map(c);
const texts = (blocks: readonly Cidr[]): string[] => blocks.map(formatCidr);
const show = (block: Cidr | undefined): string | undefined => (block === undefined ? undefined : formatCidr(block));

describe('tree navigation', () => {
  it.each([
    ['192.0.2.0/24', '192.0.3.0/24', '192.0.2.0/23'],
    ['192.0.2.128/25', '192.0.2.0/25', '192.0.2.0/24'],
    ['203.0.113.7/32', '203.0.113.6/32', '203.0.113.6/31'],
    ['128.0.0.0/1', '0.0.0.0/1', '0.0.0.0/0'],
    ['2001:db8::/32', '2001:db9::/32', '2001:db8::/31'],
    ['2001:db8::1/128', '2001:db8::/128', '2001:db8::/127'],
    ['2001:db8:0:1::/64', '2001:db8::/64', '2001:db8::/63'],
  ])('%s: buddy %s, parent %s', (block, buddy, parent) => {
    expect(show(buddyOf(c(block)))).toBe(buddy);
    expect(show(parentOf(c(block)))).toBe(parent);
    const halves = childrenOf(c(parent));
    expect(halves && texts(halves).sort()).toEqual([block, buddy].sort());
  });

  it('a /0 has neither buddy nor parent; a single address has no children', () => {
    expect(buddyOf(c('0.0.0.0/0'))).toBeUndefined();
    expect(parentOf(c('::/0'))).toBeUndefined();
    expect(childrenOf(c('192.0.2.1/32'))).toBeUndefined();
    expect(childrenOf(c('2001:db8::1/128'))).toBeUndefined();
    expect(texts(childrenOf(c('0.0.0.0/0')) ?? [])).toEqual(['0.0.0.0/1', '128.0.0.0/1']);
  });
});

describe('initialFreeBlocks and reservations', () => {
  it.each([
    ['192.0.2.0/24', 0n, 0n, ['192.0.2.0/24']],
    [
      '192.0.2.0/24',
      1n,
      0n,
      ['192.0.2.1/32', '192.0.2.2/31', '192.0.2.4/30', '192.0.2.8/29', '192.0.2.16/28', '192.0.2.32/27', '192.0.2.64/26', '192.0.2.128/25'],
    ],
    [
      '198.51.100.0/24',
      0n,
      1n,
      [
        '198.51.100.0/25',
        '198.51.100.128/26',
        '198.51.100.192/27',
        '198.51.100.224/28',
        '198.51.100.240/29',
        '198.51.100.248/30',
        '198.51.100.252/31',
        '198.51.100.254/32',
      ],
    ],
    ['203.0.113.0/24', 64n, 64n, ['203.0.113.64/26', '203.0.113.128/26']],
    [
      '203.0.113.0/24',
      10n,
      5n,
      [
        '203.0.113.10/31',
        '203.0.113.12/30',
        '203.0.113.16/28',
        '203.0.113.32/27',
        '203.0.113.64/26',
        '203.0.113.128/26',
        '203.0.113.192/27',
        '203.0.113.224/28',
        '203.0.113.240/29',
        '203.0.113.248/31',
        '203.0.113.250/32',
      ],
    ],
    ['192.0.2.0/24', 256n, 0n, []],
    ['192.0.2.0/24', 128n, 128n, []],
    ['2001:db8::/32', 0n, 0n, ['2001:db8::/32']],
    [
      '2001:db8::/120',
      2n,
      1n,
      [
        '2001:db8::2/127',
        '2001:db8::4/126',
        '2001:db8::8/125',
        '2001:db8::10/124',
        '2001:db8::20/123',
        '2001:db8::40/122',
        '2001:db8::80/122',
        '2001:db8::c0/123',
        '2001:db8::e0/124',
        '2001:db8::f0/125',
        '2001:db8::f8/126',
        '2001:db8::fc/127',
        '2001:db8::fe/128',
      ],
    ],
    ['2001:db8::1/128', 0n, 0n, ['2001:db8::1/128']],
    ['0.0.0.0/0', 0n, 0n, ['0.0.0.0/0']],
  ])('%s with %s leading, %s trailing', (pool, leading, trailing, expected) => {
    const blocks = initialFreeBlocks(c(pool), leading, trailing);
    expect(texts(blocks)).toEqual(expected);
    expect(totalSize(blocks)).toBe(cidrSize(c(pool)) - leading - trailing);
  });

  it('reservations must fit', () => {
    const pool = c('192.0.2.0/24');
    expect(reservationProblem(pool, 200n, 56n)).toBeUndefined();
    expect(reservationProblem(pool, 200n, 57n)).toBe('reservations (200 leading + 57 trailing) exceed the 256 addresses of 192.0.2.0/24');
    expect(reservationProblem(pool, -1n, 0n)).toBe('reservations cannot be negative');
    expect(() => initialFreeBlocks(pool, 257n, 0n)).toThrow(RangeError);
    expect(() => initialFreeBlocks(pool, 0n, -1n)).toThrow(RangeError);
    expect(reservationProblem(c('2001:db8::/32'), 1n << 95n, 1n << 95n)).toBeUndefined();
  });

  it('reservationBlocks covers exactly what initialFreeBlocks leaves out', () => {
    const pool = c('203.0.113.0/24');
    const { leading, trailing } = reservationBlocks(pool, 10n, 5n);
    expect(texts(leading)).toEqual(['203.0.113.0/29', '203.0.113.8/31']);
    expect(texts(trailing)).toEqual(['203.0.113.251/32', '203.0.113.252/30']);
    const all = [...leading, ...initialFreeBlocks(pool, 10n, 5n), ...trailing].sort(compareCidrs);
    expect(totalSize(all)).toBe(256n);
    expect(texts(reservationBlocks(pool, 0n, 0n).leading)).toEqual([]);
  });

  // A pool at either end of the address space without reservations: the empty reserved ranges
  // stay inside it (a range stepping outside would be a RangeError, a 500 on network create).
  it.each(['0.0.0.0/0', '0.0.0.0/32', '255.255.255.255/32', '255.255.255.0/24', '::/0', '::/128', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128'])(
    'reservationBlocks of %s without reservations is empty on both ends',
    (text) => {
      expect(reservationBlocks(c(text), 0n, 0n)).toEqual({ leading: [], trailing: [] });
      expect(texts(initialFreeBlocks(c(text), 0n, 0n))).toEqual([text]);
    },
  );

  it('reservations at the ends of the address space', () => {
    expect(texts(reservationBlocks(c('0.0.0.0/30'), 1n, 1n).leading)).toEqual(['0.0.0.0/32']);
    expect(texts(reservationBlocks(c('255.255.255.252/30'), 1n, 1n).trailing)).toEqual(['255.255.255.255/32']);
  });
});

describe('chooseBlock', () => {
  // Free: a /29, a /27, a /26 and a /28 (the rest of 192.0.2.0/24 allocated).
  const free = cs('192.0.2.8/29', '192.0.2.32/27', '192.0.2.64/26', '192.0.2.128/28');

  it.each([
    [32, 'FirstFit', '192.0.2.8/29', '192.0.2.8/32', ['192.0.2.9/32', '192.0.2.10/31', '192.0.2.12/30']],
    [32, 'BestFit', '192.0.2.8/29', '192.0.2.8/32', ['192.0.2.9/32', '192.0.2.10/31', '192.0.2.12/30']],
    [29, 'FirstFit', '192.0.2.8/29', '192.0.2.8/29', []],
    [28, 'FirstFit', '192.0.2.32/27', '192.0.2.32/28', ['192.0.2.48/28']],
    [28, 'BestFit', '192.0.2.128/28', '192.0.2.128/28', []],
    [27, 'FirstFit', '192.0.2.32/27', '192.0.2.32/27', []],
    [27, 'BestFit', '192.0.2.32/27', '192.0.2.32/27', []],
    [26, 'FirstFit', '192.0.2.64/26', '192.0.2.64/26', []],
    [26, 'BestFit', '192.0.2.64/26', '192.0.2.64/26', []],
  ] as const)('/%i %s takes %s → %s', (prefix, strategy, from, allocated, remainder) => {
    // input order must not matter
    for (const order of [free, [...free].reverse()]) {
      const choice = chooseBlock(order, prefix, strategy);
      expect(show(choice?.from)).toBe(from);
      expect(show(choice?.allocated)).toBe(allocated);
      expect(texts(choice?.remainder ?? [])).toEqual(remainder);
    }
  });

  it('BestFit prefers the smallest fitting block, lowest address among equals', () => {
    const set = cs('2001:db8::/120', '2001:db8::200/124', '2001:db8::300/126', '2001:db8::400/126', '2001:db8::500/124');
    expect(show(chooseBlock(set, 128, 'BestFit')?.allocated)).toBe('2001:db8::300/128');
    expect(show(chooseBlock(set, 125, 'BestFit')?.from)).toBe('2001:db8::200/124');
    expect(show(chooseBlock(set, 128, 'FirstFit')?.allocated)).toBe('2001:db8::/128');
    expect(isBetterSource(c('2001:db8::400/126'), c('2001:db8::200/124'), 'BestFit')).toBe(true);
    expect(isBetterSource(c('2001:db8::400/126'), c('2001:db8::200/124'), 'FirstFit')).toBe(false);
  });

  it('reports exhaustion when nothing is large enough', () => {
    expect(chooseBlock(free, 25, 'FirstFit')).toBeUndefined();
    expect(chooseBlock(free, 25, 'BestFit')).toBeUndefined();
    expect(chooseBlock([], 32, 'FirstFit')).toBeUndefined();
  });

  it('rejects prefix lengths outside the family and mixed families', () => {
    expect(() => chooseBlock(free, 33, 'FirstFit')).toThrow(RangeError);
    expect(() => chooseBlock(cs('192.0.2.0/24', '2001:db8::/32'), 32, 'FirstFit')).toThrow(RangeError);
  });
});

describe('splitBlock / carve', () => {
  it.each([
    ['192.0.2.0/24', '192.0.2.0/24', []],
    ['192.0.2.0/24', '192.0.2.0/25', ['192.0.2.128/25']],
    ['192.0.2.0/24', '192.0.2.64/26', ['192.0.2.0/26', '192.0.2.128/25']],
    [
      '192.0.2.0/24',
      '192.0.2.255/32',
      ['192.0.2.0/25', '192.0.2.128/26', '192.0.2.192/27', '192.0.2.224/28', '192.0.2.240/29', '192.0.2.248/30', '192.0.2.252/31', '192.0.2.254/32'],
    ],
    [
      '198.51.100.0/24',
      '198.51.100.77/32',
      [
        '198.51.100.0/26',
        '198.51.100.64/29',
        '198.51.100.72/30',
        '198.51.100.76/32',
        '198.51.100.78/31',
        '198.51.100.80/28',
        '198.51.100.96/27',
        '198.51.100.128/25',
      ],
    ],
    ['2001:db8::/32', '2001:db8:8000::/33', ['2001:db8::/33']],
    ['2001:db8::/126', '2001:db8::2/128', ['2001:db8::/127', '2001:db8::3/128']],
  ])('%s minus %s', (block, taken, expected) => {
    expect(texts(splitBlock(c(block), c(taken)))).toEqual(expected);
    expect(texts(carve(c(block), c(taken)))).toEqual(expected);
  });

  it('leaves exactly taken.prefix − block.prefix blocks that fill the rest', () => {
    const rest = splitBlock(c('2001:db8::/32'), c('2001:db8:1234:5678::/64'));
    expect(rest).toHaveLength(32);
    expect(totalSize(rest) + cidrSize(c('2001:db8::/64'))).toBe(cidrSize(c('2001:db8::/32')));
    expect([...rest].sort(compareCidrs)).toEqual(rest);
  });

  it('refuses a block that is not inside', () => {
    expect(() => splitBlock(c('192.0.2.0/25'), c('192.0.2.128/26'))).toThrow(RangeError);
    expect(() => splitBlock(c('192.0.2.0/25'), c('192.0.2.0/24'))).toThrow(RangeError);
    expect(() => carve(c('::ffff:192.0.2.0/120'), c('192.0.2.0/32'))).toThrow(RangeError);
  });

  it('findContaining returns the one free block holding the target', () => {
    const free = cs('192.0.2.8/29', '192.0.2.32/27');
    expect(show(findContaining(free, c('192.0.2.40/29')))).toBe('192.0.2.32/27');
    expect(show(findContaining(free, c('192.0.2.32/27')))).toBe('192.0.2.32/27');
    expect(findContaining(free, c('192.0.2.0/27'))).toBeUndefined();
    expect(findContaining(free, c('192.0.2.16/32'))).toBeUndefined();
  });
});

describe('mergeFree', () => {
  const pool = c('192.0.2.0/24');
  const lookup = (free: readonly Cidr[]) => (block: Cidr) => free.some((f) => formatCidr(f) === formatCidr(block));

  it.each([
    // released, free set, removed, inserted
    ['192.0.2.0/25', ['192.0.2.128/25'], ['192.0.2.128/25'], '192.0.2.0/24'],
    ['192.0.2.0/26', ['192.0.2.64/26', '192.0.2.128/25'], ['192.0.2.64/26', '192.0.2.128/25'], '192.0.2.0/24'],
    ['192.0.2.0/26', ['192.0.2.64/27', '192.0.2.128/25'], [], '192.0.2.0/26'],
    ['192.0.2.0/26', ['192.0.2.128/25'], [], '192.0.2.0/26'],
    ['192.0.2.5/32', ['192.0.2.4/32', '192.0.2.6/31', '192.0.2.8/29'], ['192.0.2.4/32', '192.0.2.6/31'], '192.0.2.4/30'],
    ['192.0.2.0/24', [], [], '192.0.2.0/24'],
  ])('releasing %s into %j', (released, free, removed, inserted) => {
    const plan = mergeFree(c(released), lookup(cs(...free)), pool);
    expect(texts(plan.remove)).toEqual(removed);
    expect(formatCidr(plan.insert)).toBe(inserted);
  });

  it('never merges above the pool, and asks only about the buddy chain', () => {
    const asked: string[] = [];
    const plan = mergeFree(c('192.0.2.128/25'), (b) => (asked.push(formatCidr(b)), true), pool);
    expect(formatCidr(plan.insert)).toBe('192.0.2.0/24');
    expect(asked).toEqual(['192.0.2.0/25']);
    expect(texts(buddyChain(c('192.0.2.5/32'), c('192.0.2.0/29')))).toEqual(['192.0.2.4/32', '192.0.2.6/31', '192.0.2.0/30']);
    expect(buddyChain(pool, pool)).toEqual([]);
    expect(texts(buddyChain(c('0.0.0.0/1'), c('0.0.0.0/0')))).toEqual(['128.0.0.0/1']);
    expect(() => buddyChain(c('198.51.100.0/32'), pool)).toThrow(RangeError);
  });
});

describe('FreeBlockSet: edge cases', () => {
  it('IPv4 /0: one address out, everything back', () => {
    const set = new FreeBlockSet(c('0.0.0.0/0'));
    expect(show(set.allocate(32, 'FirstFit'))).toBe('0.0.0.0/32');
    expect(set.blocks()).toHaveLength(32);
    expect(set.freeSize()).toBe((1n << 32n) - 1n);
    expect(show(set.allocate(1, 'BestFit'))).toBe('128.0.0.0/1');
    expect(show(set.allocate(1, 'FirstFit'))).toBeUndefined();
    set.release(c('0.0.0.0/32'));
    set.release(c('128.0.0.0/1'));
    expect(texts(set.blocks())).toEqual(['0.0.0.0/0']);
  });

  it('IPv6 /128 pool and /128 allocations in a /0', () => {
    const single = new FreeBlockSet(c('2001:db8::1/128'));
    expect(show(single.allocate(128, 'BestFit'))).toBe('2001:db8::1/128');
    expect(single.blocks()).toEqual([]);
    expect(single.allocate(128, 'FirstFit')).toBeUndefined();
    expect(single.allocatePinned(c('2001:db8::1/128'))).toBe(false);
    single.release(c('2001:db8::1/128'));
    expect(texts(single.blocks())).toEqual(['2001:db8::1/128']);

    const all = new FreeBlockSet(c('::/0'));
    expect(all.allocatePinned(c('2001:db8::1/128'))).toBe(true);
    expect(all.blocks()).toHaveLength(128);
    expect(all.freeSize()).toBe((1n << 128n) - 1n);
    expect(show(all.allocate(128, 'FirstFit'))).toBe('::/128');
    expect(show(all.allocate(128, 'BestFit'))).toBe('::1/128');
    expect(show(all.allocate(128, 'BestFit'))).toBe('2001:db8::/128');
  });

  it('allocating the whole pool, then exhaustion, then release restores one block', () => {
    for (const strategy of ALLOCATION_STRATEGIES) {
      const set = new FreeBlockSet(c('198.51.100.0/24'));
      expect(show(set.allocate(24, strategy))).toBe('198.51.100.0/24');
      expect(set.blocks()).toEqual([]);
      expect(set.allocate(32, strategy)).toBeUndefined();
      set.release(c('198.51.100.0/24'));
      expect(texts(set.blocks())).toEqual(['198.51.100.0/24']);
      expect(set.allocate(23, strategy)).toBeUndefined();
    }
  });

  it('fills a pool address by address, then releasing in any order restores it', () => {
    const set = new FreeBlockSet(c('2001:db8::/120'));
    const taken: Cidr[] = [];
    for (let i = 0; i < 256; i++) taken.push(set.allocate(128, i % 2 === 0 ? 'FirstFit' : 'BestFit') as Cidr);
    expect(new Set(texts(taken)).size).toBe(256);
    expect(set.allocate(128, 'FirstFit')).toBeUndefined();
    const order = [...taken].sort((a, b) => Number(((a.network * 7919n) % 257n) - ((b.network * 7919n) % 257n)));
    for (const block of order) set.release(block);
    expect(texts(set.blocks())).toEqual(['2001:db8::/120']);
  });

  it('respects leading and trailing reservations', () => {
    const set = new FreeBlockSet(c('203.0.113.0/24'), 10n, 5n);
    expect(set.allocatePinned(c('203.0.113.0/30'))).toBe(false);
    expect(set.allocatePinned(c('203.0.113.248/29'))).toBe(false);
    expect(set.allocatePinned(c('203.0.113.240/29'))).toBe(true);
    expect(show(set.allocate(32, 'FirstFit'))).toBe('203.0.113.10/32');
    // BestFit: the smallest free blocks are the /32s at .11 and .250; the lower one wins
    expect(show(set.allocate(32, 'BestFit'))).toBe('203.0.113.11/32');
    let count = 2;
    while (set.allocate(32, 'FirstFit') !== undefined) count++;
    expect(count).toBe(256 - 10 - 5 - 8);
    set.release(c('203.0.113.240/29'));
    expect(texts(set.blocks())).toEqual(['203.0.113.240/29']);
  });

  it('refuses to release what is already free or outside the pool', () => {
    const set = new FreeBlockSet(c('192.0.2.0/24'));
    set.allocate(26, 'FirstFit');
    expect(() => set.release(c('192.0.2.64/26'))).toThrow(RangeError);
    expect(() => set.release(c('192.0.2.0/25'))).toThrow(RangeError);
    expect(() => set.release(c('198.51.100.0/26'))).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------
// Brute-force reference: a bitmap of occupied addresses, block definitions applied literally.
// ---------------------------------------------------------------------------------------------

interface Slot {
  /** Offset of the first address from the pool's network address. */
  readonly offset: number;
  /** log2 of the block size. */
  readonly hostBits: number;
}

class BruteForcePool {
  readonly hostBits: number;
  readonly size: number;
  private readonly occupied: Uint8Array;
  private sums: Int32Array | undefined;
  private occupiedCount: number;

  constructor(
    readonly pool: Cidr,
    leading: number,
    trailing: number,
  ) {
    this.hostBits = familyBits(pool.family) - pool.prefix;
    this.size = 2 ** this.hostBits;
    this.occupied = new Uint8Array(this.size);
    this.occupied.fill(1, 0, leading);
    this.occupied.fill(1, this.size - trailing, this.size);
    this.occupiedCount = leading + trailing;
  }

  /** Whether every address of [offset, offset + length) is unoccupied. */
  isFree(offset: number, length: number): boolean {
    if (this.sums === undefined) {
      this.sums = new Int32Array(this.size + 1);
      for (let i = 0; i < this.size; i++) this.sums[i + 1] = this.sums[i] + this.occupied[i];
    }
    return this.sums[offset + length] === this.sums[offset];
  }

  freeCount(): number {
    return this.size - this.occupiedCount;
  }

  /** Offset of the k-th free address (k < freeCount()). */
  nthFree(k: number): number {
    for (let i = 0; i < this.size; i++) if (this.occupied[i] === 0 && k-- === 0) return i;
    throw new Error('no such free address');
  }

  /** Lowest aligned block of 2^hostBits addresses that is entirely free. */
  firstFit(hostBits: number): Slot | undefined {
    const length = 2 ** hostBits;
    for (let offset = 0; offset + length <= this.size; offset += length) {
      if (this.isFree(offset, length)) return { offset, hostBits };
    }
    return undefined;
  }

  /** Every aligned block inside the pool that is entirely free while its parent (if in the pool) is not. */
  maximalFreeBlocks(): Slot[] {
    const found: Slot[] = [];
    for (let hostBits = this.hostBits; hostBits >= 0; hostBits--) {
      const length = 2 ** hostBits;
      for (let offset = 0; offset < this.size; offset += length) {
        if (!this.isFree(offset, length)) continue;
        const parentOffset = offset - (offset % (2 * length));
        if (hostBits === this.hostBits || !this.isFree(parentOffset, 2 * length)) found.push({ offset, hostBits });
      }
    }
    return found;
  }

  /** Among the maximal free blocks that fit, the smallest; the lowest address among equals. */
  bestFit(hostBits: number): Slot | undefined {
    let best: Slot | undefined;
    for (const slot of this.maximalFreeBlocks()) {
      if (slot.hostBits < hostBits) continue;
      if (best === undefined || slot.hostBits < best.hostBits || (slot.hostBits === best.hostBits && slot.offset < best.offset)) {
        best = slot;
      }
    }
    return best === undefined ? undefined : { offset: best.offset, hostBits };
  }

  /** Marks a block allocated; an already occupied address means two allocations overlap. */
  occupy(slot: Slot): void {
    const length = 2 ** slot.hostBits;
    for (let i = slot.offset; i < slot.offset + length; i++) {
      if (this.occupied[i] === 1) throw new Error(`overlap at offset ${i} allocating ${this.describe(slot)}`);
      this.occupied[i] = 1;
    }
    this.occupiedCount += length;
    this.sums = undefined;
  }

  vacate(slot: Slot): void {
    const length = 2 ** slot.hostBits;
    for (let i = slot.offset; i < slot.offset + length; i++) {
      if (this.occupied[i] === 0) throw new Error(`releasing free offset ${i} in ${this.describe(slot)}`);
      this.occupied[i] = 0;
    }
    this.occupiedCount -= length;
    this.sums = undefined;
  }

  toCidr(slot: Slot): Cidr {
    return {
      family: this.pool.family,
      network: this.pool.network + BigInt(slot.offset),
      prefix: familyBits(this.pool.family) - slot.hostBits,
    };
  }

  toSlot(block: Cidr): Slot {
    return { offset: Number(block.network - this.pool.network), hostBits: familyBits(block.family) - block.prefix };
  }

  describe(slot: Slot | undefined): string {
    return slot === undefined ? 'none' : formatCidr(this.toCidr(slot));
  }
}

/** The free set compared with the brute-force canonical decomposition, or why they differ. */
function freeSetProblem(set: FreeBlockSet, brute: BruteForcePool): string | undefined {
  const ours = set.blocks().map(brute.toSlot, brute);
  const reference = brute.maximalFreeBlocks().sort((a, b) => a.offset - b.offset);
  const same = ours.length === reference.length && ours.every((slot, i) => slot.offset === reference[i].offset && slot.hostBits === reference[i].hostBits);
  if (!same) {
    const list = (slots: Slot[]) => slots.map((slot) => brute.describe(slot)).join(' ');
    return `free set [${list(ours)}] differs from the brute-force [${list(reference)}]`;
  }
  if (set.freeSize() !== BigInt(brute.freeCount())) return `free size ${set.freeSize()} ≠ ${brute.freeCount()}`;
  return undefined;
}

describe('exhaustive: every occupancy of a /28', () => {
  // For each of the 2^16 bitmaps of 203.0.113.240/28: the canonical free set is rangeToCidrs of each
  // free run; chooseBlock agrees with brute-force FirstFit/BestFit at every size; releasing any
  // entirely occupied aligned block and pinning any aligned block lead to the brute-force canonical
  // set of the new bitmap. A set of the 31 aligned blocks of a /28 is compared as a 31-bit mask, and
  // plain comparisons (not `expect`) inside the loops keep this fast.
  const pool = c('203.0.113.240/28');
  const SIZE = 16;
  const slots: Slot[] = [];
  for (let hostBits = 4; hostBits >= 0; hostBits--) {
    for (let offset = 0; offset < SIZE; offset += 2 ** hostBits) slots.push({ offset, hostBits });
  }
  /** Addresses of a slot as a 16-bit mask. */
  const addressMask = (slot: Slot) => ((1 << (2 ** slot.hostBits)) - 1) << slot.offset;
  /** Position of a slot in `slots`: 0 for the /28, 1–2 for the /29s, …, 15–30 for the /32s. */
  const slotId = (slot: Slot) => 2 ** (4 - slot.hostBits) - 1 + (slot.offset >> slot.hostBits);
  const toSlot = (block: Cidr): Slot => ({ offset: Number(block.network - pool.network), hostBits: 32 - block.prefix });
  const toCidr = (slot: Slot): Cidr => ({ family: 4, network: pool.network + BigInt(slot.offset), prefix: 32 - slot.hostBits });
  const signature = (blocks: Iterable<Cidr>) => {
    let bits = 0;
    for (const block of blocks) bits |= 1 << slotId(toSlot(block));
    return bits;
  };

  /** Brute force, straight from the definition: entirely free slots whose parent is not. */
  function maximalSlots(occupied: number): Slot[] {
    return slots.filter((slot) => {
      if ((occupied & addressMask(slot)) !== 0) return false;
      if (slot.hostBits === 4) return true;
      const parent = { offset: slot.offset & ~(2 ** (slot.hostBits + 1) - 1), hostBits: slot.hostBits + 1 };
      return (occupied & addressMask(parent)) !== 0;
    });
  }

  /** Our canonical set of a bitmap: rangeToCidrs over each maximal run of free addresses. */
  function canonical(occupied: number): Cidr[] {
    const blocks: Cidr[] = [];
    for (let i = 0; i < SIZE;) {
      if ((occupied >> i) & 1) {
        i++;
        continue;
      }
      let j = i;
      while (j < SIZE && !((occupied >> j) & 1)) j++;
      blocks.push(...rangeToCidrs(4, pool.network + BigInt(i), pool.network + BigInt(j - 1)));
      i = j;
    }
    return blocks;
  }

  it('canonical form, strategies, release merging and pinned carving', () => {
    const maximalSignature = new Int32Array(1 << SIZE);
    const maximalBySize: Slot[][] = [];
    for (let occupied = 0; occupied < 1 << SIZE; occupied++) {
      const found = maximalSlots(occupied);
      for (const slot of found) maximalSignature[occupied] |= 1 << slotId(slot);
      // smallest first, lowest address among equals: the brute-force BestFit order
      maximalBySize.push(found.sort((a, b) => a.hostBits - b.hostBits || a.offset - b.offset));
    }

    const problems: string[] = [];
    const count = { choices: 0, releases: 0, pins: 0 };
    for (let occupied = 0; occupied < 1 << SIZE && problems.length < 5; occupied++) {
      const free = canonical(occupied);
      const freeSignature = signature(free);
      const isFree = (block: Cidr) => (freeSignature & (1 << slotId(toSlot(block)))) !== 0;
      const where = `bitmap ${occupied.toString(2).padStart(SIZE, '0')}`;
      if (freeSignature !== maximalSignature[occupied] || free.length !== maximalBySize[occupied].length) {
        problems.push(`${where}: canonical ≠ maximal`);
      }

      for (let hostBits = 0; hostBits <= 4; hostBits++) {
        const firstFit = slots.find((s) => s.hostBits === hostBits && (occupied & addressMask(s)) === 0);
        const bestSource = maximalBySize[occupied].find((slot) => slot.hostBits >= hostBits);
        for (const [strategy, expected] of [
          ['FirstFit', firstFit?.offset],
          ['BestFit', bestSource?.offset],
        ] as const) {
          count.choices++;
          const choice = chooseBlock(free, 32 - hostBits, strategy);
          const got = choice === undefined ? undefined : toSlot(choice.allocated).offset;
          if (got !== expected) {
            problems.push(`${where}: ${strategy} /${32 - hostBits} chose ${got}, expected ${expected}`);
          } else if (choice !== undefined) {
            const after = signature([...free.filter((b) => b !== choice.from), ...choice.remainder]);
            if (after !== maximalSignature[occupied | addressMask({ offset: got as number, hostBits })]) {
              problems.push(`${where}: ${strategy} /${32 - hostBits} remainder not canonical`);
            }
          }
        }
      }

      for (const slot of slots) {
        const mask = addressMask(slot);
        const block = toCidr(slot);
        if ((occupied & mask) === mask) {
          count.releases++;
          const plan = mergeFree(block, isFree, pool);
          const removed = signature(plan.remove);
          if ((removed & freeSignature) !== removed) problems.push(`${where}: release ${formatCidr(block)} removes a non-free block`);
          if (((freeSignature & ~removed) | (1 << slotId(toSlot(plan.insert)))) !== maximalSignature[occupied & ~mask]) {
            problems.push(`${where}: release ${formatCidr(block)} not canonical`);
          }
        }
        count.pins++;
        const containing = findContaining(free, block);
        if ((containing !== undefined) !== ((occupied & mask) === 0)) {
          problems.push(`${where}: pinned ${formatCidr(block)} found ${show(containing)}`);
        } else if (containing !== undefined) {
          const after = signature([...free.filter((b) => b !== containing), ...carve(containing, block)]);
          if (after !== maximalSignature[occupied | mask]) problems.push(`${where}: pinned ${formatCidr(block)} not canonical`);
        }
      }
    }
    expect(problems).toEqual([]);
    // releases: a slot of 2^k addresses is entirely occupied in 2^(16 − 2^k) bitmaps, summed over slots
    expect(count).toEqual({ choices: 65536 * 10, releases: 672257, pins: 65536 * 31 });
  });
});

// ---------------------------------------------------------------------------------------------
// Random gap search against the brute-force reference
// ---------------------------------------------------------------------------------------------

type Operation =
  | { kind: 'allocate'; hostBits: number; strategy: AllocationStrategy }
  | { kind: 'release'; pick: number }
  | { kind: 'pinned'; hostBits: number; pick: number; nearFree: boolean };

interface Scenario {
  pool: Cidr;
  leading: number;
  trailing: number;
  operations: Operation[];
}

/**
 * Random pools: IPv4 /24../28 inside the three documentation /24s, IPv4 /20../23 inside
 * 198.18.0.0/15 (RFC 2544 benchmarking space: no documentation range is larger than a /24), IPv6
 * /116../124 inside 2001:db8::/32. Small enough that the bitmap model is exact and fast.
 */
const poolArb: fc.Arbitrary<Cidr> = fc.oneof(
  fc
    .tuple(fc.constantFrom('192.0.2.0', '198.51.100.0', '203.0.113.0'), fc.integer({ min: 24, max: 28 }), fc.nat(255))
    .map(([base, prefix, offset]) => blockAt(c(`${base}/24`), prefix, BigInt(offset))),
  fc.tuple(fc.integer({ min: 20, max: 23 }), fc.nat(0x1ffff)).map(([prefix, offset]) => blockAt(c('198.18.0.0/15'), prefix, BigInt(offset))),
  fc
    .tuple(fc.integer({ min: 116, max: 124 }), fc.bigInt({ min: 0n, max: (1n << 96n) - 1n }))
    .map(([prefix, offset]) => blockAt(c('2001:db8::/32'), prefix, offset)),
);

/** The /prefix block of `within` containing the address `offset` addresses in. */
function blockAt(within: Cidr, prefix: number, offset: bigint): Cidr {
  const hostBits = BigInt(familyBits(within.family) - prefix);
  return { family: within.family, network: within.network + ((offset >> hostBits) << hostBits), prefix };
}

const hostBitsArb = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 12 }));
const operationArb: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('allocate' as const), hostBits: hostBitsArb, strategy: fc.constantFrom(...ALLOCATION_STRATEGIES) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('pinned' as const), hostBits: hostBitsArb, pick: fc.nat(), nearFree: fc.boolean() }) },
);
const reservationArb = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 2048 }));

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .tuple(poolArb, reservationArb, reservationArb, fc.array(operationArb, { minLength: 10, maxLength: 200, size: 'max' }))
  .map(([pool, leading, trailing, operations]) => {
    const half = 2 ** (familyBits(pool.family) - pool.prefix - 1);
    return { pool, leading: Math.min(leading, half), trailing: Math.min(trailing, half), operations };
  });

/** What a batch of scenarios exercised, so that a test cannot pass by never reaching a case. */
interface Coverage {
  allocated: number;
  exhausted: number;
  bestFitDiffers: number;
  pinnedBound: number;
  pinnedRejected: number;
  released: number;
  merged: number;
}

const newCoverage = (): Coverage => ({
  allocated: 0,
  exhausted: 0,
  bestFitDiffers: 0,
  pinnedBound: 0,
  pinnedRejected: 0,
  released: 0,
  merged: 0,
});

/** Runs a scenario; returns the first disagreement with the brute-force model, or undefined. */
function runScenario({ pool, leading, trailing, operations }: Scenario, coverage = newCoverage()): string | undefined {
  const set = new FreeBlockSet(pool, BigInt(leading), BigInt(trailing));
  const brute = new BruteForcePool(pool, leading, trailing);
  const allocated: Cidr[] = [];
  const log: string[] = [`pool ${formatCidr(pool)} leading ${leading} trailing ${trailing}`];
  const fail = (message: string) => `${log.join('\n')}\n→ ${message}`;

  let problem = freeSetProblem(set, brute);
  if (problem) return fail(problem);

  for (const operation of operations) {
    if (operation.kind === 'allocate') {
      const hostBits = Math.min(operation.hostBits, brute.hostBits);
      const prefix = familyBits(pool.family) - hostBits;
      const expected = operation.strategy === 'FirstFit' ? brute.firstFit(hostBits) : brute.bestFit(hostBits);
      const other = operation.strategy === 'FirstFit' ? brute.bestFit(hostBits) : brute.firstFit(hostBits);
      if (expected && other && expected.offset !== other.offset) coverage.bestFitDiffers++;
      const got = set.allocate(prefix, operation.strategy);
      if (got) coverage.allocated++;
      else coverage.exhausted++;
      log.push(`allocate /${prefix} ${operation.strategy} → ${show(got) ?? 'exhausted'}`);
      if (show(got) !== (expected && brute.describe(expected))) {
        return fail(`expected ${brute.describe(expected)}`);
      }
      if (got !== undefined) {
        brute.occupy(brute.toSlot(got));
        allocated.push(got);
      }
    } else if (operation.kind === 'release') {
      if (allocated.length === 0) continue;
      const [block] = allocated.splice(operation.pick % allocated.length, 1);
      log.push(`release ${formatCidr(block)}`);
      const blocksBefore = set.blocks().length;
      set.release(block);
      coverage.released++;
      if (set.blocks().length <= blocksBefore) coverage.merged++;
      brute.vacate(brute.toSlot(block));
    } else {
      const hostBits = Math.min(operation.hostBits, brute.hostBits);
      const freeCount = brute.freeCount();
      // Half of the pinned requests aim at a free address so that they often succeed.
      const address = operation.nearFree && freeCount > 0 ? brute.nthFree(operation.pick % freeCount) : operation.pick % brute.size;
      const slot: Slot = { offset: address - (address % 2 ** hostBits), hostBits };
      const target = brute.toCidr(slot);
      const expected = brute.isFree(slot.offset, 2 ** hostBits);
      const got = set.allocatePinned(target);
      log.push(`pinned ${formatCidr(target)} → ${got ? 'bound' : 'rejected'}`);
      if (got) coverage.pinnedBound++;
      else coverage.pinnedRejected++;
      if (got !== expected) return fail(`expected ${expected ? 'bound' : 'rejected'}`);
      if (got) {
        brute.occupy(slot);
        allocated.push(target);
      }
    }
    problem = freeSetProblem(set, brute);
    if (problem) return fail(problem);
  }

  // Releasing everything that is left, in the order of allocation, restores the initial blocks.
  for (const block of allocated) set.release(block);
  if (!sameBlocks(set.blocks(), initialFreeBlocks(pool, BigInt(leading), BigInt(trailing)))) {
    return fail(`after releasing everything: [${texts(set.blocks()).join(' ')}]`);
  }
  return undefined;
}

describe('gap search against a brute-force reference on random pools', () => {
  it('allocate / pinned / release sequences agree step by step', () => {
    const coverage = newCoverage();
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        expect(runScenario(scenario, coverage)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
    // Each kind of event must have happened many times for the agreement to mean anything.
    for (const [event, count] of Object.entries(coverage)) {
      expect(count, `${event} happened ${count} times`).toBeGreaterThan(500);
    }
  });

  it('a heavily fragmented IPv4 /20 and IPv6 /116 stay canonical', () => {
    for (const pool of [c('198.18.0.0/20'), c('2001:db8::/116')]) {
      // Fill with single addresses, free every other one, then allocate and release mixed sizes.
      const operations: Operation[] = [];
      for (let i = 0; i < 400; i++) operations.push({ kind: 'allocate', hostBits: 0, strategy: 'FirstFit' });
      for (let i = 0; i < 200; i++) operations.push({ kind: 'release', pick: i });
      for (let i = 0; i < 200; i++) {
        operations.push(
          { kind: 'allocate', hostBits: i % 7, strategy: i % 2 === 0 ? 'BestFit' : 'FirstFit' },
          { kind: 'pinned', hostBits: i % 3, pick: i * 7919, nearFree: true },
          { kind: 'release', pick: i * 104729 },
        );
      }
      expect(runScenario({ pool, leading: 3, trailing: 17, operations })).toBeUndefined();
    }
  });

  it('the brute-force model itself can tell a wrong choice apart', () => {
    // Guard against a vacuous comparison: a deliberately wrong free set must be reported.
    const pool = c('192.0.2.0/28');
    const set = new FreeBlockSet(pool);
    const brute = new BruteForcePool(pool, 0, 0);
    brute.occupy({ offset: 0, hostBits: 0 });
    expect(freeSetProblem(set, brute)).toMatch(/differs from the brute-force/);
    expect(brute.firstFit(1)).toEqual({ offset: 2, hostBits: 1 });
    expect(brute.bestFit(0)).toEqual({ offset: 1, hostBits: 0 });
    expect(() => brute.occupy({ offset: 0, hostBits: 2 })).toThrow(/overlap/);
  });
});

describe('families', () => {
  it.each([4, 6] as Family[])('IPv%i: allocation sizes are exact', (family) => {
    const pool = family === 4 ? c('192.0.2.0/24') : c('2001:db8::/32');
    const set = new FreeBlockSet(pool, 1n, 1n);
    const before = set.freeSize();
    const got = set.allocate(familyBits(family) - 4, 'BestFit') as Cidr;
    expect(before - set.freeSize()).toBe(16n);
    set.release(got);
    expect(set.freeSize()).toBe(before);
  });
});
