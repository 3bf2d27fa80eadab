/**
 * Organization roles are owner and member; project roles viewer, editor and owner. Each scope
 * refuses the other's roles, and migration 0037 moves organization editors and viewers to members
 * without changing anybody's rights on a project.
 */
import { sql } from 'drizzle-orm';
import { describe, expect, inject, test } from 'vitest';
import { createDb } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { systemActor } from '@/server/audit/events';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { addMemberByEmail, createInvitation } from './invitations';
import { grantRole, setMemberRole } from './members';
import { addMembership } from './projects';
import { createApiToken } from './tokens';

const actor = systemActor('test');
/** The constraint a failed statement broke (the driver's error is the drizzle error's cause). */
const brokenConstraint = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { cause?: { constraint_name?: string } }) => e.cause?.constraint_name ?? null,
  );

const invite = { invitedBy: null, mail: null };

describe('roles per scope', () => {
  test('an organization takes owner and member only, a project owner, editor and viewer only; nothing changes on refusal', async () => {
    const { db } = testDb();
    const { org, project } = await makeProject(db);
    const user = await makeUser(db);
    const count = async () =>
      ((await db.execute(sql`select count(*)::int as n from memberships where user_id = ${user.id}`)) as unknown as { n: number }[])[0].n;
    for (const role of ['editor', 'viewer'] as const) {
      await expect(addMemberByEmail(db, { organizationId: org.id }, user.email, role, actor, invite)).rejects.toMatchObject({
        code: 'ValidationFailed',
        field: 'role',
        message: 'an organization role is one of member, owner',
      });
      await expect(createInvitation(db, { scope: { organizationId: org.id }, email: 'x@example.com', role, invitedBy: null }, actor)).rejects.toMatchObject({
        code: 'ValidationFailed',
        field: 'role',
      });
    }
    await expect(addMemberByEmail(db, { projectId: project.id }, user.email, 'member', actor, invite)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'role',
      message: 'a project role is one of viewer, editor, owner',
    });
    await expect(
      createInvitation(db, { scope: { projectId: project.id }, email: 'x@example.com', role: 'member', invitedBy: null }, actor),
    ).rejects.toMatchObject({ code: 'ValidationFailed', field: 'role' });
    expect(await count()).toBe(0);

    await grantRole(db, { organizationId: org.id }, user.id, 'member', actor);
    await expect(setMemberRole(db, { organizationId: org.id }, user.id, 'editor', actor)).rejects.toMatchObject({ field: 'role' });
    // The constraints hold whatever path writes.
    expect(await brokenConstraint(db.execute(sql`update memberships set role = 'viewer' where user_id = ${user.id}`))).toBe('memberships_role_scope');
    expect(await brokenConstraint(db.execute(sql`insert into memberships (user_id, project_id, role) values (${user.id}, ${project.id}, 'member')`))).toBe(
      'memberships_role_scope',
    );
    expect(await brokenConstraint(createApiToken(db, { projectId: project.id, name: 't', role: 'member' as 'viewer' }, actor))).toBe('api_tokens_role_project');
  });
});

describe('migration 0037', () => {
  test('organization editors and viewers become members and keep their project rights; owners stay owners', async () => {
    const { db: admin } = testDb();
    const name = uniq('mig').replace(/-/g, '_');
    await admin.execute(sql.raw(`create database ${name}`));
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const old = createDb(url.toString(), { max: 2 });
    try {
      await migrateDatabase(url.toString(), { through: '0035_tenancy_self_service' });
      // Rows as the schema of then has them: organization roles were viewer, editor and owner.
      const rows = (await old.db.execute(sql`
        with o as (insert into organizations (slug, name) values (${uniq('org')}, 'org') returning id),
             p as (insert into projects (organization_id, slug, name)
                   select o.id, s, s from o, (values (${uniq('p1')}), (${uniq('p2')})) v(s) returning id, slug),
             u as (insert into users (email, name) values (${uniq('ed') + '@example.com'}, 'ed'), (${uniq('vw') + '@example.com'}, 'vw'),
                   (${uniq('ow') + '@example.com'}, 'ow') returning id, name)
        select (select id from o) as org, (select json_agg(p order by p.slug) from p) as projects, (select json_object_agg(u.name, u.id) from u) as users`)) as unknown as {
        org: string;
        projects: { id: string; slug: string }[];
        users: Record<'ed' | 'vw' | 'ow', string>;
      }[];
      const [{ org, projects, users }] = rows;
      const [p1, p2] = projects;
      await old.db.execute(sql`
        insert into memberships (user_id, organization_id, role) values
          (${users.ed}, ${org}, 'editor'), (${users.vw}, ${org}, 'viewer'), (${users.ow}, ${org}, 'owner')`);
      // A project role above and one below what the organization gave.
      await old.db.execute(sql`
        insert into memberships (user_id, project_id, role) values (${users.ed}, ${p1.id}, 'viewer'), (${users.vw}, ${p2.id}, 'owner')`);
      await old.db.execute(sql`
        insert into invitations (organization_id, email, role, token_hash, prefix, expires_at)
        values (${org}, 'inv@example.com', 'editor', ${uniq('h')}, 'inv_', now() + interval '1 day')`);

      await migrateDatabase(url.toString());

      const after = (await old.db.execute(sql`
        select u.name, coalesce(p.slug, 'org') as scope, m.role::text as role
        from memberships m join users u on u.id = m.user_id left join projects p on p.id = m.project_id
        where u.id in (${users.ed}, ${users.vw}, ${users.ow}) order by 1, 2`)) as unknown as { name: string; scope: string; role: string }[];
      expect(after).toEqual(
        [
          { name: 'ed', scope: 'org', role: 'member' },
          { name: 'ed', scope: p1.slug, role: 'editor' },
          { name: 'ed', scope: p2.slug, role: 'editor' },
          { name: 'ow', scope: 'org', role: 'owner' },
          { name: 'vw', scope: 'org', role: 'member' },
          { name: 'vw', scope: p1.slug, role: 'viewer' },
          { name: 'vw', scope: p2.slug, role: 'owner' },
        ].sort((a, b) => (a.name + a.scope).localeCompare(b.name + b.scope)),
      );
      const [invitation] = (await old.db.execute(sql`select role::text as role from invitations where organization_id = ${org}`)) as unknown as {
        role: string;
      }[];
      expect(invitation.role).toBe('member');
      // The token functions are back, reading the new type: a token by the former organization editor acts as editor on p2.
      const [token] = (await old.db.execute(sql`
        insert into api_tokens (project_id, name, prefix, token_hash, role, created_by)
        values (${p2.id}, 't', 'mrd_', ${uniq('th')}, 'owner', ${users.ed}) returning id`)) as unknown as { id: string }[];
      const [acts] = (await old.db.execute(sql`select api_token_role(${token.id})::text as role`)) as unknown as { role: string }[];
      expect(acts.role).toBe('editor');
    } finally {
      await old.close();
      await admin.execute(sql.raw(`drop database ${name} with (force)`));
    }
  });
});

describe('organization roles on projects', () => {
  test('an organization member who holds no project role sees none of its projects; an owner sees them all', async () => {
    const { db } = testDb();
    const { org, project } = await makeProject(db);
    const member = await makeUser(db);
    const owner = await makeUser(db);
    await addMembership(db, { userId: member.id, role: 'member', organizationId: org.id }, actor);
    await addMembership(db, { userId: owner.id, role: 'owner', organizationId: org.id }, actor);
    const token = await createApiToken(db, { projectId: project.id, name: 't', role: 'editor', createdBy: member.id }, actor);
    const [row] = (await db.execute(sql`select api_token_role(${token.id})::text as role`)) as unknown as { role: string | null }[];
    expect(row.role).toBeNull();
    const byOwner = await createApiToken(db, { projectId: project.id, name: 't', role: 'editor', createdBy: owner.id }, actor);
    const [ownerRow] = (await db.execute(sql`select api_token_role(${byOwner.id})::text as role`)) as unknown as { role: string | null }[];
    expect(ownerRow.role).toBe('editor');
  });
});
