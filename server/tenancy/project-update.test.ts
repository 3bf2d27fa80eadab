/** Editing a project after creation: display name and description, by owners, audited. */
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCaller } from '@/server/trpc/root';
import { requestProjectDeletion } from '@/server/workflows/project-deletion';
import { testDb } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { updateProject } from './projects';

const actor = systemActor('test');

describe('updateProject', () => {
  test('changes the name and description it is given, audits before and after, and leaves the slug', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const updated = await updateProject(db, project.id, { name: '  New name ', description: 'What it is for' }, actor);
    expect(updated).toEqual({ id: project.id, slug: project.slug, name: 'New name', description: 'What it is for' });
    await updateProject(db, project.id, { description: '' }, actor);
    const [row] = (await db.execute(sql`select slug, name, description from projects where id = ${project.id}`)) as unknown as {
      slug: string;
      name: string;
      description: string;
    }[];
    expect(row).toEqual({ slug: project.slug, name: 'New name', description: '' });
    const events = (await db.execute(
      sql`select before, after from events where project_id = ${project.id} and action = 'project.update' order by id`,
    )) as unknown as { before: unknown; after: unknown }[];
    expect(events).toEqual([
      { before: { name: project.slug, description: '' }, after: { name: 'New name', description: 'What it is for' } },
      { before: { description: 'What it is for' }, after: { description: '' } },
    ]);
  });

  test('bad input is ValidationFailed naming the field, and nothing changes; a project being deleted is not changed', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const events = async () =>
      (
        (await db.execute(sql`select count(*)::int as n from events where project_id = ${project.id} and action = 'project.update'`)) as unknown as {
          n: number;
        }[]
      )[0].n;
    await expect(updateProject(db, project.id, { name: '   ' }, actor)).rejects.toMatchObject({ code: 'ValidationFailed', field: 'name' });
    await expect(updateProject(db, project.id, { name: 'x'.repeat(101) }, actor)).rejects.toMatchObject({ code: 'ValidationFailed', field: 'name' });
    await expect(updateProject(db, project.id, { description: 'x'.repeat(1001) }, actor)).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'description',
    });
    await expect(updateProject(db, project.id, {}, actor)).rejects.toMatchObject({ code: 'ValidationFailed', field: 'name' });
    expect(await events()).toBe(0);
    await requestProjectDeletion(db, project.id, actor, 'test');
    await expect(updateProject(db, project.id, { name: 'late' }, actor)).rejects.toMatchObject({ code: 'ProjectDeleting' });
    expect(await events()).toBe(0);
  });

  test('over tRPC: owners change it; editors are refused and nothing changes', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const owner = await makeUser(db, { projectId: project.id, role: 'owner' });
    const editor = await makeUser(db, { projectId: project.id, role: 'editor' });
    await expect(createCaller({ db, session: { user: editor } }).projects.update({ project: project.slug, name: 'By editor' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    const changed = await createCaller({ db, session: { user: owner } }).projects.update({ project: project.slug, name: 'By owner', description: 'd' });
    expect(changed).toMatchObject({ name: 'By owner', description: 'd' });
    expect(await createCaller({ db, session: { user: editor } }).projects.get({ project: project.slug })).toMatchObject({ name: 'By owner', description: 'd' });
  });
});
