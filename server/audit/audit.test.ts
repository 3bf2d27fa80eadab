import { sql } from 'drizzle-orm';
import { describe, expect, test, inject } from 'vitest';
import { createDb } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { createCaller } from '@/server/trpc/root';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { auditCsv, csvField } from './csv';
import { auditFilterChoices, listEvents, recordEvent, systemActor } from './events';

describe('audit log listing', () => {
  test('filters by project, actor, object kind, action and time range, and pages by keyset without gaps or repeats', async () => {
    const { db } = testDb();
    const { project: a } = await makeProject(db);
    const { project: b } = await makeProject(db);
    const actorA = systemActor(uniq('job-a'));
    const actorB = systemActor(uniq('job-b'));
    // 30 events in a, alternating actors and kinds; 5 in b. All inside one transaction: one `at` for all,
    // so the pages are told apart by id alone (the keyset must still not repeat or skip).
    await db.transaction(async (tx) => {
      for (let i = 0; i < 30; i++) {
        await recordEvent(tx, {
          actor: i % 2 ? actorA : actorB,
          projectId: a.id,
          action: i % 3 ? 'machine.release.requested' : 'network.create',
          objectType: i % 3 ? 'machine' : 'network',
          objectName: `obj-${i}`,
        });
      }
      for (let i = 0; i < 5; i++)
        await recordEvent(tx, { actor: actorA, projectId: b.id, action: 'token.create', objectType: 'apiToken', objectName: `t-${i}` });
    });

    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listEvents(db, { projectId: a.id, limit: 7, cursor });
      all.push(...page.items.map((e) => e.objectName!));
      expect(page.items.every((e) => e.projectSlug === a.slug)).toBe(true);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    // The project's own creation events come last (oldest); ours page newest first, each once.
    expect(all.slice(0, 30)).toEqual(Array.from({ length: 30 }, (_, i) => `obj-${29 - i}`));
    expect(new Set(all).size).toBe(all.length);

    const byActor = await listEvents(db, { projectId: a.id, actor: actorA.label, limit: 100 });
    expect(byActor.items).toHaveLength(15);
    const machines = await listEvents(db, { projectId: a.id, objectType: 'machine', limit: 100 });
    expect(machines.items.map((e) => e.action)).toEqual(Array(20).fill('machine.release.requested'));
    expect((await listEvents(db, { projectId: a.id, action: 'network.create', limit: 100 })).items).toHaveLength(10);
    // An action ending in a dot is every action under it; LIKE wildcards in it are literal.
    expect((await listEvents(db, { projectId: a.id, action: 'machine.', limit: 100 })).items).toHaveLength(20);
    expect((await listEvents(db, { projectId: a.id, action: 'mach_ne.', limit: 100 })).items).toHaveLength(0);
    expect((await listEvents(db, { actor: actorA.label, action: 'token.create', limit: 100 })).items.map((e) => e.projectSlug)).toEqual(Array(5).fill(b.slug));
    const future = new Date(Date.now() + 3_600_000);
    expect((await listEvents(db, { projectId: a.id, since: future, limit: 100 })).items).toHaveLength(0);
    expect(
      (await listEvents(db, { projectId: a.id, actor: actorA.label, until: future, since: new Date(Date.now() - 3_600_000), limit: 100 })).items,
    ).toHaveLength(15);
    await expect(listEvents(db, { limit: 5, cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'ValidationFailed' });
  });

  test('pages by (time, id): events of different times page newest first across pages', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    for (let i = 0; i < 12; i++) {
      await recordEvent(db, { actor: systemActor('t'), projectId: project.id, action: 'pool.create', objectType: 'pool', objectName: `p-${i}` });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listEvents(db, { projectId: project.id, objectType: 'pool', limit: 5, cursor });
      seen.push(...page.items.map((e) => e.objectName!));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `p-${11 - i}`));
  });

  test('the filter choices list the actions and kinds that occur; projects only for operators', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    await recordEvent(db, { actor: systemActor('t'), projectId: project.id, action: 'machine.release.requested', objectType: 'machine' });
    const choices = await auditFilterChoices(db);
    expect(choices.actions).toContain('machine.release.requested');
    expect(choices.actions).toEqual([...choices.actions].sort());
    expect(choices.objectTypes).toContain('machine');
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const tenant = await makeUser(db, { projectId: project.id, role: 'viewer' });
    const asOperator = createCaller({ db, session: { user: operator, id: 's1' } });
    const asTenant = createCaller({ db, session: { user: tenant, id: 's2' } });
    expect((await asOperator.audit.filterChoices()).projects.map((p) => p.slug)).toContain(project.slug);
    expect((await asTenant.audit.filterChoices()).projects).toEqual([]);
    await expect(asTenant.audit.list({ limit: 5 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('audit CSV', () => {
  test.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM', "'@SUM"],
    [null, ''],
  ])('field %j is written as %s', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  test('the export holds the whole filtered set, header first, across many pages', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const actor = systemActor(uniq('csv'));
    await db.transaction(async (tx) => {
      for (let i = 0; i < 2_500; i++) await recordEvent(tx, { actor, projectId: project.id, action: 'pool.create', objectType: 'pool', objectName: `p-${i}` });
    });
    let text = '';
    for await (const chunk of auditCsv(db, { projectId: project.id, actor: actor.label })) text += chunk;
    const lines = text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('time,project,actor_type,actor,action,object_type,object_id,object_name,reason');
    expect(lines).toHaveLength(2_501);
    expect(lines[1]).toContain(`,${project.slug},system,${actor.label},pool.create,pool,,p-2499,`);
    expect(new Set(lines).size).toBe(2_501);
  });
});

describe('migration 0032', () => {
  test('renames the machine events of earlier versions to names that say what happened', async () => {
    const { db: admin } = testDb();
    const name = uniq('mig').replace(/-/g, '_');
    await admin.execute(sql.raw(`create database ${name}`));
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const old = createDb(url.toString(), { max: 2 });
    try {
      await migrateDatabase(url.toString(), { through: '0031_token_rights' });
      for (const action of ['machine.delete', 'machine.forceRelease', 'machine.reject', 'machine.create']) {
        await old.db.execute(sql`insert into events (actor_type, actor_label, action, object_type) values ('system', 'old', ${action}, 'machine')`);
      }
      await migrateDatabase(url.toString());
      const rows = (await old.db.execute(sql`select action from events where actor_label = 'old' order by id`)) as unknown as { action: string }[];
      expect(rows.map((r) => r.action)).toEqual(['machine.release.requested', 'machine.release.forced', 'machine.request.rejected', 'machine.create']);
      // The log is append-only again afterwards.
      await expect(old.db.execute(sql`update events set action = 'x' where actor_label = 'old'`)).rejects.toThrow();
    } finally {
      await old.close();
      await admin.execute(sql.raw(`drop database ${name} with (force)`));
    }
  });
});
