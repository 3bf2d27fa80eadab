/**
 * E-mail squatting: an invitation link goes to whoever invites, so anyone can invite an address
 * they do not hold and hold the link. These tests play the squatter — an organization of their own,
 * an invitation of the victim's address, the link in hand — and check that nothing they can do
 * makes an account of that address, or lets an account they made reach another tenant's data when
 * its owner later names the address. The holder of the address proves it by the mailed link (a real
 * SMTP server on loopback receives it) or an OIDC sign-in with the verified e-mail.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createDb } from '@/db/client';
import { migrateDatabase } from '@/db/migrate';
import { systemActor, type Actor } from '@/server/audit/events';
import { smtpMailer } from '@/server/mail/smtp';
import { createProjectFor } from '@/server/workflows/project-creation';
import { testDb, uniq } from '@/test/db';
import { makeUser } from '@/test/fixtures';
import { routeHandlers } from '@/test/rest';
import { startSmtpServer, type TestSmtpServer } from '@/test/smtp';
import { acceptInvitation, acceptInvitationAsNewUser, addMemberByEmail, createInvitation, listInvitations, previewInvitation } from './invitations';
import { grantRole } from './members';
import { oidcSignIn } from './oidc';
import { createOrganization, resolveProjectAccess } from './projects';
import type { SessionUser } from './roles';
import { createUserToken } from './tokens';
import { findUserByEmail, listUnverifiedInvitationAccounts, verifyEmailByAdmin } from './users';

const db = () => testDb().db;
const as = (u: SessionUser): Actor => ({ type: 'user', id: u.id, label: u.email });
const system = systemActor('test');

let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp?.close());
const mail = () => ({ mailer: smtpMailer(smtp.url, 'Meridian <meridian@example.com>'), consoleUrl: 'https://meridian.example.com' });
const secretOf = (link: string) => link.split('/invite/')[1];

/** A tenant: an owner with an organization and a project in it. */
async function tenant(name: string) {
  const owner = await makeUser(db());
  const org = await createOrganization(db(), { slug: uniq(`${name}-org`), name, owner: owner.id }, as(owner));
  const project = await createProjectFor(db(), owner, { organization: org.slug, slug: uniq(name), name }, as(owner));
  return { owner, org, project };
}

const userCount = async (email: string) =>
  ((await db().execute(sql`select count(*)::int as n from users where email = ${email}`)) as unknown as { n: number }[])[0].n;

describe('the squatter holds the link of an invitation they sent to an address they do not hold', () => {
  test('without mail: their link creates no account, and the victim tenant adding the address later grants nothing', async () => {
    const squatter = await tenant('squat');
    const victimAddress = `${uniq('victim')}@example.com`;
    const inv = await createInvitation(
      db(),
      { scope: { organizationId: squatter.org.id }, email: victimAddress, role: 'member', invitedBy: squatter.owner.id },
      as(squatter.owner),
    );
    expect(inv.mail).toBe('off');
    expect(await previewInvitation(db(), inv.secret)).toMatchObject({ email: victimAddress, userExists: false, viaMail: false });
    await expect(acceptInvitationAsNewUser(db(), inv.secret, { name: 'Not the holder', password: 'squatter password' })).rejects.toMatchObject({
      code: 'Forbidden',
      field: 'token',
    });
    expect(await userCount(victimAddress)).toBe(0);
    // The refusal did not use the link up: the address's holder may still accept it.
    expect(await previewInvitation(db(), inv.secret)).toMatchObject({ email: victimAddress });

    // Later the victim's tenant names the address: an invitation, no access for anyone yet.
    const victim = await tenant('acme');
    const added = await addMemberByEmail(db(), { projectId: victim.project.id }, victimAddress, 'editor', as(victim.owner), {
      invitedBy: victim.owner.id,
      mail: null,
    });
    expect(added).toMatchObject({ outcome: 'invited', invitation: { email: victimAddress, role: 'editor' } });
    expect(await userCount(victimAddress)).toBe(0);
    const members = await db().execute(sql`select 1 from memberships m join users u on u.id = m.user_id where u.email = ${victimAddress}`);
    expect([...members]).toEqual([]);

    // The address's real holder signs in with OIDC (verified e-mail) and accepts the victim tenant's link.
    expect(await oidcSignIn(db(), { email: victimAddress, emailVerified: true, name: 'Real Holder' })).toMatchObject({ ok: true });
    const holder = (await findUserByEmail(db(), victimAddress))!;
    expect(holder).toMatchObject({ createdVia: 'oidc', emailVerifiedBy: 'oidc' });
    const session = { id: holder.id, email: holder.email, name: holder.name, platformRoles: holder.platformRoles };
    expect(await acceptInvitation(db(), added.outcome === 'invited' ? added.invitation.secret : '', session)).toMatchObject({ role: 'editor' });
    expect((await resolveProjectAccess(db(), session, victim.project.slug)).role).toBe('editor');
  });

  test('an unverified account made from an inviter-held link (before this rule) gets nothing from being named, cannot accept, and is listed for admins', async () => {
    const squatter = await tenant('squat');
    const victimAddress = `${uniq('victim')}@example.com`;
    // The account as the old link made it: the squatter chose its password; nobody verified the address.
    const squatted = await makeUser(db(), { email: victimAddress, password: 'squatter password', origin: { createdVia: 'invitation', emailVerifiedBy: null } });
    await grantRole(db(), { organizationId: squatter.org.id }, squatted.id, 'member', as(squatter.owner));

    const victim = await tenant('acme');
    const added = await addMemberByEmail(db(), { projectId: victim.project.id }, victimAddress, 'editor', as(victim.owner), {
      invitedBy: victim.owner.id,
      mail: null,
    });
    expect(added.outcome).toBe('invited');
    await expect(resolveProjectAccess(db(), squatted, victim.project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    // Signed in as the squatted account, the inviter's link is refused: its address is not verified.
    const link = added.outcome === 'invited' ? added.invitation.secret : '';
    await expect(acceptInvitation(db(), link, squatted)).rejects.toMatchObject({ code: 'Forbidden', field: 'token' });
    await expect(resolveProjectAccess(db(), squatted, victim.project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    // The real holder's OIDC sign-in does not land in it.
    expect(await oidcSignIn(db(), { email: victimAddress, emailVerified: true })).toEqual({ ok: false, reason: 'account-unverified' });

    const listed = (await listUnverifiedInvitationAccounts(db())).find((u) => u.id === squatted.id);
    expect(listed).toMatchObject({ email: victimAddress, hasPassword: true, memberships: 1 });
    // An administrator who vouches for the address takes it off the list.
    await verifyEmailByAdmin(db(), squatted.id, system);
    expect((await listUnverifiedInvitationAccounts(db())).find((u) => u.id === squatted.id)).toBeUndefined();
  });

  test('with mail: the link goes to the address only; the squatter still cannot create the account, the holder can through the mail', async () => {
    const squatter = await tenant('squat');
    const victimAddress = `${uniq('victim')}@example.com`;
    const inv = await createInvitation(
      db(),
      { scope: { organizationId: squatter.org.id }, email: victimAddress, role: 'owner', invitedBy: squatter.owner.id },
      as(squatter.owner),
      mail(),
    );
    expect(inv.mail).toBe('sent');
    const mailed = await smtp.next(victimAddress);
    expect(mailed).toMatchObject({ from: 'meridian@example.com', to: [victimAddress] });
    expect(mailed.subject).toContain('Invitation');
    const mailedLink = /https:\/\/meridian\.example\.com\/invite\/inm_[A-Za-z0-9_-]+/.exec(mailed.text)?.[0];
    expect(mailedLink).toBeDefined();
    // The inviter's answer never carries the mailed secret.
    expect(JSON.stringify(inv)).not.toContain(secretOf(mailedLink!));
    await expect(acceptInvitationAsNewUser(db(), inv.secret, { name: 'Not the holder', password: 'squatter password' })).rejects.toMatchObject({
      code: 'Forbidden',
    });
    expect(await userCount(victimAddress)).toBe(0);

    expect(await previewInvitation(db(), secretOf(mailedLink!))).toMatchObject({ viaMail: true, userExists: false });
    await acceptInvitationAsNewUser(db(), secretOf(mailedLink!), { name: 'Real Holder', password: 'the holder chose this' });
    expect(await findUserByEmail(db(), victimAddress)).toMatchObject({ createdVia: 'invitation', emailVerifiedBy: 'invitation-mail' });
    expect(await listInvitations(db(), { organizationId: squatter.org.id })).toEqual([]);
  });

  test('with mail: an existing unverified account accepting through the mailed link has its address verified', async () => {
    const { owner, project } = await tenant('acme');
    const address = `${uniq('legacy')}@example.com`;
    const legacy = await makeUser(db(), { email: address, password: 'a long password', origin: { createdVia: 'invitation', emailVerifiedBy: null } });
    await createInvitation(db(), { scope: { projectId: project.id }, email: address, role: 'viewer', invitedBy: owner.id }, as(owner), mail());
    const mailed = secretOf(await smtp.nextInvitationLink(address));
    expect(await acceptInvitation(db(), mailed, legacy)).toMatchObject({ role: 'viewer' });
    expect(await findUserByEmail(db(), address)).toMatchObject({ emailVerifiedBy: 'invitation-mail' });
  });
});

describe('REST PUT members/{email}', () => {
  const put = async (token: string, slug: string, email: string, role: string) => {
    const res = await routeHandlers('/api/v1/projects/{project}/members/{user}').PUT(
      new Request(`http://localhost/api/v1/projects/${slug}/members/${email}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ spec: { role } }),
      }),
      { params: Promise.resolve({ project: slug, user: email }) },
    );
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  test("naming an existing user's e-mail invites them (202, no access until they accept); a member's role changes at once (200)", async () => {
    const { owner, project } = await tenant('acme');
    const token = (await createUserToken(db(), { userId: owner.id, name: 'cli' }, system)).secret;
    const existing = await makeUser(db());
    const invited = await put(token, project.slug, existing.email, 'editor');
    expect(invited).toMatchObject({ status: 202, json: { kind: 'Invitation', spec: { email: existing.email, role: 'editor' }, status: { mail: 'off' } } });
    expect((invited.json.status as { link: string }).link).toMatch(/^\/invite\/inv_/);
    await expect(resolveProjectAccess(db(), existing, project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    // They accept (their address is verified: an administrator made the account), then the owner changes their role.
    await acceptInvitation(db(), (invited.json.status as { link: string }).link.split('/invite/')[1], existing);
    expect((await resolveProjectAccess(db(), existing, project.slug)).role).toBe('editor');
    expect(await put(token, project.slug, existing.email, 'viewer')).toMatchObject({ status: 200, json: { kind: 'Member', spec: { role: 'viewer' } } });
    expect((await resolveProjectAccess(db(), existing, project.slug)).role).toBe('viewer');
  });
});

describe('migration 0040', () => {
  test('accounts made from an invitation stay unverified and are listed; the others count as verified by whoever made them', async () => {
    const { db: admin } = testDb();
    const name = uniq('mig').replace(/-/g, '_');
    await admin.execute(sql.raw(`create database ${name}`));
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const old = createDb(url.toString(), { max: 2 });
    try {
      await migrateDatabase(url.toString(), { through: '0039_cluster_deletion' });
      const at = '2026-01-02T03:04:05.678Z';
      const ids = Object.fromEntries(
        (
          (await old.db.execute(sql`
            insert into users (email, name, password_hash, created_at) values
              ('squat-by-invitation@example.com', 'a', 'scrypt$x', ${at}),
              ('squat-by-event@example.com', 'b', 'scrypt$x', now()),
              ('oidc@example.com', 'c', null, now()),
              ('seed@example.com', 'd', 'scrypt$x', now()),
              ('admin-made@example.com', 'e', 'scrypt$x', now()),
              ('joined-later@example.com', 'f', 'scrypt$x', ${at})
            returning email, id`)) as unknown as { email: string; id: string }[]
        ).map((r) => [r.email.split('@')[0], r.id]),
      );
      const [org] = (await old.db.execute(sql`insert into organizations (slug, name) values (${uniq('org')}, 'o') returning id`)) as unknown as {
        id: string;
      }[];
      // Made in the transaction that accepted the invitation: accepted_at is the user's created_at.
      await old.db.execute(sql`
        insert into invitations (organization_id, email, role, token_hash, prefix, expires_at, accepted_at, accepted_by) values
          (${org.id}, 'squat-by-invitation@example.com', 'member', ${uniq('h')}, 'inv_', now() + interval '1 day', ${at}, ${ids['squat-by-invitation']}),
          (${org.id}, 'joined-later@example.com', 'member', ${uniq('h')}, 'inv_', now() + interval '1 day', now(), ${ids['joined-later']})`);
      await old.db.execute(sql`
        insert into events (actor_type, actor_label, action, object_type, object_id, object_name) values
          ('system', 'invitation:squat-by-event@example.com', 'user.create', 'user', ${ids['squat-by-event']}, 'squat-by-event@example.com'),
          ('system', 'oidc', 'user.create', 'user', ${ids.oidc}, 'oidc@example.com'),
          ('system', 'seed', 'user.create', 'user', ${ids.seed}, 'seed@example.com'),
          ('system', 'cli', 'user.create', 'user', ${ids['admin-made']}, 'admin-made@example.com')`);

      await migrateDatabase(url.toString());

      const after = (await old.db.execute(sql`
        select split_part(email, '@', 1) as who, created_via, email_verified_by, email_verified_at = created_at as at_creation
          from users order by 1`)) as unknown as Record<string, unknown>[];
      expect(after).toEqual([
        { who: 'admin-made', created_via: 'admin', email_verified_by: 'admin', at_creation: true },
        { who: 'joined-later', created_via: 'admin', email_verified_by: 'admin', at_creation: true },
        { who: 'oidc', created_via: 'oidc', email_verified_by: 'oidc', at_creation: true },
        { who: 'seed', created_via: 'seed', email_verified_by: 'seed', at_creation: true },
        { who: 'squat-by-event', created_via: 'invitation', email_verified_by: null, at_creation: null },
        { who: 'squat-by-invitation', created_via: 'invitation', email_verified_by: null, at_creation: null },
      ]);
      expect((await listUnverifiedInvitationAccounts(old.db)).map((u) => u.email).sort()).toEqual([
        'squat-by-event@example.com',
        'squat-by-invitation@example.com',
      ]);
    } finally {
      await old.close();
      await admin.execute(sql.raw(`drop database ${name} with (force)`));
    }
  });
});
