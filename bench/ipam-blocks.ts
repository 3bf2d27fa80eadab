/**
 * Micro-benchmark of the pure IPAM address math (lib/cidr.ts, server/ipam/blocks.ts).
 *
 *   npx tsx bench/ipam-blocks.ts
 *
 * Prints the cost of each building block the database allocator composes, and shows that the
 * per-allocation and per-release work (split, buddy chain, merge plan) does not depend on how
 * fragmented the pool is: only the *lookup* of the free block does, which is the database index's
 * job. `chooseBlock` over an in-memory array is linear and is timed here to show why.
 * Figures only; nothing is asserted.
 */
import { type AllocationStrategy, FreeBlockSet, buddyChain, chooseBlock, mergeFree, splitBlock } from '../server/ipam/blocks';
import { type Cidr, formatCidr, parseCidrOrThrow, rangeToCidrs } from '../lib/cidr';

const c = (text: string): Cidr => parseCidrOrThrow(text);

/** Runs `fn` repeatedly for about `ms` milliseconds after a warm-up; returns nanoseconds per call. */
function measure(fn: () => unknown, ms = 300): number {
  const deadline = (ms: number) => process.hrtime.bigint() + BigInt(ms) * 1_000_000n;
  for (let end = deadline(50); process.hrtime.bigint() < end;) fn();
  let calls = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 100; i++) fn();
    calls += 100;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls;
}

const rows: [string, number][] = [];
const row = (name: string, fn: () => unknown) => rows.push([name, measure(fn)]);

row('parseCidr 192.0.2.0/24', () => parseCidrOrThrow('192.0.2.0/24'));
row('parseCidr 2001:db8:1234:5678::/64', () => parseCidrOrThrow('2001:db8:1234:5678::/64'));
row('parseCidr ::ffff:192.0.2.0/120', () => parseCidrOrThrow('::ffff:192.0.2.0/120'));
const v4 = c('203.0.113.64/26');
const v6 = c('2001:db8:1234:5678::/64');
row('formatCidr IPv4', () => formatCidr(v4));
row('formatCidr IPv6', () => formatCidr(v6));
row('rangeToCidrs IPv4 worst case (62 blocks)', () => rangeToCidrs(4, 1n, 0xfffffffen));
row('rangeToCidrs IPv6 worst case (254 blocks)', () => rangeToCidrs(6, 1n, (1n << 128n) - 2n));

const root8 = c('198.18.0.0/15');
row('splitBlock /15 → /32 (17 blocks)', () => splitBlock(root8, c('198.19.255.255/32')));
const root32 = c('2001:db8::/32');
row('splitBlock 2001:db8::/32 → /64 (32 blocks)', () => splitBlock(root32, v6));
const chainFree = new Set(buddyChain(c('198.18.0.1/32'), root8).map(formatCidr));
row('buddyChain + mergeFree /32 up to /15 (17 merges)', () => {
  const chain = buddyChain(c('198.18.0.1/32'), root8);
  return mergeFree(chain[0], (b) => chainFree.has(formatCidr(b)), root8);
});

/** A pool fragmented by `claims` pinned single-address claims on every other address. */
function fragmented(claims: number): FreeBlockSet {
  const set = new FreeBlockSet(c('198.18.0.0/15'));
  for (let i = 0; i < claims; i++) {
    set.allocatePinned({ family: 4, network: set.pool.network + BigInt(2 * i), prefix: 32 });
  }
  return set;
}

console.log('Pure IPAM math, per call (Node', process.version + ')\n');
for (const [name, ns] of rows) console.log(`${name.padEnd(52)} ${(ns / 1000).toFixed(2).padStart(9)} µs`);

console.log('\nFragmentation (pool 198.18.0.0/15, N /32 claims leaving N one-address holes):');
console.log(`${'claims'.padStart(8)} ${'free blocks'.padStart(12)} ${'split+merge plan'.padStart(18)} ${'linear chooseBlock'.padStart(20)}`);
for (const claims of [100, 2_000, 20_000]) {
  const set = fragmented(claims);
  const blocks = set.blocks();
  const strategies: AllocationStrategy[] = ['FirstFit', 'BestFit'];
  // The work the database layer does around its indexed lookup: plan the split of the block it found
  // and the merge of a released block. Independent of the number of free blocks.
  const largest = blocks[blocks.length - 1];
  const target: Cidr = { family: 4, network: largest.network, prefix: 32 };
  const planNs = measure(() => {
    splitBlock(largest, target);
    return mergeFree(target, () => false, set.pool);
  });
  let k = 0;
  const scanNs = measure(() => chooseBlock(blocks, 28, strategies[k++ & 1]), 200);
  console.log(
    `${String(claims).padStart(8)} ${String(blocks.length).padStart(12)} ${`${(planNs / 1000).toFixed(2)} µs`.padStart(18)} ${`${(scanNs / 1000).toFixed(1)} µs`.padStart(20)}`,
  );
}
