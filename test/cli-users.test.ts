import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, inject, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
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

  await cli(['member', 'remove', '--email', user.email, '--project', project.slug]);
  expect(await role()).toBeUndefined();
  const again = (await cli(['member', 'remove', '--email', user.email, '--project', project.slug]).catch(failure)) as Failure;
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('NotFound');
  const both = (await cli(['member', 'remove', '--email', user.email, '--project', project.slug, '--org', org.slug]).catch(failure)) as Failure;
  expect(both.stderr).toContain('exactly one of --org and --project');

  await addMembership(db, { userId: user.id, role: 'editor', organizationId: org.id }, actor);
  expect(await role()).toBe('editor');
  await cli(['user', 'disable', '--email', user.email]);
  expect(await role()).toBeUndefined();
  await cli(['user', 'enable', '--email', user.email]);
  expect(await role()).toBe('editor');
  await cli(['user', 'delete', '--email', user.email]);
  expect(await role()).toBeUndefined();
  const gone = (await cli(['user', 'disable', '--email', user.email]).catch(failure)) as Failure;
  expect(gone.stderr).toContain(`user "${user.email}" not found`);
  // Nine CLI processes, each starting TypeScript: allow for a busy machine.
}, 240_000);
