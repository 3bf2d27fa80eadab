/**
 * Accepting an invitation through OIDC: the provider's identity becomes (or is) the Meridian user
 * of that e-mail, and the invitation is accepted for that user only when the e-mail is the
 * invited one. (Here the identity is handed over as next-auth's signIn callback hands it; the flow
 * through a real OpenID provider is server/auth/oidc-provider.test.ts and e2e/oidc.spec.ts.)
 */
import { sql } from 'drizzle-orm';
import { describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { acceptInvitation, createInvitation, previewInvitation } from './invitations';
import { oidcSignIn } from './oidc';
import { resolveProjectAccess } from './projects';
import { findUserByEmail, setUserDisabled } from './users';

const actor = systemActor('test');
const db = () => testDb().db;

/** The signed-in user the session would carry after the OIDC sign-in. */
async function sessionUserOf(email: string) {
  const u = (await findUserByEmail(db(), email))!;
  return { id: u.id, email: u.email, name: u.name, platformRoles: u.platformRoles };
}

describe('OIDC sign-in', () => {
  test('a first sign-in creates the user of that e-mail (no password, no roles); the next one finds it', async () => {
    const email = `${uniq('sso')}@Example.com`;
    const first = await oidcSignIn(db(), { email, emailVerified: true, name: 'Sam SSO' });
    expect(first).toMatchObject({ ok: true, user: { email: email.toLowerCase() } });
    const again = await oidcSignIn(db(), { email: email.toLowerCase(), emailVerified: true });
    expect(again).toEqual(first);
    const [row] = (await db().execute(
      sql`select name, password_hash, platform_roles::text[] as roles from users where email = ${email.toLowerCase()}`,
    )) as unknown as {
      name: string;
      password_hash: string | null;
      roles: string[];
    }[];
    expect(row).toEqual({ name: 'Sam SSO', password_hash: null, roles: [] });
  });

  test('refused without an e-mail, with an unverified e-mail (nothing created), and for a disabled user', async () => {
    expect(await oidcSignIn(db(), { email: null })).toEqual({ ok: false, reason: 'no-email' });
    const unverified = `${uniq('unv')}@example.com`;
    expect(await oidcSignIn(db(), { email: unverified, emailVerified: false })).toEqual({ ok: false, reason: 'unverified' });
    expect(await findUserByEmail(db(), unverified)).toBeUndefined();
    const user = await makeUser(db());
    await setUserDisabled(db(), user.id, true, actor);
    expect(await oidcSignIn(db(), { email: user.email, emailVerified: true })).toEqual({ ok: false, reason: 'disabled' });
  });

  test('two first sign-ins of one e-mail at once make one user', async () => {
    const email = `${uniq('race')}@example.com`;
    const [a, b] = await Promise.all([oidcSignIn(db(), { email }), oidcSignIn(db(), { email })]);
    expect(a).toEqual(b);
    const [{ n }] = (await db().execute(sql`select count(*)::int as n from users where email = ${email}`)) as unknown as { n: number }[];
    expect(n).toBe(1);
  });
});

describe('an invitation accepted after signing in with OIDC', () => {
  test('a new person invited by e-mail signs in with the provider and joins with the role; the link is then used', async () => {
    const { project } = await makeProject(db());
    const email = `${uniq('new')}@example.com`;
    const inv = await createInvitation(db(), { scope: { projectId: project.id }, email, role: 'editor', invitedBy: null }, actor);
    expect(await previewInvitation(db(), inv.secret)).toMatchObject({ userExists: false });
    expect(await oidcSignIn(db(), { email, emailVerified: true, name: 'New Person' })).toMatchObject({ ok: true });
    const user = await sessionUserOf(email);
    expect(await acceptInvitation(db(), inv.secret, user)).toMatchObject({ project: project.slug, role: 'editor' });
    expect((await resolveProjectAccess(db(), user, project.slug)).role).toBe('editor');
    await expect(previewInvitation(db(), inv.secret)).rejects.toMatchObject({ code: 'LinkUnusable' });
  });

  test('an identity with another e-mail is refused and the link stays usable for the invited one', async () => {
    const { project } = await makeProject(db());
    const invited = `${uniq('inv')}@example.com`;
    const inv = await createInvitation(db(), { scope: { projectId: project.id }, email: invited, role: 'viewer', invitedBy: null }, actor);
    const other = `${uniq('other')}@example.com`;
    await oidcSignIn(db(), { email: other, emailVerified: true });
    const otherUser = await sessionUserOf(other);
    await expect(acceptInvitation(db(), inv.secret, otherUser)).rejects.toMatchObject({ code: 'Forbidden', field: 'token' });
    await expect(resolveProjectAccess(db(), otherUser, project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    expect(await previewInvitation(db(), inv.secret)).toMatchObject({ email: invited, role: 'viewer' });
    await oidcSignIn(db(), { email: invited, emailVerified: true });
    expect(await acceptInvitation(db(), inv.secret, await sessionUserOf(invited))).toMatchObject({ role: 'viewer' });
  });
});
