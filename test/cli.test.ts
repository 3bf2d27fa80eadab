import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { expect, inject, test } from 'vitest';
import { readFunctionFiles } from '@/db/function-files';
import { migrationJournal } from '@/db/migrate';
import { createSession, resolveSession } from '@/server/tenancy/sessions';
import { verifyApiToken } from '@/server/tenancy/tokens';
import { testDb, uniq } from './db';
import { makeProject, makeUser } from './fixtures';

const run = promisify(execFile);
const cli = (args: string[], databaseUrl = inject('databaseUrl')) =>
  run(process.execPath, ['--import', 'tsx', 'bin/meridian.ts', ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' });

test('`meridian migrate` brings a new database to the schema and its SQL functions, says what it did, and then has nothing to do', async () => {
  const name = uniq('meridian_cli_migrate').replace(/-/g, '_');
  const admin = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const u = new URL(inject('databaseUrl'));
  u.pathname = `/${name}`;
  const target = postgres(u.toString(), { max: 1, onnotice: () => {} });
  try {
    const [migrations, files] = [(await migrationJournal()).length, (await readFunctionFiles()).length];
    expect((await cli(['migrate'], u.toString())).stderr).toContain(`${migrations} migration(s) applied; ${files} SQL function file(s) applied`);
    const [{ n }] = await target<{ n: number }[]>`select count(*)::int as n from drizzle.function_files`;
    expect(n).toBe(files);
    expect(await target`select 'cni_lease_add_many_confirmed(jsonb)'::regprocedure`).toHaveLength(1);
    expect((await cli(['migrate'], u.toString())).stderr).toContain('0 migration(s) applied; 0 SQL function file(s) applied');
  } finally {
    await target.end();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
});

test('the admin CLI creates users and tokens (token alone on stdout), lists and revokes', async () => {
  const { db } = testDb();
  const { project } = await makeProject(db);
  const created = await cli(['token', 'create', '--project', project.slug, '--cluster', 'edge-1']);
  const secret = created.stdout.trim();
  expect(secret).toMatch(/^mrd_[A-Za-z0-9_-]{40,}$/);
  expect(created.stdout.split('\n').filter(Boolean)).toHaveLength(1);
  expect(await verifyApiToken(db, secret)).toMatchObject({ projectId: project.id, clusterName: 'edge-1' });

  const listed = await cli(['token', 'list', '--project', project.slug]);
  expect(listed.stdout).toContain('cluster-edge-1');
  expect(listed.stdout).not.toContain(secret);
  await cli(['token', 'revoke', '--project', project.slug, '--prefix', secret.slice(0, 10)]);
  expect(await verifyApiToken(db, secret)).toBeUndefined();

  const email = `${uniq('ops')}@example.com`;
  const user = await cli([
    'user',
    'create',
    '--email',
    email,
    '--password',
    'long-enough-pass',
    '--platform-role',
    'operator',
    '--project',
    project.slug,
    '--project-role',
    'editor',
  ]);
  expect(user.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);

  const bad = await cli(['token', 'create', '--project', 'no-such-project']).catch((e: { code: number; stderr: string }) => e);
  expect((bad as { code: number }).code).toBe(1);
  expect((bad as { stderr: string }).stderr).toContain('project "no-such-project" not found');
});

test("the admin CLI lists and ends a user's sessions, and disabling a user ends them", async () => {
  const { db } = testDb();
  const user = await makeUser(db);
  const [one, two] = [
    await createSession(db, { userId: user.id, userAgent: 'agent-one', address: '192.0.2.7' }),
    await createSession(db, { userId: user.id, userAgent: 'agent-two', address: '192.0.2.8' }),
  ];
  const listed = await cli(['user', 'sessions', '--email', user.email]);
  expect(listed.stdout).toContain(`${one}\t192.0.2.7`);
  expect(listed.stdout).toContain('agent-two');
  await cli(['user', 'sign-out', '--email', user.email, '--id', one]);
  expect(await resolveSession(db, one)).toBeUndefined();
  expect(await resolveSession(db, two)).toBeDefined();
  await cli(['user', 'disable', '--email', user.email]);
  expect(await resolveSession(db, two)).toBeUndefined();
  const missing = await cli(['user', 'disable', '--email', 'nobody-at-all@example.com']).catch((e: { code: number; stderr: string }) => e);
  expect((missing as { stderr: string }).stderr).toContain('user "nobody-at-all@example.com" not found');
});
