/**
 * Pure operations on a pool's buddy-style free-block table.
 *
 * The allocator stores, per pool, the **canonical free set**: the maximal aligned CIDR blocks lying
 * entirely in the pool's free space. Aligned blocks are either nested or disjoint, so maximal ones
 * are pairwise disjoint and partition the free space; the set is unique, and it is exactly
 * `rangeToCidrs` of each maximal free interval. Every function here keeps the set canonical:
 *
 *  - allocating takes one block `B` with `chooseBlock`, deletes it and inserts `splitBlock(B, taken)`
 *    — the siblings along the path from `B` down to `taken`; each sibling's parent contains `taken`,
 *    so each sibling is maximal;
 *  - a pinned allocation finds the free block containing the target (one exists iff the target is
 *    entirely free, because a free aligned block lies inside a maximal one) and `carve`s it;
 *  - releasing inserts the block and merges it with its buddy while the buddy is *exactly* a free
 *    block (`mergeFree`). That is complete: if the released block's ancestor at some level is now
 *    entirely free, the buddy on the way there was entirely free before, and since the buddy's
 *    parent then contained the allocated block, the buddy itself was a maximal free block.
 *
 * Each operation touches O(bits) blocks whatever the fragmentation of the pool, which is why the
 * database layer can allocate with a handful of indexed statements. `FreeBlockSet` at the bottom is
 * an in-memory reference implementation of exactly that composition (tests, benchmarks, previews).
 */
import {
  type Cidr,
  type Family,
  cidrContaining,
  cidrSize,
  compareCidrs,
  contains,
  familyBits,
  familyName,
  formatCidr,
  formatCount,
  lastAddress,
  overlaps,
  rangeToCidrs,
  sameCidr,
} from '@/lib/cidr';

/** Where in the free space a new block is placed. */
export type AllocationStrategy = 'FirstFit' | 'BestFit';

export const ALLOCATION_STRATEGIES: readonly AllocationStrategy[] = ['FirstFit', 'BestFit'];

function assertBlockPrefix(family: Family, prefix: number): void {
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > familyBits(family)) {
    throw new RangeError(`prefix length ${prefix} out of range for ${familyName(family)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Tree navigation
// ---------------------------------------------------------------------------------------------

/** The other half of this block's parent, or `undefined` for a /0 (which has no parent). */
export function buddyOf(c: Cidr): Cidr | undefined {
  if (c.prefix === 0) return undefined;
  return { family: c.family, network: c.network ^ cidrSize(c), prefix: c.prefix };
}

/** The block of twice the size containing this one, or `undefined` for a /0. */
export function parentOf(c: Cidr): Cidr | undefined {
  if (c.prefix === 0) return undefined;
  return { family: c.family, network: c.network & ~cidrSize(c), prefix: c.prefix - 1 };
}

/** The two halves of a block, lower first, or `undefined` for a single address. */
export function childrenOf(c: Cidr): [Cidr, Cidr] | undefined {
  if (c.prefix === familyBits(c.family)) return undefined;
  const prefix = c.prefix + 1;
  const half = cidrSize(c) >> 1n;
  return [
    { family: c.family, network: c.network, prefix },
    { family: c.family, network: c.network + half, prefix },
  ];
}

// ---------------------------------------------------------------------------------------------
// Pool set-up
// ---------------------------------------------------------------------------------------------

/**
 * Why `leading`/`trailing` reserved addresses do not fit the pool, or `undefined` when they do.
 * Reserving every address is allowed (the pool is then born exhausted).
 */
export function reservationProblem(pool: Cidr, leading: bigint, trailing: bigint): string | undefined {
  if (leading < 0n || trailing < 0n) return 'reservations cannot be negative';
  const size = cidrSize(pool);
  if (leading + trailing > size) {
    return `reservations (${formatCount(leading)} leading + ${formatCount(trailing)} trailing) exceed the ${formatCount(size)} addresses of ${formatCidr(pool)}`;
  }
  return undefined;
}

function assertReservations(pool: Cidr, leading: bigint, trailing: bigint): void {
  const problem = reservationProblem(pool, leading, trailing);
  if (problem !== undefined) throw new RangeError(problem);
}

/**
 * The canonical free set of a new pool: the aligned blocks covering
 * `[first + leading, last − trailing]`, in address order. Throws `RangeError` when the
 * reservations do not fit (check with `reservationProblem` first for a friendly message).
 */
export function initialFreeBlocks(pool: Cidr, leading: bigint, trailing: bigint): Cidr[] {
  assertReservations(pool, leading, trailing);
  return rangeToCidrs(pool.family, pool.network + leading, lastAddress(pool) - trailing);
}

/**
 * The aligned blocks making up the leading and trailing reservations of a pool, in address order,
 * for storing them as `Reservation` allocations (a reservation of N addresses is generally not a
 * single CIDR).
 */
export function reservationBlocks(pool: Cidr, leading: bigint, trailing: bigint): { leading: Cidr[]; trailing: Cidr[] } {
  assertReservations(pool, leading, trailing);
  const last = lastAddress(pool);
  // No reservation is no block; computing its empty range would step outside the address space
  // for a pool at either end of it (0.0.0.0/…, …/ending at 255.255.255.255, ::/…).
  return {
    leading: leading === 0n ? [] : rangeToCidrs(pool.family, pool.network, pool.network + leading - 1n),
    trailing: trailing === 0n ? [] : rangeToCidrs(pool.family, last - trailing + 1n, last),
  };
}

/** Total number of addresses in a set of disjoint blocks. */
export function totalSize(blocks: Iterable<Cidr>): bigint {
  let total = 0n;
  for (const block of blocks) total += cidrSize(block);
  return total;
}

// ---------------------------------------------------------------------------------------------
// Allocation
// ---------------------------------------------------------------------------------------------

/** The outcome of choosing a place for a new block. */
export interface BlockChoice {
  /** The free block to delete from the free set. */
  readonly from: Cidr;
  /** The block handed out: the first /prefix of `from`. */
  readonly allocated: Cidr;
  /** The free blocks to insert in place of `from`, in address order (`splitBlock(from, allocated)`). */
  readonly remainder: Cidr[];
}

/**
 * Whether free block `candidate` is a better source than `current` for a /prefix under `strategy`
 * (both must fit, i.e. have a prefix length ≤ the requested one). Exposed so that a caller scanning
 * its own storage ranks exactly like `chooseBlock`. Over a `cidr` column the SQL equivalents are
 * `WHERE pool_id = $1 AND masklen(cidr) <= $prefix … LIMIT 1` with `ORDER BY cidr` (FirstFit;
 * disjoint blocks sort by address) or `ORDER BY masklen(cidr) DESC, cidr` (BestFit).
 */
export function isBetterSource(candidate: Cidr, current: Cidr, strategy: AllocationStrategy): boolean {
  if (strategy === 'BestFit' && candidate.prefix !== current.prefix) return candidate.prefix > current.prefix;
  return candidate.network < current.network;
}

/**
 * Chooses where a new /prefix goes among a pool's canonical free blocks, or `undefined` when no
 * free block is large enough (the pool is exhausted for that size). The new block is always the
 * first /prefix of the chosen free block.
 *
 * - **FirstFit**: the lowest-address aligned /prefix that is entirely free. It is the first /prefix
 *   of the lowest-address free block whose prefix length ≤ `prefix`: every entirely free aligned
 *   /prefix lies inside some maximal free block, which is then large enough; conversely every such
 *   block starts with an aligned, entirely free /prefix (its network is aligned to its own, larger
 *   size). Free blocks are disjoint, so the first /prefix of the lowest fitting block is below every
 *   /prefix inside any other fitting block — the canonical form is what makes "lowest fitting
 *   block" equal to true first fit over the address space.
 * - **BestFit**: least waste — the smallest free block that fits (largest prefix length ≤
 *   `prefix`), the lowest address among equals. Taking from the smallest maximal block leaves the
 *   large blocks whole for later large requests.
 *
 * Cost is one pass over `freeBlocks` (one pool's free set, so one family); order does not matter.
 * Throws `RangeError` for a prefix length out of range for the family.
 */
export function chooseBlock(freeBlocks: Iterable<Cidr>, prefix: number, strategy: AllocationStrategy): BlockChoice | undefined {
  let best: Cidr | undefined;
  let family: Family | undefined;
  for (const block of freeBlocks) {
    if (family === undefined) {
      family = block.family;
      assertBlockPrefix(family, prefix);
    } else if (block.family !== family) {
      throw new RangeError('chooseBlock: free blocks of both families; a free set belongs to one pool');
    }
    if (block.prefix > prefix) continue;
    if (best === undefined || isBetterSource(block, best, strategy)) best = block;
  }
  if (best === undefined) return undefined;
  const allocated: Cidr = { family: best.family, network: best.network, prefix };
  return { from: best, allocated, remainder: splitBlock(best, allocated) };
}

/**
 * The free blocks left after carving aligned block `taken` out of free block `block`
 * (`taken` ⊆ `block`): for each level below `block` down to `taken`, the half not containing
 * `taken`. Exactly `taken.prefix − block.prefix` blocks, in address order, each maximal (its
 * parent contains `taken`). Throws `RangeError` when `taken` is not inside `block`.
 */
export function splitBlock(block: Cidr, taken: Cidr): Cidr[] {
  if (!contains(block, taken)) {
    throw new RangeError(`${formatCidr(taken)} is not inside ${formatCidr(block)}`);
  }
  const below: Cidr[] = [];
  const above: Cidr[] = [];
  const bits = familyBits(block.family);
  for (let prefix = block.prefix + 1; prefix <= taken.prefix; prefix++) {
    const half = 1n << BigInt(bits - prefix);
    const ancestor = taken.network & ~(half * 2n - 1n);
    if ((taken.network & half) === 0n) {
      above.push({ family: block.family, network: ancestor + half, prefix });
    } else {
      below.push({ family: block.family, network: ancestor, prefix });
    }
  }
  // `below` was built from the largest (lowest) block up; `above` from the largest (highest) down.
  return [...below, ...above.reverse()];
}

/**
 * Carving a pinned block (an exact CIDR requested by a claim) out of the free block that contains
 * it: the same split as `splitBlock`. The caller finds `containing` as "the free block of the pool
 * containing `target`" (`cidr >>= target` in SQL, or `findContaining`); when there is none, some
 * address of `target` is allocated or reserved (→ `Overlap`).
 */
export function carve(containing: Cidr, target: Cidr): Cidr[] {
  return splitBlock(containing, target);
}

/** The block of `freeBlocks` containing `target`, if any (at most one: free blocks are disjoint). */
export function findContaining(freeBlocks: Iterable<Cidr>, target: Cidr): Cidr | undefined {
  for (const block of freeBlocks) if (contains(block, target)) return block;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Release
// ---------------------------------------------------------------------------------------------

/** Free-set changes for one release: delete `remove`, then insert `insert`. */
export interface MergePlan {
  /** Buddies absorbed by the merge, smallest first; empty when nothing merged. */
  readonly remove: Cidr[];
  /** The single block to insert: the released block or the ancestor it merged up to. */
  readonly insert: Cidr;
}

/**
 * The buddies a release of `released` in `pool` may merge with, smallest first: the buddy of the
 * block and of each ancestor strictly inside the pool. A database layer fetches the free ones in
 * one statement (`… WHERE pool_id = $1 AND cidr = ANY($2)`) and hands the answer to `mergeFree`.
 */
export function buddyChain(released: Cidr, pool: Cidr): Cidr[] {
  if (!contains(pool, released)) {
    throw new RangeError(`${formatCidr(released)} is not inside pool ${formatCidr(pool)}`);
  }
  const chain: Cidr[] = [];
  let current = released;
  while (current.prefix > pool.prefix) {
    chain.push(buddyOf(current) as Cidr);
    current = parentOf(current) as Cidr;
  }
  return chain;
}

/**
 * Merges released block `released` into a pool's canonical free set: while the buddy of the
 * current block is exactly a free block (`isFree`), absorb it and move to the parent; never above
 * the pool itself. Returns the blocks to delete and the one block to insert. `isFree` is asked
 * only about members of `buddyChain(released, pool)`, smallest first, and the merge is complete
 * (see the module comment), so the result is canonical again. The caller guarantees `released`
 * was allocated (no part of it is currently free).
 */
export function mergeFree(released: Cidr, isFree: (block: Cidr) => boolean, pool: Cidr): MergePlan {
  const remove: Cidr[] = [];
  let current = released;
  for (const buddy of buddyChain(released, pool)) {
    if (!isFree(buddy)) break;
    remove.push(buddy);
    current = parentOf(current) as Cidr;
  }
  return { remove, insert: current };
}

// ---------------------------------------------------------------------------------------------
// In-memory reference implementation
// ---------------------------------------------------------------------------------------------

function blockKey(c: Cidr): string {
  return `${c.prefix}/${c.network.toString(16)}`;
}

/**
 * A pool's canonical free set held in memory, composed from the functions above exactly as the
 * database layer composes them with SQL. O(free blocks) per allocation (a linear `chooseBlock`
 * scan); the database replaces that scan with an index lookup.
 */
export class FreeBlockSet {
  private readonly free = new Map<string, Cidr>();

  constructor(
    readonly pool: Cidr,
    leading = 0n,
    trailing = 0n,
  ) {
    for (const block of initialFreeBlocks(pool, leading, trailing)) this.free.set(blockKey(block), block);
  }

  /** The free blocks, in address order. */
  blocks(): Cidr[] {
    return [...this.free.values()].sort(compareCidrs);
  }

  /** Number of free addresses. */
  freeSize(): bigint {
    return totalSize(this.free.values());
  }

  /** Whether `block` is exactly one of the free blocks. */
  hasBlock(block: Cidr): boolean {
    return this.free.has(blockKey(block));
  }

  /** Allocates a /prefix, or returns `undefined` when no free block is large enough. */
  allocate(prefix: number, strategy: AllocationStrategy): Cidr | undefined {
    const choice = chooseBlock(this.free.values(), prefix, strategy);
    if (choice === undefined) return undefined;
    this.replace([choice.from], choice.remainder);
    return choice.allocated;
  }

  /** The free block containing `target`, found by looking up its ancestors: O(bits). */
  findContaining(target: Cidr): Cidr | undefined {
    if (!contains(this.pool, target)) return undefined;
    for (let prefix = target.prefix; prefix >= this.pool.prefix; prefix--) {
      const found = this.free.get(blockKey(cidrContaining(target.family, target.network, prefix)));
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** Allocates exactly `target`, or returns `false` when some address of it is not free. */
  allocatePinned(target: Cidr): boolean {
    const containing = this.findContaining(target);
    if (containing === undefined) return false;
    this.replace([containing], carve(containing, target));
    return true;
  }

  /** Returns an allocated block to the free set. Throws when part of it is already free. */
  release(block: Cidr): void {
    if (!contains(this.pool, block)) throw new RangeError(`${formatCidr(block)} is not in ${formatCidr(this.pool)}`);
    for (const free of this.free.values()) {
      if (overlaps(free, block)) throw new RangeError(`${formatCidr(block)} overlaps free block ${formatCidr(free)}`);
    }
    const plan = mergeFree(block, (buddy) => this.hasBlock(buddy), this.pool);
    this.replace(plan.remove, [plan.insert]);
  }

  private replace(remove: readonly Cidr[], insert: readonly Cidr[]): void {
    for (const block of remove) {
      if (!this.free.delete(blockKey(block))) throw new Error(`internal: ${formatCidr(block)} was not free`);
    }
    for (const block of insert) this.free.set(blockKey(block), block);
  }
}

/** Whether `a` and `b` list the same blocks (in any order). */
export function sameBlocks(a: readonly Cidr[], b: readonly Cidr[]): boolean {
  if (a.length !== b.length) return false;
  const sortedA = [...a].sort(compareCidrs);
  const sortedB = [...b].sort(compareCidrs);
  return sortedA.every((block, i) => sameCidr(block, sortedB[i]));
}
