import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, inject, test } from 'vitest';
import { verifyApiToken } from '@/server/tenancy/tokens';
import { testDb } from './db';
import { makeUser } from './fixtures';

const run = promisify(execFile);
const cli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', ...args], { env: { ...process.env, DATABASE_URL: inject('databaseUrl') }, encoding: 'utf8' });
type Failure = { code: number; stderr: string };
const failure = (e: unknown): Failure => e as Failure;

test('the admin CLI issues operator tokens only for operators (token alone on stdout), lists and revokes them', async () => {
  const { db } = testDb();
  const operator = await makeUser(db, { platformRoles: ['operator'] });
  const tenant = await makeUser(db);

  const created = await cli(['token', 'create', '--operator', '--user', operator.email.toUpperCase(), '--name', 'ci-quota']);
  const secret = created.stdout.trim();
  expect(secret).toMatch(/^mrd_[A-Za-z0-9_-]{40,}$/);
  expect(created.stdout.split('\n').filter(Boolean)).toHaveLength(1);
  expect(await verifyApiToken(db, secret)).toMatchObject({ kind: 'operator', userId: operator.id, tokenName: 'ci-quota' });

  const refused = (await cli(['token', 'create', '--operator', '--user', tenant.email]).catch(failure)) as Failure;
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('is not an active platform operator');
  const mixed = (await cli(['token', 'create', '--operator', '--user', operator.email, '--project', 'x']).catch(failure)) as Failure;
  expect(mixed.code).toBe(1);

  const listed = await cli(['token', 'list', '--operator']);
  expect(listed.stdout).toContain(`ci-quota\t${operator.email}\tactive`);
  expect(listed.stdout).not.toContain(secret);
  await cli(['token', 'revoke', '--operator', '--prefix', secret.slice(0, 10)]);
  expect(await verifyApiToken(db, secret)).toBeUndefined();
});
