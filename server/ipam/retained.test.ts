import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createApiToken } from '@/server/tenancy/tokens';
import { createCaller } from '@/server/trpc/root';
import type { SessionUser } from '@/server/tenancy/roles';
import { testDb } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { createClaim, deleteClaim, releaseRetainedAllocation, releaseRetainedByName } from './claims';
import { createNetwork, deleteNetwork, getNetwork } from './networks';
import { routeHandlers } from '@/test/rest';

const networkItem = routeHandlers('/api/v1/projects/{project}/networks/{name}');
const retainedItem = routeHandlers('/api/v1/projects/{project}/retainedallocations/{name}');
const retainedList = routeHandlers('/api/v1/projects/{project}/retainedallocations');

const actor = systemActor('test');
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** A project with network "vpc" and the retained allocation of a deleted Retain claim "db". */
async function retainedWorld() {
  const { db } = testDb();
  const { project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '198.51.100.0/24' }] }, actor);
  const claim = await createClaim(db, project.id, { name: 'db', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Retain', retentionSeconds: 3600 }, actor);
  await deleteClaim(db, project.id, 'db', actor);
  return { db, project, allocationId: claim.claim.allocationId, cidr: claim.claim.allocatedCidr };
}

async function releaseEvents(projectId: string) {
  return (await testDb().db.execute(sql`
    select actor_label as actor, object_name as name, reason from events where project_id = ${projectId} and action = 'ipallocation.release'`)) as unknown as {
    actor: string;
    name: string;
    reason: string;
  }[];
}

/** The pool's counters against its allocations and free blocks (nothing leaked, nothing counted twice). */
async function expectBooks(projectId: string) {
  const rows = (await testDb().db.execute(sql`
    select p.name, p.allocated::text as allocated, p.capacity::text as capacity,
           (select coalesce(sum(a.size), 0) from ip_allocations a where a.pool_id = p.id and a.kind <> 'Reservation')::text as summed,
           (select coalesce(sum(trunc(power(2::numeric, 32 - f.prefix_length))), 0) from ip_free_blocks f where f.pool_id = p.id)::text as free
    from ip_pools p where p.project_id = ${projectId}`)) as unknown as { name: string; allocated: string; capacity: string; summed: string; free: string }[];
  for (const r of rows) {
    expect(BigInt(r.allocated), r.name).toBe(BigInt(r.summed));
    expect(BigInt(r.allocated) + BigInt(r.free), r.name).toBe(BigInt(r.capacity));
  }
}

describe('a tenant releases its own retained allocations', () => {
  test('domain: by name, scoped to the project, audited; then the name is free and the network can be deleted', async () => {
    const { db, project, cidr } = await retainedWorld();
    const other = await makeProject(db);
    await expect(deleteNetwork(db, project.id, 'vpc', actor)).rejects.toMatchObject({
      code: 'Conflict',
      message: expect.stringContaining('1 retained allocation'),
    });
    // Another project cannot release it, even naming it.
    await expect(releaseRetainedByName(db, other.project.id, 'db', actor)).rejects.toMatchObject({ code: 'NotFound', field: 'name' });
    expect((await getNetwork(db, project.id, 'vpc')).pools[0].allocated).toBe('16');

    expect(await releaseRetainedByName(db, project.id, 'db', systemActor('editor@example.com'))).toEqual({ name: 'db', cidr, released: true });
    expect(await releaseEvents(project.id)).toEqual([{ actor: 'editor@example.com', name: 'db', reason: 'released by the project' }]);
    expect((await getNetwork(db, project.id, 'vpc')).pools[0].allocated).toBe('0');
    await expect(releaseRetainedByName(db, project.id, 'db', actor)).rejects.toMatchObject({ code: 'NotFound', field: 'name' });
    await expectBooks(project.id);
    await deleteNetwork(db, project.id, 'vpc', actor);
  });

  test('concurrent releases by the tenant and the operator release it exactly once', async () => {
    const { db, project, allocationId } = await retainedWorld();
    const results = await Promise.allSettled([
      ...Array.from({ length: 6 }, () => releaseRetainedByName(db, project.id, 'db', actor)),
      ...Array.from({ length: 2 }, () => releaseRetainedAllocation(db, allocationId, actor)),
    ]);
    const released = results.filter((r) => r.status === 'fulfilled' && (r.value === true || (r.value as { released?: boolean }).released === true));
    const refused = results.filter((r) => r.status === 'rejected');
    expect(released.length).toBe(1);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'NotFound' });
    expect((await releaseEvents(project.id)).length).toBe(1);
    expect((await getNetwork(db, project.id, 'vpc')).pools[0].allocated).toBe('0');
    const [{ n }] = (await db.execute(
      sql`select count(*)::int as n from ip_free_blocks f join ip_pools p on p.id = f.pool_id where p.project_id = ${project.id}`,
    )) as unknown as { n: number }[];
    expect(n).toBe(1);
    await expectBooks(project.id);
  });

  test('tRPC: editors list and release their own; viewers are refused the release; other projects see nothing', async () => {
    const { db, project, cidr } = await retainedWorld();
    const other = await makeProject(db);
    const who = async (projectId: string, role: 'viewer' | 'editor') =>
      createCaller({ db, session: { user: (await makeUser(db, { projectId, role })) as SessionUser } });
    const editor = await who(project.id, 'editor');
    const viewer = await who(project.id, 'viewer');
    const strangerEditor = await who(other.project.id, 'editor');
    const strangerViewer = await who(other.project.id, 'viewer');

    expect(await viewer.ipam.retained.list({ project: project.slug, network: 'vpc' })).toEqual([
      expect.objectContaining({ name: 'db', cidr, network: 'vpc', pool: 'vpc-v4', size: '16' }),
    ]);
    expect(await viewer.ipam.retained.list({ project: project.slug, network: 'nope' })).toEqual([]);
    await expect(viewer.ipam.retained.release({ project: project.slug, name: 'db' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    for (const stranger of [strangerEditor, strangerViewer]) {
      await expect(stranger.ipam.retained.release({ project: project.slug, name: 'db' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(stranger.ipam.retained.list({ project: project.slug })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    // Their own project has no such allocation.
    await expect(strangerEditor.ipam.retained.release({ project: other.project.slug, name: 'db' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await getNetwork(db, project.id, 'vpc')).pools[0].allocated).toBe('16');
    expect(await releaseEvents(project.id)).toEqual([]);

    expect(await editor.ipam.retained.release({ project: project.slug, name: 'db' })).toEqual({ name: 'db', cidr, released: true });
    expect(await viewer.ipam.retained.list({ project: project.slug })).toEqual([]);
    expect((await releaseEvents(project.id)).map((e) => e.name)).toEqual(['db']);
    expect(await editor.ipam.networks.delete({ project: project.slug, name: 'vpc' })).toMatchObject({ deleted: true });
  });

  test('REST: list with a viewer token, release with an editor token (viewer 403, other project 404), then delete the network', async () => {
    const { db, project, cidr, allocationId } = await retainedWorld();
    const other = await makeProject(db);
    const token = async (projectId: string, role: 'viewer' | 'editor') => (await createApiToken(db, { projectId, name: role, role }, actor)).secret;
    const editor = await token(project.id, 'editor');
    const viewer = await token(project.id, 'viewer');
    const foreign = await token(other.project.id, 'editor');
    const call = async (handler: Handler, method: string, secret: string, params: Record<string, string> = {}, query = '') => {
      const res = await handler(new Request(`http://localhost/api/v1/x${query}`, { method, headers: { authorization: `Bearer ${secret}` } }), {
        params: Promise.resolve({ project: project.slug, ...params }),
      });
      return { status: res.status, body: await res.json() };
    };

    const list = await call(retainedList.GET as Handler, 'GET', viewer, {}, '?network=vpc');
    expect(list).toMatchObject({
      status: 200,
      body: {
        kind: 'RetainedAllocationList',
        items: [
          {
            kind: 'RetainedAllocation',
            metadata: { name: 'db', uid: allocationId },
            spec: { network: 'vpc', pool: 'vpc-v4', cidr },
            status: { addresses: '16' },
          },
        ],
        metadata: { continue: null },
      },
    });
    expect(typeof list.body.items[0].status.retainedUntil).toBe('string');
    expect((await call(retainedList.GET as Handler, 'GET', viewer, {}, '?network=Bad_Name')).body.error).toMatchObject({
      code: 'ValidationFailed',
      field: 'network',
    });

    expect((await call(retainedItem.DELETE as Handler, 'DELETE', viewer, { name: 'db' })).status).toBe(403);
    expect((await call(retainedItem.DELETE as Handler, 'DELETE', foreign, { name: 'db' })).status).toBe(404);
    expect((await call(retainedItem.DELETE as Handler, 'DELETE', editor, { name: 'nope' })).body.error).toMatchObject({ code: 'NotFound', field: 'name' });
    expect((await call(networkItem.DELETE as Handler, 'DELETE', editor, { name: 'vpc' })).status).toBe(409);
    expect(await releaseEvents(project.id)).toEqual([]);

    const released = await call(retainedItem.DELETE as Handler, 'DELETE', editor, { name: 'db' });
    expect(released).toMatchObject({
      status: 200,
      body: { kind: 'Status', status: 'Success', details: { kind: 'RetainedAllocation', name: 'db', cidr, released: true } },
    });
    expect((await call(retainedItem.DELETE as Handler, 'DELETE', editor, { name: 'db' })).status).toBe(404);
    expect((await call(retainedList.GET as Handler, 'GET', viewer)).body.items).toEqual([]);
    expect((await releaseEvents(project.id)).length).toBe(1);
    expect((await call(networkItem.DELETE as Handler, 'DELETE', editor, { name: 'vpc' })).status).toBe(200);
  });
});
