/**
 * A project token acts with the lesser of its own role and its creator's current rights in the
 * project (server/tenancy/sql/api_token_role.sql): disabling the creator, demoting them, removing their
 * membership or deleting them takes effect on the token's next request, on every REST route and on
 * the CNI ADD that reuses a cluster token verified a moment ago. Tokens nobody created (the CLI,
 * the seed) act with their own role.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, inject, test } from 'vitest';
import { createDb } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { addMembership, removeMembership } from './projects';
import { createApiToken, listApiTokens, verifyApiToken } from './tokens';
import { deleteUser, setUserDisabled } from './users';
import { routeHandlers } from '@/test/rest';

const cniRoute = routeHandlers('/api/v1/projects/{project}/clusters/{cluster}/cni/{command}');
const clustersRoute = routeHandlers('/api/v1/projects/{project}/clusters');
const networksRoute = routeHandlers('/api/v1/projects/{project}/networks');

const actor = systemActor('test');
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

async function call(handler: Handler, params: Record<string, string>, secret: string, body?: unknown) {
  const init: RequestInit = { headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } };
  const req =
    body === undefined ? new Request('http://localhost/x', init) : new Request('http://localhost/x', { ...init, method: 'POST', body: JSON.stringify(body) });
  const res = await handler(req, { params: Promise.resolve(params) });
  return { status: res.status, body: await res.json() };
}

/** A project with a network, and a user holding `role` on it who creates an owner token. */
async function setup(role: 'owner' | 'editor' = 'owner') {
  const { db } = testDb();
  const { org, project } = await makeProject(db);
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.41.0.0/16' }] }, actor);
  const user = await makeUser(db, { projectId: project.id, role });
  const token = await createApiToken(db, { projectId: project.id, name: 'automation', role: 'owner', createdBy: user.id }, actor);
  const params = { project: project.slug };
  const read = (secret = token.secret) => call(networksRoute.GET as Handler, params, secret);
  let next = 0;
  const write = (secret = token.secret) =>
    call(networksRoute.POST as Handler, params, secret, { metadata: { name: uniq('n') }, spec: { cidrs: [{ cidr: `10.42.${next++}.0/24` }] } });
  const networks = async () =>
    ((await db.execute(sql`select count(*)::int as n from networks where project_id = ${project.id}`)) as unknown as { n: number }[])[0].n;
  return { db, org, project, user, token, read, write, networks };
}

describe('a project token acts with no more than its creator’s current rights', () => {
  test('its creator disabled: 401 on reads and writes, nothing written; enabled again: it works again', async () => {
    const { db, project, user, token, read, write, networks } = await setup();
    expect((await read()).status).toBe(200);
    expect((await listApiTokens(db, project.id)).find((t) => t.id === token.id)).toMatchObject({ role: 'owner', actsAs: 'owner' });
    await setUserDisabled(db, user.id, true, actor);
    expect(await read()).toMatchObject({ status: 401, body: { error: { code: 'Unauthenticated' } } });
    expect((await listApiTokens(db, project.id)).find((t) => t.id === token.id)).toMatchObject({ actsAs: null });
    const before = await networks();
    expect((await write()).status).toBe(401);
    expect(await networks()).toBe(before);
    await setUserDisabled(db, user.id, false, actor);
    expect((await read()).status).toBe(200);
  });

  test('its creator demoted to viewer: the owner token reads but its writes are 403 and write nothing', async () => {
    const { db, project, user, token, read, write, networks } = await setup();
    expect((await write()).status).toBe(201);
    await addMembership(db, { userId: user.id, role: 'viewer', projectId: project.id }, actor);
    expect((await read()).status).toBe(200);
    // The console's list says so.
    expect((await listApiTokens(db, project.id)).find((t) => t.id === token.id)).toMatchObject({ role: 'owner', actsAs: 'viewer' });
    const before = await networks();
    expect(await write()).toMatchObject({ status: 403, body: { error: { code: 'Forbidden' } } });
    expect(await networks()).toBe(before);
  });

  test('its creator’s membership removed: 401; owning the organization still counts, being its member does not', async () => {
    const { db, org, project, user, read, write } = await setup();
    await addMembership(db, { userId: user.id, role: 'owner', organizationId: org.id }, actor);
    await removeMembership(db, { userId: user.id, projectId: project.id }, actor);
    // The creator owns the organization, hence the project: the owner token still writes.
    expect((await write()).status).toBe(201);
    await addMembership(db, { userId: user.id, role: 'member', organizationId: org.id }, actor);
    expect((await read()).status).toBe(401);
    expect((await write()).status).toBe(401);
    await removeMembership(db, { userId: user.id, organizationId: org.id }, actor);
    expect((await read()).status).toBe(401);
  });

  test('its creator deleted: 401, and the token is listed as revoked', async () => {
    const { db, project, user, token, read } = await setup();
    expect((await read()).status).toBe(200);
    await deleteUser(db, user.id, actor);
    expect((await read()).status).toBe(401);
    expect(await verifyApiToken(db, token.secret)).toBeUndefined();
    const [listed] = (await listApiTokens(db, project.id)).filter((t) => t.id === token.id);
    expect(listed.revokedAt).not.toBeNull();
  });

  test('a token nobody created (CLI, seed) acts with its own role', async () => {
    const { db, project, read, write } = await setup();
    const system = await createApiToken(db, { projectId: project.id, name: 'cli', role: 'editor' }, actor);
    expect((await read(system.secret)).status).toBe(200);
    expect((await write(system.secret)).status).toBe(201);
  });

  test('a platform admin’s token keeps its role without a membership; disabled, it stops', async () => {
    const { db, project, read, write } = await setup();
    const admin = await makeUser(db, { platformRoles: ['admin'] });
    const token = await createApiToken(db, { projectId: project.id, name: 'admin', role: 'editor', createdBy: admin.id }, actor);
    expect((await write(token.secret)).status).toBe(201);
    await setUserDisabled(db, admin.id, true, actor);
    expect((await read(token.secret)).status).toBe(401);
  });
});

describe('the CNI ADD reusing a verified cluster token honours its creator’s rights', () => {
  const key = (i: number) => ({ cniNetwork: 'k8s', containerId: `ctr${i}`, ifname: 'eth0', node: 'n1', podNamespace: 'default', podName: `pod-${i}` });

  async function clusterSetup() {
    const base = await setup();
    const { db, project, user } = base;
    // Registered through the console by the user: the cluster token is theirs.
    const { token } = await createCluster(db, project.id, { name: 'k1', network: 'vpc', issueToken: true }, { type: 'user', id: user.id, label: 'user' });
    const secret = token!.secret;
    const add = (i: number, s = secret) => call(cniRoute.POST as Handler, { project: project.slug, cluster: 'k1', command: 'add' }, s, key(i));
    const leases = async () =>
      (
        (await db.execute(
          sql`select l.container_id from pod_leases l join clusters c on c.id = l.cluster_id where c.project_id = ${project.id} order by 1`,
        )) as unknown as { container_id: string }[]
      ).map((r) => r.container_id);
    return { ...base, secret, add, leases };
  }

  test('creator disabled after the token was verified: the reused principal’s ADD is 401 and adds nothing', async () => {
    const { db, user, secret, add, leases } = await clusterSetup();
    expect((await add(1)).status).toBe(200);
    await setUserDisabled(db, user.id, true, actor);
    // The route still holds the principal it verified...
    expect(await verifyApiToken(db, secret, { reuseRecent: true })).toMatchObject({ clusterName: 'k1' });
    // ...and the ADD refuses in its own transaction.
    expect(await add(2)).toMatchObject({ status: 401, body: { error: { code: 'Unauthenticated' } } });
    expect(await leases()).toEqual(['ctr1']);
  });

  test('creator demoted to viewer: the reused principal’s ADD is 403 and adds nothing', async () => {
    const { db, project, user, secret, add, leases } = await clusterSetup();
    expect((await add(1)).status).toBe(200);
    await addMembership(db, { userId: user.id, role: 'viewer', projectId: project.id }, actor);
    expect(await verifyApiToken(db, secret, { reuseRecent: true })).toMatchObject({ role: 'editor' });
    expect(await add(2)).toMatchObject({ status: 403, body: { error: { code: 'Forbidden' } } });
    expect(await leases()).toEqual(['ctr1']);
    // The refusal dropped the reused principal: the token is read again, as a viewer.
    expect(await verifyApiToken(db, secret, { reuseRecent: true })).toMatchObject({ role: 'viewer' });
  });

  test('creator’s membership removed or creator deleted: 401 and nothing added', async () => {
    const { db, project, user, add, leases } = await clusterSetup();
    expect((await add(1)).status).toBe(200);
    await removeMembership(db, { userId: user.id, projectId: project.id }, actor);
    expect((await add(2)).status).toBe(401);
    await addMembership(db, { userId: user.id, role: 'owner', projectId: project.id }, actor);
    expect((await add(3)).status).toBe(200);
    await deleteUser(db, user.id, actor);
    expect((await add(4)).status).toBe(401);
    expect(await leases()).toEqual(['ctr1', 'ctr3']);
  });

  test('a cluster registered with a user’s token: its cluster token rests on that user’s rights too', async () => {
    const { db, project, user, token } = await setup();
    const registered = await call(clustersRoute.POST as Handler, { project: project.slug }, token.secret, { name: 'k2', network: 'vpc' });
    expect(registered.status).toBe(201);
    const clusterSecret = registered.body.token.secret as string;
    const add = () => call(cniRoute.POST as Handler, { project: project.slug, cluster: 'k2', command: 'add' }, clusterSecret, key(9));
    expect((await add()).status).toBe(200);
    await setUserDisabled(db, user.id, true, actor);
    expect((await add()).status).toBe(401);
  });
});

describe('concurrent CNI ADDs of tokens whose creators’ rights differ', () => {
  test('each ADD gets its own token’s answer, in batches or alone, and only the live token’s leases are written', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '10.43.0.0/16' }] }, actor);
    const secrets: Record<string, string> = {};
    const users: Record<string, string> = {};
    for (const c of ['live', 'demoted', 'disabled']) {
      const user = await makeUser(db, { projectId: project.id, role: 'owner' });
      users[c] = user.id;
      const { token } = await createCluster(db, project.id, { name: c, network: 'vpc', issueToken: true }, { type: 'user', id: user.id, label: user.email });
      secrets[c] = token!.secret;
    }
    const add = (c: string, i: number) =>
      call(cniRoute.POST as Handler, { project: project.slug, cluster: c, command: 'add' }, secrets[c], {
        cniNetwork: 'k8s',
        containerId: `ctr${i}`,
        ifname: 'eth0',
        node: `n${i % 4}`,
      });
    // Every token verified (and from now on reused by the route), every node with its blocks.
    for (const c of Object.keys(secrets)) for (let n = 0; n < 4; n++) expect((await add(c, 1000 + n)).status).toBe(200);
    await addMembership(db, { userId: users.demoted, role: 'viewer', projectId: project.id }, actor);
    await setUserDisabled(db, users.disabled, true, actor);

    const calls = Object.keys(secrets).flatMap((c) => Array.from({ length: 24 }, (_, i) => add(c, i).then((r) => [c, r.status] as const)));
    const statuses: Record<string, number[]> = { live: [], demoted: [], disabled: [] };
    for (const [c, status] of await Promise.all(calls)) statuses[c].push(status);
    expect(new Set(statuses.live)).toEqual(new Set([200]));
    expect(new Set(statuses.demoted)).toEqual(new Set([403]));
    expect(new Set(statuses.disabled)).toEqual(new Set([401]));

    const counts = (await db.execute(sql`
      select c.name, count(l.id)::int as n from clusters c left join pod_leases l on l.cluster_id = c.id
      where c.project_id = ${project.id} group by c.name order by c.name`)) as unknown as { name: string; n: number }[];
    expect(counts).toEqual([
      { name: 'demoted', n: 4 },
      { name: 'disabled', n: 4 },
      { name: 'live', n: 28 },
    ]);
  });
});

describe('migration 0031', () => {
  test('revokes the tokens of creators deleted before it, and leaves tokens nobody created alone', async () => {
    const { db: admin } = testDb();
    const name = uniq('mig').replace(/-/g, '_');
    await admin.execute(sql.raw(`create database ${name}`));
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const old = createDb(url.toString(), { max: 2 });
    try {
      await migrateDatabase(url.toString(), { through: '0028_ipam_reservations_exact' });
      // Rows written as the schema of then has them (today's code writes columns added later).
      const slug = uniq('p');
      const [project] = (await old.db.execute(sql`
        with o as (insert into organizations (slug, name) values (${slug + '-org'}, 'org') returning id)
        insert into projects (organization_id, slug, name) select id, ${slug}, ${slug} from o returning id`)) as unknown as { id: string }[];
      const [user] = (await old.db.execute(sql`
        insert into users (email, name) values (${uniq('u') + '@example.com'}, 'Test user') returning id, email`)) as unknown as {
        id: string;
        email: string;
      }[];
      await old.db.execute(sql`insert into memberships (user_id, project_id, role) values (${user.id}, ${project.id}, 'owner')`);
      const byUser = await createApiToken(
        old.db,
        { projectId: project.id, name: 'by-user', createdBy: user.id },
        { type: 'user', id: user.id, label: user.email },
      );
      const byCli = await createApiToken(old.db, { projectId: project.id, name: 'by-cli' }, actor);
      // Deleted before the migration: the token's creator is gone without a trace on the token.
      await old.db.execute(sql`delete from users where id = ${user.id}`);
      await migrateDatabase(url.toString());
      const rows = (await old.db.execute(
        sql`select name, revoked_at is not null as revoked from api_tokens where id in (${byUser.id}, ${byCli.id}) order by name`,
      )) as unknown as {
        name: string;
        revoked: boolean;
      }[];
      expect(rows).toEqual([
        { name: 'by-cli', revoked: false },
        { name: 'by-user', revoked: true },
      ]);
    } finally {
      await old.close();
      await admin.execute(sql.raw(`drop database ${name} with (force)`));
    }
  });
});

describe('the role read as the calling statement plans it', () => {
  // Token verification runs on every REST request: the role must be planned with the statement
  // that reads the token (api_token_roles inlined), not planned again inside a function call.
  test('api_token_roles read in FROM is inlined into the calling statement', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const token = await createApiToken(db, { projectId: project.id, name: 'plan' }, actor);
    const plan = (await db.execute(sql`
      explain (verbose, costs off)
      select (select r.role from api_token_roles(t.id) r) as role from api_tokens t where t.id = ${token.id}`)) as unknown as { 'QUERY PLAN': string }[];
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('memberships');
    expect(text).not.toMatch(/api_token_role/);
  });

  test('the value form answers what the table form answers', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const user = await makeUser(db, { projectId: project.id, role: 'editor' });
    const token = await createApiToken(db, { projectId: project.id, name: 'both', role: 'owner', createdBy: user.id }, actor);
    const [row] = (await db.execute(sql`
      select api_token_role(${token.id}) as value, (select r.role from api_token_roles(${token.id}) r) as inlined`)) as unknown as {
      value: string;
      inlined: string;
    }[];
    expect(row).toEqual({ value: 'editor', inlined: 'editor' });
  });
});
