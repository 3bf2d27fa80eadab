import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCaller } from '@/server/trpc/root';
import { testDb } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { resolveProjectAccess } from './projects';
import { createSession, listSessions, resolveSession, revokeSession, revokeUserSessions } from './sessions';
import { authenticate } from './sign-in';
import { setPassword, setUserDisabledByEmail } from './users';

const actor = systemActor('test');
const password = 'correct horse battery';
const start = (userId: string, userAgent = 'test-agent') => createSession(testDb().db, { userId, userAgent, address: '192.0.2.1' });

describe('server-side sessions', () => {
  test('a session resolves to its user until it is revoked, then never again', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    const sid = await start(user.id);
    const other = await start(user.id);
    expect(await resolveSession(db, sid)).toEqual({ id: user.id, email: user.email, name: user.name, platformRoles: [] });
    await revokeSession(db, user.id, sid, actor);
    expect(await resolveSession(db, sid)).toBeUndefined();
    expect(await resolveSession(db, other)).toMatchObject({ id: user.id });
    // A second sign-out of the same session is NotFound (or quiet for the sign-out event).
    await expect(revokeSession(db, user.id, sid, actor)).rejects.toMatchObject({ code: 'NotFound' });
    await revokeSession(db, user.id, sid, actor, { quiet: true });
    // Another user cannot end this user's session by id.
    const stranger = await makeUser(db);
    await expect(revokeSession(db, stranger.id, other, actor)).rejects.toMatchObject({ code: 'NotFound' });
    expect(await resolveSession(db, other)).toMatchObject({ id: user.id });
    expect(await resolveSession(db, 'not-a-session-id')).toBeUndefined();
  });

  test('sign out everywhere ends every session of the user, and only theirs', async () => {
    const { db } = testDb();
    const user = await makeUser(db);
    const bystander = await makeUser(db);
    const sids = await Promise.all([start(user.id, 'a'), start(user.id, 'b'), start(user.id, 'c')]);
    const theirs = await start(bystander.id);
    expect((await listSessions(db, user.id)).map((s) => s.userAgent).sort()).toEqual(['a', 'b', 'c']);
    expect(await revokeUserSessions(db, user.id, actor, { reason: 'test' })).toBe(3);
    for (const sid of sids) expect(await resolveSession(db, sid)).toBeUndefined();
    expect(await listSessions(db, user.id)).toEqual([]);
    expect(await resolveSession(db, theirs)).toMatchObject({ id: bystander.id });
  });

  test('a password change ends the other sessions at once and keeps the one that made it', async () => {
    const { db } = testDb();
    const user = await makeUser(db, { password });
    const here = await start(user.id);
    const elsewhere = await start(user.id);
    await expect(
      setPassword(db, { userId: user.id, currentPassword: 'wrong', newPassword: 'a brand new one', keepSession: here }, actor),
    ).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'currentPassword',
    });
    expect(await resolveSession(db, elsewhere)).toBeDefined();
    await setPassword(db, { userId: user.id, currentPassword: password, newPassword: 'a brand new one', keepSession: here }, actor);
    expect(await resolveSession(db, here)).toMatchObject({ id: user.id });
    expect(await resolveSession(db, elsewhere)).toBeUndefined();
    expect(
      await authenticate(
        db,
        { email: user.email, password: 'a brand new one', client: '192.0.2.50' },
        { accountFreeFailures: 5, clientFreeFailures: 50, maxDelaySeconds: 60, forgetSeconds: 3600 },
      ),
    ).toMatchObject({ ok: true });
    // An administrator's reset keeps none.
    await setPassword(db, { userId: user.id, newPassword: 'reset by admin' }, actor);
    expect(await resolveSession(db, here)).toBeUndefined();
  });

  test('disabling a user ends their sessions; enabling again does not revive them', async () => {
    const { db } = testDb();
    const user = await makeUser(db);
    const sid = await start(user.id);
    await setUserDisabledByEmail(db, user.email, true, actor);
    expect(await resolveSession(db, sid)).toBeUndefined();
    await setUserDisabledByEmail(db, user.email, false, actor);
    expect(await resolveSession(db, sid)).toBeUndefined();
    expect(await resolveSession(db, await start(user.id))).toMatchObject({ id: user.id });
    await expect(setUserDisabledByEmail(db, 'nobody-here@example.com', true, actor)).rejects.toMatchObject({ code: 'NotFound', field: 'email' });
  });

  test('a session idle past its lifetime is over', async () => {
    const { db } = testDb();
    const user = await makeUser(db);
    const sid = await start(user.id);
    await db.execute(sql`update sessions set last_seen_at = now() - interval '9 hours' where id = ${sid}`);
    expect(await resolveSession(db, sid)).toBeUndefined();
    expect(await listSessions(db, user.id)).toEqual([]);
  });

  test('removing a membership takes effect on the next request of a live session (membership is checked per request)', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const member = await makeUser(db, { projectId: project.id, role: 'editor' });
    const sid = await start(member.id);
    const asMember = async () => resolveProjectAccess(db, (await resolveSession(db, sid))!, project.slug);
    expect((await asMember()).role).toBe('editor');
    await db.execute(sql`delete from memberships where user_id = ${member.id}`);
    await expect(asMember()).rejects.toMatchObject({ code: 'NotFound' });
  });

  test("the console: own sessions for everyone, anyone's for an admin only", async () => {
    const { db } = testDb();
    const user = await makeUser(db);
    const admin = await makeUser(db, { platformRoles: ['admin'] });
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const mine = await start(user.id);
    const second = await start(user.id);
    const asUser = createCaller({ db, session: { user, id: mine } });
    const listed = await asUser.sessions.list();
    expect(listed.sessions.map((s) => [s.id, s.current]).sort()).toEqual(
      [
        [mine, true],
        [second, false],
      ].sort(),
    );
    expect(listed.sessions[0]).toMatchObject({ userAgent: 'test-agent', address: '192.0.2.1' });
    await asUser.sessions.revoke({ id: second });
    expect(await resolveSession(db, second)).toBeUndefined();

    const asOperator = createCaller({ db, session: { user: operator } });
    await expect(asOperator.sessions.list({ userId: user.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asOperator.sessions.revokeAll({ userId: user.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(asOperator.users.list()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await resolveSession(db, mine)).toBeDefined();

    const asAdmin = createCaller({ db, session: { user: admin } });
    expect((await asAdmin.users.list()).find((u) => u.id === user.id)).toMatchObject({ email: user.email, sessions: 1, disabled: false });
    expect((await asAdmin.sessions.list({ userId: user.id })).sessions.map((s) => s.id)).toEqual([mine]);
    expect(await asAdmin.sessions.revokeAll({ userId: user.id })).toEqual({ revoked: 1 });
    expect(await resolveSession(db, mine)).toBeUndefined();
    await expect(asAdmin.sessions.list({ userId: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
