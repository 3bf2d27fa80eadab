import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { expect, inject, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { acceptInvitation } from '@/server/tenancy/invitations';
import { addMembership } from '@/server/tenancy/projects';
import { createApiToken, verifyApiToken } from '@/server/tenancy/tokens';
import { testDb } from './db';
import { makeProject, makeUser } from './fixtures';

const run = promisify(execFile);
const cli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', ...args], { env: { ...process.env, DATABASE_URL: inject('databaseUrl') }, encoding: 'utf8' });
type Failure = { code: number; stderr: string };
const failure = (e: unknown): Failure => e as Failure;
const actor = systemActor('test');

test('the admin CLI disables, enables and deletes users and removes memberships; their tokens follow at once', async () => {
  const { db } = testDb();
  const { org, project } = await makeProject(db);
  const user = await makeUser(db, { projectId: project.id, role: 'owner' });
  const token = await createApiToken(db, { projectId: project.id, name: 'ci', role: 'owner', createdBy: user.id }, actor);
  const role = async () => {
    const principal = await verifyApiToken(db, token.secret);
    return principal?.kind === 'project' ? principal.role : undefined;
  };
  expect(await role()).toBe('owner');

  // The user is the project's only owner: removing them needs --force (the admin's override).
  const last = (await cli(['member', 'remove', '--email', user.email, '--project', project.slug]).catch(failure)) as Failure;
  expect(last.stderr).toContain('LastOwner');
  await cli(['member', 'remove', '--email', user.email, '--project', project.slug, '--force']);
  expect(await role()).toBeUndefined();
  const again = (await cli(['member', 'remove', '--email', user.email, '--project', project.slug, '--force']).catch(failure)) as Failure;
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('NotFound');
  const both = (await cli(['member', 'remove', '--email', user.email, '--project', project.slug, '--org', org.slug]).catch(failure)) as Failure;
  expect(both.stderr).toContain('exactly one of --org and --project');

  // Owning the organization is owning its projects: the token acts as owner again.
  await addMembership(db, { userId: user.id, role: 'owner', organizationId: org.id }, actor);
  expect(await role()).toBe('owner');
  await cli(['user', 'disable', '--email', user.email]);
  expect(await role()).toBeUndefined();
  await cli(['user', 'enable', '--email', user.email]);
  expect(await role()).toBe('owner');
  await cli(['user', 'delete', '--email', user.email]);
  expect(await role()).toBeUndefined();
  const gone = (await cli(['user', 'disable', '--email', user.email]).catch(failure)) as Failure;
  expect(gone.stderr).toContain(`user "${user.email}" not found`);
  // Nine CLI processes, each starting TypeScript: allow for a busy machine.
}, 240_000);

test('the admin CLI creates organizations and projects (with their quota) and manages members; the last owner stays', async () => {
  const { db } = testDb();
  const owner = await makeUser(db);
  const other = await makeUser(db);
  const slug = `cli-${Date.now().toString(36)}`;
  await cli(['org', 'create', '--slug', `${slug}-org`, '--name', 'CLI org', '--owner-email', owner.email]);
  await cli(['project', 'create', '--org', `${slug}-org`, '--slug', slug, '--name', 'CLI project', '--owner-email', owner.email]);
  const buckets = (await db.execute(
    sql`select b."limit"::int as "limit" from allowance_buckets b join projects p on p.id = b.project_id where p.slug = ${slug} and b.resource_type = 'ipam.miloapis.com/ipclaims'`,
  )) as unknown as { limit: number }[];
  expect(buckets).toEqual([{ limit: 100 }]);
  const reserved = (await cli(['project', 'create', '--org', `${slug}-org`, '--slug', 'admin', '--name', 'x']).catch(failure)) as Failure;
  expect(reserved.stderr).toContain('reserved');
  await cli(['project', 'update', '--slug', slug, '--name', 'CLI project renamed', '--description', 'Made by the CLI']);
  const [renamed] = (await db.execute(sql`select name, description from projects where slug = ${slug}`)) as unknown as { name: string; description: string }[];
  expect(renamed).toEqual({ name: 'CLI project renamed', description: 'Made by the CLI' });
  const blank = (await cli(['project', 'update', '--slug', slug, '--name', ' ']).catch(failure)) as Failure;
  expect(blank.stderr).toContain('name');
  // An organization's roles are owner and member: a project role there is refused.
  const wrongRole = (await cli(['member', 'add', '--email', other.email, '--role', 'editor', '--org', `${slug}-org`]).catch(failure)) as Failure;
  expect(wrongRole.stderr).toContain('--role must be one of member, owner');

  // Adding an existing user invites them: the link is printed, and nothing is granted until they accept.
  const invited = await cli(['member', 'add', '--email', other.email, '--role', 'editor', '--project', slug]);
  expect(invited.stdout.trim()).toMatch(/\/invite\/inv_[\w-]+$/);
  expect(invited.stderr).toContain('they join when they accept');
  const notYet = (await cli(['member', 'role', '--email', other.email, '--role', 'owner', '--project', slug]).catch(failure)) as Failure;
  expect(notYet.stderr).toContain('is not a member');
  expect([
    ...(await db.execute(sql`select 1 from memberships m join projects p on p.id = m.project_id where p.slug = ${slug} and m.user_id = ${other.id}`)),
  ]).toEqual([]);
  await acceptInvitation(db, invited.stdout.trim().split('/invite/')[1], other);
  const demoteLast = (await cli(['member', 'role', '--email', owner.email, '--role', 'viewer', '--project', slug]).catch(failure)) as Failure;
  expect(demoteLast.stderr).toContain('LastOwner');
  await cli(['member', 'role', '--email', other.email, '--role', 'owner', '--project', slug]);
  await cli(['member', 'role', '--email', owner.email, '--role', 'viewer', '--project', slug]);
  const roles = (await db.execute(
    sql`select u.email, m.role from memberships m join users u on u.id = m.user_id join projects p on p.id = m.project_id where p.slug = ${slug} order by m.role`,
  )) as unknown as { email: string; role: string }[];
  expect(roles.map((r) => [r.email, r.role]).sort()).toEqual(
    [
      [other.email, 'owner'],
      [owner.email, 'viewer'],
    ].sort(),
  );

  const list = await cli(['user', 'list']);
  expect(list.stdout).toContain(`${owner.email}\t`);
  expect(list.stdout.split('\n').find((l) => l.includes(owner.email))).toMatch(/\tadmin$/);
  // An account made from an invitation, never verified, is listed until an administrator vouches for it.
  const squatted = await makeUser(db, { origin: { createdVia: 'invitation', emailVerifiedBy: null } });
  expect((await cli(['user', 'unverified'])).stdout).toContain(`${squatted.id}\t${squatted.email}\t`);
  await cli(['user', 'verify-email', '--email', squatted.email]);
  expect((await cli(['user', 'unverified'])).stdout).not.toContain(squatted.email);
  const link = await cli(['user', 'reset-password', '--email', owner.email]);
  expect(link.stdout.trim()).toMatch(/\/reset-password\/pwr_[\w-]+$/);
  await cli(['user', 'roles', '--email', other.email, '--platform-role', 'qa']);
  expect(((await db.execute(sql`select platform_roles::text[] as r from users where id = ${other.id}`)) as unknown as { r: string[] }[])[0].r).toEqual(['qa']);
}, 240_000);
