/**
 * Every tRPC procedure, called over the real HTTP adapter as the console calls it, refuses input it
 * does not understand with 400 `ValidationFailed` naming the field, the same rules as REST v1:
 *  - an unknown field, at the top or inside any nested object (`unknown field "cidrs.0.strategi"`);
 *  - text PostgreSQL cannot store (NUL, unpaired surrogates) in any string;
 * and nothing is written (no row of the caller's project, no event by the caller).
 *
 * The procedures are read from the router itself: one added without an entry in `validInputs` (test/trpc-inputs.ts)
 * fails the first test, so the walk always covers all of them.
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { sql } from 'drizzle-orm';
import superjson from 'superjson';
import { beforeAll, describe, expect, test } from 'vitest';
import { systemActor } from '@/server/audit/events';
import { createCluster } from '@/server/cni/clusters';
import { createNetwork } from '@/server/ipam/networks';
import type { SessionUser } from '@/server/tenancy/roles';
import { testDb, uniq } from '@/test/db';
import { makeProject, makeUser } from '@/test/fixtures';
import { applyMutation, objectPaths } from '@/test/fuzz';
import { validInputs, type World } from '@/test/trpc-inputs';
import { appRouter } from './root';

const actor = systemActor('test');

let world: World;

beforeAll(async () => {
  const { db } = testDb();
  const { project } = await makeProject(db);
  // One caller for every procedure: owner of the project and admin (holds every platform role).
  const user = await makeUser(db, { projectId: project.id, role: 'owner', platformRoles: ['admin'] });
  await createNetwork(db, project.id, { name: 'vpc', cidrs: [{ cidr: '192.0.2.0/24' }, { cidr: '2001:db8::/48' }] }, actor);
  await createCluster(db, project.id, { name: 'k1', network: 'vpc' }, actor);
  world = { user, project: project.slug, projectId: project.id, tag: uniq('st') };
});

const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { type: 'query' | 'mutation' | 'subscription' } }>;
const paths = Object.keys(procedures).sort();

interface Answer {
  status: number;
  error?: { message: string; data: { domainCode: string | null; field: string | null; httpStatus: number } };
}

/** One call through tRPC's fetch adapter (the console's transport), as the world's user. */
async function call(path: string, input: unknown): Promise<Answer> {
  const payload = JSON.stringify(superjson.serialize(input));
  const url = `http://localhost/api/trpc/${path}`;
  const req =
    procedures[path]._def.type === 'query'
      ? new Request(`${url}?input=${encodeURIComponent(payload)}`)
      : new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
  const res = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: () => ({ db: testDb().db, session: { user: world.user } }),
  });
  const body = (await res.json()) as { error?: { json: Answer['error'] } };
  return { status: res.status, error: body.error?.json };
}

/** What any of these calls could write: the project's rows and anything recorded by the caller. */
async function snapshot() {
  const { db } = testDb();
  const p = world.projectId;
  const [row] = (await db.execute(sql`
    select (select count(*) from networks where project_id = ${p})::int as networks,
           (select count(*) from ip_pools where project_id = ${p})::int as pools,
           (select count(*) from ip_claims where project_id = ${p})::int as claims,
           (select count(*) from clusters where project_id = ${p})::int as clusters,
           (select count(*) from api_tokens where project_id = ${p} or user_id = ${world.user.id})::int as tokens,
           (select count(*) from quota_increase_requests where project_id = ${p})::int as increases,
           (select count(*) from resource_grants where project_id = ${p})::int as grants,
           (select count(*) from resource_registrations where resource_type like ${`${world.tag}%`})::int as registrations,
           (select count(*) from grant_creation_policies where name like ${`${world.tag}%`})::int as "grantPolicies",
           (select count(*) from claim_creation_policies where name like ${`${world.tag}%`})::int as "claimPolicies",
           (select count(*) from events where actor_id = ${world.user.id} or project_id = ${p})::int as events`)) as unknown as Record<string, number>[];
  return row;
}

type Path = (string | number)[];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Free-form maps whose keys are data, not fields (a claim's labels): an extra key there is a label. */
const MAPS = new Set(['labels']);

/** Every string in the input, with its path. */
function stringPaths(value: unknown, at: Path = []): Path[] {
  if (typeof value === 'string') return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...at, i]));
  if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...at, k]));
  return [];
}

function expectRefused(a: Answer, field: string, where: string) {
  expect(a.status, `${where}: ${JSON.stringify(a.error)}`).toBe(400);
  expect(a.error?.data.domainCode, `${where}: ${JSON.stringify(a.error)}`).toBe('ValidationFailed');
  expect(a.error?.data.field, where).toBe(field);
  expect(a.error?.message, where).toContain(field);
  expect(a.error?.message, `${where}: no SQL`).not.toMatch(/Failed query|params:|\bselect\b/i);
}

describe('tRPC input is strict', () => {
  test('every procedure has a valid input in this file', () => {
    expect(
      paths.filter((p) => !validInputs[p]),
      'add them to validInputs in test/trpc-inputs.ts',
    ).toEqual([]);
    expect(
      Object.keys(validInputs).filter((p) => !procedures[p]),
      'procedures that no longer exist',
    ).toEqual([]);
  });

  test.each(paths)('%s: an unknown field anywhere is 400 ValidationFailed naming it, and nothing is written', async (path) => {
    const input = validInputs[path](world);
    const before = await snapshot();
    for (const at of objectPaths(input ?? {}, MAPS)) {
      const field = [...at, 'zzUnknown'].join('.');
      const sent = applyMutation(input ?? {}, { op: 'extra', path: at, key: 'zzUnknown', value: 1 });
      const answer = await call(path, sent);
      expectRefused(answer, field, `${path} ${JSON.stringify(sent)}`);
      expect(answer.error?.message).toBe(`unknown field "${field}"`);
    }
    expect(await snapshot(), 'nothing written').toEqual(before);
  });

  // Which inputs hold strings depends on their shape only, not on the world's values.
  const shape: World = { user: {} as SessionUser, project: 'p', projectId: '', tag: 't' };
  test.each(paths.filter((p) => stringPaths(validInputs[p]?.(shape)).length > 0))(
    '%s: NUL or an unpaired surrogate in any string is 400 ValidationFailed naming it, and nothing is written',
    async (path) => {
      const input = validInputs[path](world);
      const before = await snapshot();
      for (const at of stringPaths(input)) {
        for (const bad of ['a\u0000b', 'a\ud800b', '\udc00']) {
          const sent = applyMutation(input, { op: 'set', path: at, value: bad });
          expectRefused(await call(path, sent), at.join('.'), `${path} ${JSON.stringify(sent)}`);
        }
      }
      expect(await snapshot(), 'nothing written').toEqual(before);
    },
  );
});
