import { TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { sql } from 'drizzle-orm';
import { describe, expect, inject, test } from 'vitest';
import { createDb } from '@/db/client';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import type { SessionUser } from '@/server/tenancy/roles';
import { appRouter, createCaller } from './root';

const caller = (user: SessionUser | null) => createCaller({ db: testDb().db, session: user ? { user } : null });

describe('procedure guards', () => {
  test('signed out: authed procedures are UNAUTHORIZED, public ones answer', async () => {
    await expect(caller(null).projects.list()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await caller(null).me.get()).toBeNull();
  });

  test('non-members get NOT_FOUND; viewers get FORBIDDEN on owner actions; owners succeed', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const owner = await makeUser(db, { projectId: project.id, role: 'owner' });
    const viewer = await makeUser(db, { projectId: project.id, role: 'viewer' });
    const stranger = await makeUser(db);

    await expect(caller(stranger).tokens.list({ project: project.slug })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(caller(viewer).tokens.create({ project: project.slug, name: 'x' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const created = await caller(owner).tokens.create({ project: project.slug, name: 'ci' });
    expect(created.secret).toMatch(/^mrd_/);
    const listed = await caller(viewer).tokens.list({ project: project.slug });
    expect(listed.map((t) => t.id)).toEqual([created.id]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    await expect(caller(stranger).tokens.revoke({ project: project.slug, id: created.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  test('platform procedures need the role; admin holds every role', async () => {
    const { db } = testDb();
    const tenant = await makeUser(db);
    const operator = await makeUser(db, { platformRoles: ['operator'] });
    const admin = await makeUser(db, { platformRoles: ['admin'] });
    await expect(caller(tenant).audit.list({ limit: 5 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect((await caller(operator).audit.list({ limit: 5 })).items.length).toBeGreaterThan(0);
    expect((await caller(admin).audit.list({ limit: 5 })).items.length).toBeGreaterThan(0);
  });

  test('invalid input is BAD_REQUEST with field errors', async () => {
    const { db } = testDb();
    const { project } = await makeProject(db);
    const owner = await makeUser(db, { projectId: project.id, role: 'owner' });
    const error = await caller(owner)
      .tokens.create({ project: project.slug, name: '' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe('BAD_REQUEST');
  });

  test('a project timeline shows only that project', async () => {
    const { db } = testDb();
    const a = await makeProject(db);
    const b = await makeProject(db);
    const owner = await makeUser(db, { projectId: a.project.id, role: 'owner' });
    await caller(owner).tokens.create({ project: a.project.slug, name: 'only-a' });
    const events = await caller(owner).audit.project({ project: a.project.slug, limit: 50 });
    expect(events.items.every((e) => e.projectId === a.project.id)).toBe(true);
    expect(events.items.some((e) => e.action === 'token.create')).toBe(true);
    expect(events.items.some((e) => e.projectId === b.project.id)).toBe(false);
  });

  test('a failure nobody coded answers 500 "internal error": the browser never sees the statement or its parameters', async () => {
    const { db } = testDb();
    const user = await makeUser(db);
    // A real database without Meridian's tables: every statement fails in PostgreSQL.
    const name = uniq('empty').replace(/-/g, '_');
    await db.execute(sql.raw(`create database ${name}`));
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const empty = createDb(url.toString(), { max: 1 });
    try {
      const res = await fetchRequestHandler({
        endpoint: '/api/trpc',
        req: new Request('http://localhost/api/trpc/projects.list'),
        router: appRouter,
        createContext: () => ({ db: empty.db, session: { user } }),
      });
      const text = await res.text();
      expect(res.status).toBe(500);
      expect((JSON.parse(text) as { error: { json: { message: string } } }).error.json.message).toMatch(
        /^internal error \(error id [0-9a-f]{12}; the server log has the details\)$/,
      );
      expect(text).not.toMatch(/select|Failed query|params|relation/i);
    } finally {
      await empty.close();
      await db.execute(sql.raw(`drop database ${name}`));
    }
  });
});
