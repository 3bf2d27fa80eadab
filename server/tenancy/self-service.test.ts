import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemActor, type Actor } from '@/server/audit/events';
import { createClaim } from '@/server/ipam/claims';
import { createNetwork } from '@/server/ipam/networks';
import { listBuckets } from '@/server/quota/buckets';
import { createProjectFor } from '@/server/workflows/project-creation';
import { testDb, uniq } from '@/test/db';
import { makeUser } from '@/test/fixtures';
import { createCaller } from '@/server/trpc/root';
import { startSmtpServer, type TestSmtpServer } from '@/test/smtp';
import { smtpMailer } from '@/server/mail/smtp';
import {
  acceptInvitation,
  acceptInvitationAsNewUser,
  addMemberByEmail,
  createInvitation,
  listInvitations,
  previewInvitation,
  revokeInvitation,
} from './invitations';
import { grantRole, listMembers, removeMember, setMemberRole } from './members';
import { deleteOrganization, listOrganizationsForUser, renameOrganization, resolveOrganizationAccess } from './organizations';
import { createPasswordReset, usePasswordReset } from './password-resets';
import { verifyPassword } from './password';
import { createOrganization, listProjectsForUser, resolveProjectAccess } from './projects';
import type { SessionUser } from './roles';
import { createSession, resolveSession } from './sessions';
import { createUserToken, verifyApiToken } from './tokens';
import { findUserByEmail, setPlatformRoles, setUserDisabled } from './users';

const system = systemActor('test');
const as = (u: SessionUser): Actor => ({ type: 'user', id: u.id, label: u.email });
const db = () => testDb().db;

async function eventsOf(objectId: string) {
  return (await db().execute(sql`select action from events where object_id = ${objectId} order by id`)) as unknown as { action: string }[];
}

/** A user with their own organization (as owner) and a project in it (as owner). */
async function ownerWithProject() {
  const owner = await makeUser(db());
  const org = await createOrganization(db(), { slug: uniq('org'), name: 'Org', owner: owner.id }, as(owner));
  const project = await createProjectFor(db(), owner, { organization: org.slug, slug: uniq('prj'), name: 'Project' }, as(owner));
  return { owner, org, project };
}

describe('organizations', () => {
  test('a user creates one and owns it; slugs are validated, unique and not reserved; nothing half-created', async () => {
    const user = await makeUser(db());
    const slug = uniq('org');
    const org = await createOrganization(db(), { slug, name: '  Acme  ', owner: user.id }, as(user));
    expect(org.name).toBe('Acme');
    expect((await resolveOrganizationAccess(db(), user, slug)).role).toBe('owner');
    expect((await listOrganizationsForUser(db(), user)).map((o) => [o.slug, o.role])).toEqual([[slug, 'owner']]);
    await expect(createOrganization(db(), { slug, name: 'again', owner: user.id }, as(user))).rejects.toMatchObject({ code: 'Conflict', field: 'slug' });
    for (const bad of ['new', 'admin', 'Upper', '-x', 'a_b', '']) {
      await expect(createOrganization(db(), { slug: bad, name: 'x', owner: user.id }, as(user))).rejects.toMatchObject({
        code: 'ValidationFailed',
        field: 'slug',
      });
    }
    await expect(createOrganization(db(), { slug: uniq('org'), name: '   ', owner: user.id }, as(user))).rejects.toMatchObject({ code: 'ValidationFailed' });
    // Only the one organization exists for this user, with one membership.
    expect(await listOrganizationsForUser(db(), user)).toHaveLength(1);
    expect(await eventsOf(org.id)).toEqual([{ action: 'organization.create' }]);
    // Other users do not see it; operators do (read only).
    const stranger = await makeUser(db());
    await expect(resolveOrganizationAccess(db(), stranger, slug)).rejects.toMatchObject({ code: 'NotFound' });
    const operator = await makeUser(db(), { platformRoles: ['operator'] });
    expect((await resolveOrganizationAccess(db(), operator, slug)).role).toBeNull();
  });

  test('owners rename it, and delete it only when it holds no projects', async () => {
    const { owner, org, project } = await ownerWithProject();
    await renameOrganization(db(), org.id, 'Renamed', as(owner));
    expect((await resolveOrganizationAccess(db(), owner, org.slug)).organization.name).toBe('Renamed');
    await expect(deleteOrganization(db(), org.id, as(owner))).rejects.toMatchObject({ code: 'Conflict' });
    await db().execute(sql`delete from projects where id = ${project.id}`);
    await deleteOrganization(db(), org.id, as(owner));
    await expect(resolveOrganizationAccess(db(), owner, org.slug)).rejects.toMatchObject({ code: 'NotFound' });
    expect((await eventsOf(org.id)).map((e) => e.action)).toEqual(['organization.create', 'organization.rename', 'organization.delete']);
  });
});

describe('projects created by users', () => {
  test('the creator owns it and it has its quota at once: the first claim is Bound and the bucket reads 100 / 1 / 99', async () => {
    const { owner, project } = await ownerWithProject();
    expect((await resolveProjectAccess(db(), owner, project.slug)).role).toBe('owner');
    const before = (await listBuckets(db(), project.id)).find((b) => b.resourceType === 'ipam.miloapis.com/ipclaims');
    expect(before).toMatchObject({ limit: 100, allocated: 0 });
    await createNetwork(db(), project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }] }, as(owner));
    const claim = await createClaim(db(), project.id, { name: 'c1', network: 'vpc', prefixLength: 28, reclaimPolicy: 'Delete' }, as(owner));
    expect(claim).toMatchObject({ claim: { phase: 'Bound' } });
    const bucket = (await listBuckets(db(), project.id)).find((b) => b.resourceType === 'ipam.miloapis.com/ipclaims');
    expect(bucket).toMatchObject({ limit: 100, allocated: 1, available: 99 });
  });

  test('organization members create projects and own them, without a role on the others; strangers see nothing; duplicates leave nothing behind', async () => {
    const { owner, org, project } = await ownerWithProject();
    const member = await makeUser(db());
    await grantRole(db(), { organizationId: org.id }, member.id, 'member', as(owner));
    const made = await createProjectFor(db(), member, { organization: org.slug, slug: uniq('m'), name: 'By member', description: 'd' }, as(member));
    expect((await resolveProjectAccess(db(), member, made.slug)).role).toBe('owner');
    // Being a member of the organization gives no role on the projects of others.
    await expect(resolveProjectAccess(db(), member, project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    expect((await listProjectsForUser(db(), member)).map((p) => p.slug)).toEqual([made.slug]);
    // The organization's owner owns the member's project.
    expect((await resolveProjectAccess(db(), owner, made.slug)).role).toBe('owner');
    const stranger = await makeUser(db());
    await expect(createProjectFor(db(), stranger, { organization: org.slug, slug: uniq('s'), name: 'x' }, as(stranger))).rejects.toMatchObject({
      code: 'NotFound',
    });
    const count = async () =>
      ((await db().execute(sql`select count(*)::int as n from projects where organization_id = ${org.id}`)) as unknown as { n: number }[])[0].n;
    const grants = async () => ((await db().execute(sql`select count(*)::int as n from resource_grants`)) as unknown as { n: number }[])[0].n;
    const [n, g] = [await count(), await grants()];
    await expect(createProjectFor(db(), owner, { organization: org.slug, slug: project.slug, name: 'dup' }, as(owner))).rejects.toMatchObject({
      code: 'Conflict',
      field: 'slug',
    });
    await expect(createProjectFor(db(), owner, { organization: org.slug, slug: 'projects', name: 'reserved' }, as(owner))).rejects.toMatchObject({
      code: 'ValidationFailed',
      field: 'slug',
    });
    expect([await count(), await grants()]).toEqual([n, g]);
  });
});

describe('members and roles', () => {
  test('owners change roles and remove members; a member leaves; every change is an audit event', async () => {
    const { owner, project } = await ownerWithProject();
    const member = await makeUser(db());
    const scope = { projectId: project.id };
    await grantRole(db(), scope, member.id, 'editor', as(owner));
    await setMemberRole(db(), scope, member.id, 'viewer', as(owner));
    expect((await resolveProjectAccess(db(), member, project.slug)).role).toBe('viewer');
    await removeMember(db(), scope, member.id, as(owner));
    await expect(resolveProjectAccess(db(), member, project.slug)).rejects.toMatchObject({ code: 'NotFound' });
    await grantRole(db(), scope, member.id, 'editor', as(owner));
    await removeMember(db(), scope, member.id, as(member), { leaving: true });
    expect((await eventsOf(member.id)).map((e) => e.action)).toEqual([
      'user.create',
      'membership.add',
      'membership.role',
      'membership.remove',
      'membership.add',
      'membership.leave',
    ]);
    // Naming an address that is not a member invites it: nothing joins without accepting.
    const nobody = `${uniq('nobody')}@example.com`;
    expect(await addMemberByEmail(db(), scope, nobody, 'viewer', as(owner), { invitedBy: owner.id, mail: null })).toMatchObject({
      outcome: 'invited',
      invitation: { email: nobody, role: 'viewer', mail: 'off' },
    });
  });

  test('the last owner can be neither demoted, removed, nor leave', async () => {
    const { owner, org, project } = await ownerWithProject();
    for (const [scope, lower] of [
      [{ projectId: project.id }, 'viewer'],
      [{ organizationId: org.id }, 'member'],
    ] as const) {
      await expect(setMemberRole(db(), scope, owner.id, lower, as(owner))).rejects.toMatchObject({ code: 'LastOwner' });
      await expect(removeMember(db(), scope, owner.id, as(owner))).rejects.toMatchObject({ code: 'LastOwner' });
      await expect(removeMember(db(), scope, owner.id, as(owner), { leaving: true })).rejects.toMatchObject({ code: 'LastOwner' });
      await expect(grantRole(db(), scope, owner.id, lower, as(owner), { exact: true })).rejects.toMatchObject({ code: 'LastOwner' });
      expect((await listMembers(db(), scope)).map((m) => m.role)).toEqual(['owner']);
    }
  });

  test('two owners demoting each other at the same moment: exactly one owner remains', async () => {
    for (let round = 0; round < 8; round++) {
      const { owner: a, project } = await ownerWithProject();
      const b = await makeUser(db());
      const scope = { projectId: project.id };
      await grantRole(db(), scope, b.id, 'owner', as(a));
      const results = await Promise.allSettled([setMemberRole(db(), scope, b.id, 'editor', as(a)), setMemberRole(db(), scope, a.id, 'viewer', as(b))]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'LastOwner' } });
      const owners = (await listMembers(db(), scope)).filter((m) => m.role === 'owner');
      expect(owners).toHaveLength(1);
    }
  });

  test('two owners removing each other at the same moment: exactly one owner remains', async () => {
    const { owner: a, org } = await ownerWithProject();
    const b = await makeUser(db());
    const scope = { organizationId: org.id };
    await grantRole(db(), scope, b.id, 'owner', as(a));
    const results = await Promise.allSettled([removeMember(db(), scope, b.id, as(a)), removeMember(db(), scope, a.id, as(b), { leaving: false })]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await listMembers(db(), scope)).filter((m) => m.role === 'owner')).toHaveLength(1);
  });
});

describe('invitations', () => {
  // Mail goes through nodemailer to a real SMTP server on loopback, which the test reads.
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(() => smtp?.close());
  const mail = () => ({ mailer: smtpMailer(smtp.url, 'Meridian <meridian@example.com>'), consoleUrl: 'https://meridian.example.com' });
  const mailedSecret = async (email: string) => (await smtp.nextInvitationLink(email)).split('/invite/')[1];

  test('a new user accepts through the mailed link with a password and lands in the project with the role; the links are single use and stored as hashes', async () => {
    const { owner, project } = await ownerWithProject();
    const email = `${uniq('new')}@Example.com`;
    const inv = await createInvitation(db(), { scope: { projectId: project.id }, email, role: 'editor', invitedBy: owner.id }, as(owner), mail());
    expect(inv.mail).toBe('sent');
    const mailed = await mailedSecret(email);
    const stored = await db().execute(sql`select * from invitations where id = ${inv.id}`);
    expect(JSON.stringify(stored)).not.toContain(inv.secret.slice(4));
    expect(JSON.stringify(stored)).not.toContain(mailed.slice(4));
    expect(inv.path).toBe(`/invite/${inv.secret}`);
    expect(await previewInvitation(db(), inv.secret)).toMatchObject({ email: email.toLowerCase(), role: 'editor', project: project.slug, userExists: false });
    expect((await listInvitations(db(), { projectId: project.id })).map((i) => i.email)).toEqual([email.toLowerCase()]);

    await expect(acceptInvitationAsNewUser(db(), mailed, { name: 'New', password: 'short' })).rejects.toMatchObject({ field: 'password' });
    const joined = await acceptInvitationAsNewUser(db(), mailed, { name: 'New Person', password: 'a long password' });
    expect(joined).toMatchObject({ project: project.slug, role: 'editor' });
    const user = (await findUserByEmail(db(), email))!;
    expect(await verifyPassword('a long password', user.passwordHash!)).toBe(true);
    expect(user).toMatchObject({ createdVia: 'invitation', emailVerifiedBy: 'invitation-mail' });
    expect((await resolveProjectAccess(db(), { ...user, platformRoles: [] }, project.slug)).role).toBe('editor');
    await expect(acceptInvitationAsNewUser(db(), mailed, { name: 'Again', password: 'a long password' })).rejects.toMatchObject({ code: 'LinkUnusable' });
    await expect(previewInvitation(db(), inv.secret)).rejects.toMatchObject({ code: 'LinkUnusable' });
    await expect(previewInvitation(db(), mailed)).rejects.toMatchObject({ code: 'LinkUnusable' });
    expect(await listInvitations(db(), { projectId: project.id })).toEqual([]);
  });

  test('expired, revoked and made-up links are refused; the wrong user cannot accept; members are not invited again; bad e-mails are 400', async () => {
    const { owner, project } = await ownerWithProject();
    const scope = { projectId: project.id };
    const invitee = await makeUser(db());
    const expired = await createInvitation(db(), { scope, email: invitee.email, role: 'viewer', invitedBy: owner.id }, as(owner));
    await db().execute(sql`update invitations set expires_at = now() - interval '1 second' where id = ${expired.id}`);
    await expect(acceptInvitation(db(), expired.secret, invitee)).rejects.toMatchObject({ code: 'LinkUnusable', message: expect.stringContaining('expired') });

    const revoked = await createInvitation(db(), { scope, email: invitee.email, role: 'viewer', invitedBy: owner.id }, as(owner));
    await revokeInvitation(db(), scope, revoked.id, as(owner));
    await expect(acceptInvitation(db(), revoked.secret, invitee)).rejects.toMatchObject({ code: 'LinkUnusable', message: expect.stringContaining('revoked') });
    await expect(previewInvitation(db(), 'inv_made-up')).rejects.toMatchObject({ code: 'LinkUnusable' });

    const good = await createInvitation(db(), { scope, email: invitee.email, role: 'viewer', invitedBy: owner.id }, as(owner));
    const other = await makeUser(db());
    await expect(acceptInvitation(db(), good.secret, other)).rejects.toMatchObject({ code: 'Forbidden' });
    // The refused attempt did not use the link up.
    expect(await acceptInvitation(db(), good.secret, invitee)).toMatchObject({ role: 'viewer', project: project.slug });
    await expect(createInvitation(db(), { scope, email: invitee.email, role: 'editor', invitedBy: owner.id }, as(owner))).rejects.toMatchObject({
      code: 'Conflict',
    });
    for (const bad of ['not-an-email', 'a@b', 'x y@example.com']) {
      await expect(createInvitation(db(), { scope, email: bad, role: 'viewer', invitedBy: owner.id }, as(owner))).rejects.toMatchObject({
        code: 'ValidationFailed',
        field: 'email',
      });
    }
  });

  test('a link accepted twice at the same moment makes exactly one account', async () => {
    const { owner, project } = await ownerWithProject();
    const email = `${uniq('race')}@example.com`;
    await createInvitation(db(), { scope: { projectId: project.id }, email, role: 'viewer', invitedBy: owner.id }, as(owner), mail());
    const mailed = await mailedSecret(email);
    const results = await Promise.allSettled([0, 1, 2].map(() => acceptInvitationAsNewUser(db(), mailed, { name: 'R', password: 'password-1234' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rows = (await db().execute(sql`select count(*)::int as n from users where email = ${email}`)) as unknown as { n: number }[];
    expect(rows[0].n).toBe(1);
  });
});

describe('platform administration', () => {
  test('disabling a user ends their sessions and stops their user tokens at once; enabling restores the tokens', async () => {
    const user = await makeUser(db());
    const session = await createSession(db(), { userId: user.id, userAgent: 't', address: '192.0.2.1' });
    const token = await createUserToken(db(), { userId: user.id, name: 'cli' }, system);
    expect(await verifyApiToken(db(), token.secret)).toMatchObject({ kind: 'user', userId: user.id });
    await setUserDisabled(db(), user.id, true, system);
    expect(await resolveSession(db(), session)).toBeUndefined();
    expect(await verifyApiToken(db(), token.secret)).toBeUndefined();
    await setUserDisabled(db(), user.id, false, system);
    expect(await verifyApiToken(db(), token.secret)).toMatchObject({ kind: 'user' });
  });

  test('a password-reset link works once, sets the password and ends every session', async () => {
    const user = await makeUser(db(), { password: 'the old password' });
    const session = await createSession(db(), { userId: user.id, userAgent: 't', address: '192.0.2.1' });
    const link = await createPasswordReset(db(), user.id, null, system);
    expect(link.path).toBe(`/reset-password/${link.secret}`);
    await usePasswordReset(db(), link.secret, 'the new password');
    const stored = (await findUserByEmail(db(), user.email))!;
    expect(await verifyPassword('the new password', stored.passwordHash!)).toBe(true);
    expect(await resolveSession(db(), session)).toBeUndefined();
    await expect(usePasswordReset(db(), link.secret, 'another password')).rejects.toMatchObject({ code: 'LinkUnusable' });
    // A newer link replaces an older unused one.
    const first = await createPasswordReset(db(), user.id, null, system);
    await createPasswordReset(db(), user.id, null, system);
    await expect(usePasswordReset(db(), first.secret, 'yet another one')).rejects.toMatchObject({ code: 'LinkUnusable' });
  });

  test('platform roles are granted and removed; the last admin keeps the admin role', async () => {
    const user = await makeUser(db());
    expect((await setPlatformRoles(db(), user.id, ['operator', 'qa'], system)).platformRoles).toEqual(['operator', 'qa']);
    expect((await setPlatformRoles(db(), user.id, [], system)).platformRoles).toEqual([]);
    // Alone as admin (in this test's view, others may exist in the shared database): removing the
    // role is refused only when no other enabled admin remains.
    const admins = (await db().execute(sql`select count(*)::int as n from users where 'admin' = any(platform_roles) and disabled_at is null`)) as unknown as {
      n: number;
    }[];
    const admin = await makeUser(db(), { platformRoles: ['admin'] });
    if (admins[0].n === 0) {
      await expect(setPlatformRoles(db(), admin.id, [], system)).rejects.toMatchObject({ code: 'LastOwner' });
    } else {
      expect((await setPlatformRoles(db(), admin.id, [], system)).platformRoles).toEqual([]);
    }
  });
});

test('an admin neither takes away their own admin role nor disables themselves; another admin can', async () => {
  const me = await makeUser(db(), { platformRoles: ['admin', 'operator'] });
  const other = await makeUser(db(), { platformRoles: ['admin'] });
  const mine = createCaller({ db: db(), session: { user: me } });
  await expect(mine.users.setPlatformRoles({ userId: me.id, roles: ['operator'] })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  await expect(mine.users.setDisabled({ userId: me.id, disabled: true })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  // Refused means unchanged; dropping another role of one's own is fine.
  expect((await findUserByEmail(db(), me.email))?.platformRoles.sort()).toEqual(['admin', 'operator']);
  expect((await mine.users.setPlatformRoles({ userId: me.id, roles: ['admin'] })).platformRoles).toEqual(['admin']);
  const theirs = createCaller({ db: db(), session: { user: other } });
  expect((await theirs.users.setPlatformRoles({ userId: me.id, roles: [] })).platformRoles).toEqual([]);
});

describe('REST v1 with user tokens', () => {
  const call = async (method: string, path: string, pattern: string, params: Record<string, string>, token: string, body?: unknown) => {
    const { routeHandlers } = await import('@/test/rest');
    const res = await routeHandlers(pattern)[method as 'GET'](
      new Request(`http://localhost${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      }),
      { params: Promise.resolve(params) },
    );
    return { status: res.status, json: (await res.json()) as Record<string, unknown> & { error?: { code: string } } };
  };

  test('a user token creates an organization and a project with its quota; a project token cannot; duplicates and reserved slugs are refused', async () => {
    const user = await makeUser(db());
    const token = (await createUserToken(db(), { userId: user.id, name: 'laptop' }, system)).secret;
    const org = uniq('rorg');
    const made = await call('POST', '/api/v1/organizations', '/api/v1/organizations', {}, token, { metadata: { name: org }, spec: { displayName: 'R' } });
    expect(made).toMatchObject({ status: 201, json: { kind: 'Organization', metadata: { name: org }, status: { role: 'owner' } } });
    const slug = uniq('rprj');
    const body = { metadata: { name: slug, organization: org }, spec: { displayName: 'P', description: 'made over REST' } };
    const project = await call('POST', '/api/v1/projects', '/api/v1/projects', {}, token, body);
    expect(project).toMatchObject({ status: 201, json: { kind: 'Project', metadata: { name: slug, organization: org }, status: { phase: 'Active' } } });
    const id = (project.json.metadata as { uid: string }).uid;
    expect((await listBuckets(db(), id)).find((b) => b.resourceType === 'ipam.miloapis.com/ipclaims')).toMatchObject({ limit: 100, allocated: 0 });
    expect((await call('POST', '/api/v1/projects', '/api/v1/projects', {}, token, body)).json.error?.code).toBe('Conflict');
    const reserved = await call('POST', '/api/v1/projects', '/api/v1/projects', {}, token, { ...body, metadata: { name: 'settings', organization: org } });
    expect(reserved).toMatchObject({ status: 400, json: { error: { code: 'ValidationFailed' } } });

    // A project token of the new project cannot create projects, whatever its role.
    const { createApiToken } = await import('./tokens');
    const projectToken = (await createApiToken(db(), { projectId: id, name: 'o', role: 'owner' }, system)).secret;
    const refused = await call('POST', '/api/v1/projects', '/api/v1/projects', {}, projectToken, { ...body, metadata: { name: uniq('x'), organization: org } });
    expect(refused).toMatchObject({ status: 403, json: { error: { code: 'Forbidden' } } });

    // The last owner cannot leave over REST either.
    const leave = await call(
      'DELETE',
      `/api/v1/projects/${slug}/members/${user.email}`,
      '/api/v1/projects/{project}/members/{user}',
      { project: slug, user: user.email },
      token,
    );
    expect(leave).toMatchObject({ status: 409, json: { error: { code: 'LastOwner' } } });
  });
});
