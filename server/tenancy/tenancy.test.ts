import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { pgError } from '@/server/errors';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { createProject } from '@/server/workflows/project-creation';
import { addMembership, listProjectsForUser, resolveProjectAccess } from './projects';
import { createApiToken, revokeApiToken, verifyApiToken } from './tokens';

const actor = systemActor('test');

describe('project access', () => {
  test('members get their role; organization roles apply to every project; others get NotFound', async () => {
    const { db } = testDb();
    const { org, project } = await makeProject(db);
    const second = await createProject(db, { organizationId: org.id, slug: uniq('p2'), name: 'second' }, actor);
    const viewer = await makeUser(db, { projectId: project.id, role: 'viewer' });
    const orgOwner = await makeUser(db);
    await addMembership(db, { userId: orgOwner.id, role: 'owner', organizationId: org.id }, actor);
    const stranger = await makeUser(db);

    expect((await resolveProjectAccess(db, viewer, project.slug)).role).toBe('viewer');
    await expect(resolveProjectAccess(db, viewer, second.slug)).rejects.toMatchObject({ code: 'NotFound' });
    expect((await resolveProjectAccess(db, orgOwner, second.slug)).role).toBe('owner');
    await expect(resolveProjectAccess(db, stranger, project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    // A project that does not exist looks exactly like one you cannot see.
    await expect(resolveProjectAccess(db, stranger, 'no-such-project')).rejects.toMatchObject({
      code: 'NotFound',
      message: 'project "no-such-project" not found',
    });

    const listed = await listProjectsForUser(db, orgOwner);
    expect(listed.map((p) => p.slug).sort()).toEqual([project.slug, second.slug].sort());
    expect(await listProjectsForUser(db, stranger)).toEqual([]);
  });

  test('an organization member keeps their project role; an organization owner owns its projects', async () => {
    const { db } = testDb();
    const { org, project } = await makeProject(db);
    const user = await makeUser(db, { projectId: project.id, role: 'editor' });
    await addMembership(db, { userId: user.id, role: 'member', organizationId: org.id }, actor);
    expect((await resolveProjectAccess(db, user, project.slug)).role).toBe('editor');
    await addMembership(db, { userId: user.id, role: 'owner', organizationId: org.id }, actor);
    expect((await resolveProjectAccess(db, user, project.slug)).role).toBe('owner');
  });

  test('project slugs are globally unique and validated', async () => {
    const { db } = testDb();
    const { org, project } = await makeProject(db);
    await expect(createProject(db, { organizationId: org.id, slug: project.slug, name: 'dup' }, actor)).rejects.toMatchObject({
      code: 'Conflict',
      field: 'slug',
    });
    await expect(createProject(db, { organizationId: org.id, slug: 'Bad Slug', name: 'x' }, actor)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'slug',
    });
  });
});

describe('API tokens', () => {
  test('stored hashed, verified, revocable, scoped to their project', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const other = await makeProject(db);
    const token = await createApiToken(db, { projectId: project.id, name: 'nodes', clusterName: 'c1' }, actor);
    const stored = await db.execute(sql`select token_hash from api_tokens where id = ${token.id}`);
    expect(JSON.stringify(stored)).not.toContain(token.secret);
    const principal = await verifyApiToken(db, token.secret);
    expect(principal).toMatchObject({ projectId: project.id, projectSlug: project.slug, clusterName: 'c1', role: 'editor' });
    await expect(revokeApiToken(db, other.project.id, token.id, actor)).rejects.toMatchObject({ code: 'NotFound' });
    await revokeApiToken(db, project.id, token.id, actor);
    expect(await verifyApiToken(db, token.secret)).toBeUndefined();
    expect(await verifyApiToken(db, 'mrd_not-a-token')).toBeUndefined();
  });

  test('the audit log is append-only', async () => {
    const { db } = testDb();
    await makeProject(db);
    const refused = (e: unknown) => /append-only/.test(pgError(e)?.message ?? '');
    await expect(db.execute(sql`update events set reason = 'tampered'`)).rejects.toSatisfy(refused);
    await expect(db.execute(sql`delete from events`)).rejects.toSatisfy(refused);
  });
});
