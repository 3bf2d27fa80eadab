import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { allocate, releaseAllocation } from './allocator';
import { FreeBlockSet, type AllocationStrategy } from './blocks';
import { familyBits, formatCidr, formatIp, parseCidrOrThrow, rangeToCidrs, type Cidr, type Family } from '@/lib/cidr';
import { createNetwork } from './networks';

const actor = systemActor('test');

/** A small deterministic PRNG, so a failure replays from its seed. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function freeBlocks(poolId: string): Promise<string[]> {
  const { db } = testDb();
  const rows = (await db.execute(sql`select cidr::text as cidr from ip_free_blocks where pool_id = ${poolId} order by cidr`)) as unknown as { cidr: string }[];
  return rows.map((r) => r.cidr).sort();
}

/**
 * The SQL allocator (server/ipam/sql/ipam_allocate.sql, ipam_release.sql) against the in-memory reference
 * (FreeBlockSet, composed from the pure functions in blocks.ts): the same random sequence of
 * allocations, pinned allocations and releases must choose the same blocks and leave the same
 * canonical free set after every step.
 */
describe('SQL allocator agrees with the reference free set', () => {
  const cases: { root: string; strategy: AllocationStrategy; seed: number; sizes: number[] }[] = [
    { root: '10.64.0.0/20', strategy: 'FirstFit', seed: 1, sizes: [22, 24, 26, 27, 28, 30, 32] },
    { root: '10.80.0.0/20', strategy: 'BestFit', seed: 2, sizes: [21, 23, 25, 28, 29, 31, 32] },
    { root: '2001:db8:40::/44', strategy: 'FirstFit', seed: 3, sizes: [48, 52, 56, 60, 64, 96, 128] },
    { root: '2001:db8:80::/44', strategy: 'BestFit', seed: 4, sizes: [46, 50, 56, 64, 80, 112, 127] },
  ];
  for (const { root, strategy, seed, sizes } of cases) {
    test(`${root} ${strategy} (seed ${seed})`, async () => {
      const { db } = testDb();
      const { project } = await makeProject(db);
      const pool = parseCidrOrThrow(root);
      await createNetwork(db, project.id, { name: 'n', cidrs: [{ cidr: root, strategy, maxPrefixLength: familyBits(pool.family) }] } as never, actor);
      const [{ id: poolId }] = (await db.execute(sql`select id from ip_pools where project_id = ${project.id}`)) as unknown as { id: string }[];
      const reference = new FreeBlockSet(pool);
      const live: { id: string; cidr: Cidr }[] = [];
      const random = prng(seed);
      for (let step = 0; step < 160; step++) {
        const roll = random();
        if (roll < 0.3 && live.length) {
          const [victim] = live.splice(Math.floor(random() * live.length), 1);
          const released = await releaseAllocation(db, poolId, victim.id);
          expect(released && formatCidr(released)).toBe(formatCidr(victim.cidr));
          reference.release(victim.cidr);
        } else if (roll < 0.4) {
          // Pinned: a random aligned block, free or not; both sides must agree on whether it fits.
          const prefix = sizes[Math.floor(random() * sizes.length)];
          const span = BigInt(1) << BigInt(prefix - pool.prefix);
          const index = BigInt(Math.floor(random() * Number(span > 1n << 40n ? 1n << 40n : span)));
          const target: Cidr = { family: pool.family, prefix, network: pool.network + (index << BigInt(familyBits(pool.family) - prefix)) };
          const expected = reference.allocatePinned(target);
          const got = await allocate(db, poolId, { cidr: target }, 'Claim').catch((e: { code?: string }) =>
            e.code === 'Overlap' ? undefined : Promise.reject(e),
          );
          expect(Boolean(got), `pinned ${formatCidr(target)} at step ${step}`).toBe(expected);
          if (got) live.push({ id: got.id, cidr: got.cidr });
        } else {
          const prefix = sizes[Math.floor(random() * sizes.length)];
          const expected = reference.allocate(prefix, strategy);
          const got = await allocate(db, poolId, { prefixLength: prefix }, 'Claim');
          expect(got && formatCidr(got.cidr), `/${prefix} at step ${step}`).toBe(expected && formatCidr(expected));
          if (got) live.push({ id: got.id, cidr: got.cidr });
        }
        expect(await freeBlocks(poolId), `free set after step ${step}`).toEqual(reference.blocks().map(formatCidr).sort());
      }
      const [counters] = (await db.execute(sql`select allocated::text as allocated, allocation_count from ip_pools where id = ${poolId}`)) as unknown as {
        allocated: string;
        allocation_count: number;
      }[];
      const used = live.reduce((sum, a) => sum + (1n << BigInt(familyBits(pool.family) - a.cidr.prefix)), 0n);
      expect(counters.allocated).toBe(used.toString());
      expect(counters.allocation_count).toBe(live.length);
    });
  }
});

describe('ipam_range_blocks (SQL) agrees with rangeToCidrs', () => {
  test('on random IPv4 and IPv6 ranges, including the ends of the address space', async () => {
    const { db } = testDb();
    const random = prng(7);
    const cases: { family: Family; start: bigint; end: bigint }[] = [
      { family: 4, start: 0n, end: 0xffffffffn },
      { family: 4, start: 0xfffffff0n, end: 0xffffffffn },
      { family: 4, start: 5n, end: 5n },
      { family: 6, start: (1n << 128n) - 300n, end: (1n << 128n) - 1n },
    ];
    for (let i = 0; i < 200; i++) {
      const family: Family = i % 2 ? 4 : 6;
      const base = family === 4 ? 0xc6336400n : 0x20010db8000000000000000000000000n; // 198.51.100.0, 2001:db8::
      const start = base + BigInt(Math.floor(random() * 5000));
      cases.push({ family, start, end: start + BigInt(Math.floor(random() * 70000)) });
    }
    for (const { family, start, end } of cases) {
      const [{ blocks }] = (await db.execute(sql`
        select coalesce(array_agg(b::text), '{}') as blocks from ipam_range_blocks(${formatIp(family, start)}::inet, ${formatIp(family, end)}::inet) as b`)) as unknown as {
        blocks: string[];
      }[];
      expect(blocks, `${formatIp(family, start)} – ${formatIp(family, end)}`).toEqual(rangeToCidrs(family, start, end).map(formatCidr));
    }
  });
});
