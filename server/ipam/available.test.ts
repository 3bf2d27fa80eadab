import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createApiToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';
import { availableBlocks } from './available';
import { createClaim, deleteClaim } from './claims';
import { createNetwork } from './networks';

const actor = systemActor('test');
const claim = (name: string, extra: Record<string, unknown>) => ({ name, network: 'vpc', reclaimPolicy: 'Delete' as const, ...extra }) as never;

async function fragmented() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24', maxPrefixLength: 32, reserveLeading: 1 } as never] }, actor);
  // /28s at .0 (after the reserved .0 address the allocator starts at .16), then free holes by deleting every other one.
  for (let i = 0; i < 8; i++) await createClaim(db, project.id, claim(`c${i}`, { prefixLength: 28 }), actor);
  for (let i = 0; i < 8; i += 2) await deleteClaim(db, project.id, `c${i}`, actor);
  return { db, project };
}

describe('free space of a pool (available)', () => {
  test('the first free blocks of a length, in address order, none overlapping an allocation, the first one what FirstFit takes', async () => {
    const { db, project } = await fragmented();
    const answer = await availableBlocks(db, project.id, 'vpc', 'vpc-v4', { prefixLength: 28, limit: 6 });
    const cidrs = answer.items.map((b) => b.cidr);
    expect(cidrs).toHaveLength(6);
    expect([...cidrs].sort((a, b) => Number(a.split('.')[3].split('/')[0]) - Number(b.split('.')[3].split('/')[0]))).toEqual(cidrs);
    for (const c of cidrs) {
      const [{ n }] = (await db.execute(sql`
        select count(*)::int as n from ip_allocations where project_id = ${project.id} and cidr && ${c}::cidr`)) as unknown as { n: number }[];
      expect({ c, n }).toEqual({ c, n: 0 });
    }
    expect(answer.items[0]).toMatchObject({ prefixLength: 28, size: '16', claimable: true });
    const preview = await createClaim(db, project.id, claim('next', { prefixLength: 28 }), actor, { dryRun: true });
    expect(preview.claim.allocatedCidr).toBe(cidrs[0]);

    // A claim names one of them and gets exactly it.
    const pinned = await createClaim(db, project.id, claim('pinned', { address: cidrs[3], pool: 'vpc-v4' }), actor);
    expect(pinned.claim.allocatedCidr).toBe(cidrs[3]);
    const after = await availableBlocks(db, project.id, 'vpc', 'vpc-v4', { prefixLength: 28, limit: 6 });
    expect(after.items.map((b) => b.cidr)).not.toContain(cidrs[3]);
  });

  test('without a length: the largest free blocks first', async () => {
    const { db, project } = await fragmented();
    const answer = await availableBlocks(db, project.id, 'vpc', 'vpc-v4', { limit: 3 });
    expect(answer.prefixLength).toBeNull();
    expect(answer.items.map((b) => b.prefixLength)).toEqual([...answer.items.map((b) => b.prefixLength)].sort((a, b) => a - b));
    // 8 /28s from .16 end at .143: the top half from .128 holds .144/28, .160/27, .192/26 free.
    expect(answer.items[0]).toMatchObject({ cidr: '198.51.100.192/26', size: '64' });
    const sum = (await availableBlocks(db, project.id, 'vpc', 'vpc-v4', { limit: 1000 })).items.reduce((n, b) => n + BigInt(b.size), 0n);
    const [{ capacity, allocated }] = (await db.execute(sql`
      select capacity::text, allocated::text from ip_pools where project_id = ${project.id} and name = 'vpc-v4'`)) as unknown as {
      capacity: string;
      allocated: string;
    }[];
    expect(sum).toBe(BigInt(capacity) - BigInt(allocated));
  });

  test('a length longer than the free blocks lists none; a length past the family is refused; REST', async () => {
    const { db, project } = await fragmented();
    expect((await availableBlocks(db, project.id, 'vpc', 'vpc-v4', { prefixLength: 20, limit: 5 })).items).toEqual([]);
    await expect(availableBlocks(db, project.id, 'vpc', 'vpc-v4', { prefixLength: 33, limit: 5 })).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'prefixLength',
    });
    await expect(availableBlocks(db, project.id, 'vpc', 'nope', { limit: 5 })).rejects.toMatchObject({ code: 'NotFound', field: 'pool' });

    const token = await createApiToken(db, { projectId: project.id, name: 'rest', role: 'viewer' }, actor);
    const res = await routeHandlers('/api/v1/projects/{project}/networks/{name}/pools/{pool}/available').GET(
      new Request('http://localhost/x?prefixLength=30&limit=3', { headers: { authorization: `Bearer ${token.secret}` } }),
      { params: Promise.resolve({ project: project.slug, name: 'vpc', pool: 'vpc-v4' }) },
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ kind: 'AvailablePrefixList', spec: { prefixLength: 30 } });
    expect(body.items.map((b: { cidr: string }) => b.cidr)).toEqual(['198.51.100.4/30', '198.51.100.8/30', '198.51.100.12/30']);
  });
});
