import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { events } from '@/db/schema';
import { systemActor } from '@/server/audit/events';
import { createApiToken } from '@/server/tenancy/tokens';
import { startAggregated, startWebhookServer, inProject, WEBHOOK_CALLER_TOKEN, type Identity } from '@/test/aggregator';
import { testDb, uniq } from '@/test/db';
import { makeProject } from '@/test/fixtures';
import { makeCa } from '@/test/pki';
import { createSubjectAccessReviewer, readWebhookKubeconfig, WebhookUnavailable } from './authorizer';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Meridian as an extension API server behind an aggregator (docs/aggregated-api.md): front-proxy
 * authentication by client certificate, Milo's parent extras, SubjectAccessReview per request with
 * its cache and its failures, TokenReview, bearer tokens beside them, and health.
 */

const IPAM = '/apis/ipam.miloapis.com/v1alpha1';
/** Users the webhook denies; everyone else is allowed (and `reason` names the rule). */
const denied = new Set<string>();
/** Foreign tokens the webhook authenticates, with their user. */
const foreignTokens = new Map<string, { username: string; groups: string[]; extra?: Record<string, string[]> }>();

let webhook: Awaited<ReturnType<typeof startWebhookServer>>;
let aggr: Awaited<ReturnType<typeof startAggregated>>;
let project: { id: string; slug: string };
let editorToken: string;
let viewerToken: string;

beforeAll(async () => {
  const { db } = testDb();
  ({ project } = await makeProject(db));
  editorToken = (await createApiToken(db, { projectId: project.id, name: 'aggr-editor', role: 'editor' }, systemActor('test'))).secret;
  viewerToken = (await createApiToken(db, { projectId: project.id, name: 'aggr-viewer', role: 'viewer' }, systemActor('test'))).secret;
  webhook = await startWebhookServer({
    authorize: (spec) =>
      denied.has(spec.user) ? { allowed: false, denied: true, reason: `rule: ${spec.user} is denied` } : { allowed: true, reason: 'rule: allowed' },
    authenticate: (token) => {
      const user = foreignTokens.get(token);
      return user ? { authenticated: true, user } : { authenticated: false, error: 'unknown token' };
    },
  });
  aggr = await startAggregated({ db: () => testDb().db, webhook });
});

afterAll(async () => {
  await aggr?.stop();
  await webhook?.stop();
});

/** A user of its own (the authorizer's cache is per user), in the test project. */
const someone = (groups: string[] = ['system:authenticated']): Identity & { user: string } => ({
  user: `${uniq('user')}@example.com`,
  groups,
  extra: inProject(project.slug),
});

const network = (name: string, cidr: string) => ({
  apiVersion: 'ipam.miloapis.com/v1alpha1',
  kind: 'Network',
  metadata: { name },
  spec: { cidrs: [{ cidr }] },
});

const reviewsOf = (user: string) => webhook.reviews.filter((r) => r.kind === 'SubjectAccessReview' && r.spec.user === user);

describe('front-proxy authentication', () => {
  test('a request with the front proxy certificate acts as the header user in the project of Milo extras', async () => {
    const who = someone(['system:authenticated', 'team-a']);
    const created = await aggr.request('POST', `${IPAM}/namespaces/default/networks`, {
      cert: aggr.clients.proxy,
      as: who,
      body: network('via-milo', '10.90.0.0/16'),
    });
    expect(created.status).toBe(201);
    // The object is in that project: its own token sees it on the project's control plane.
    const seen = await aggr.request(
      'GET',
      `/apis/resourcemanager.miloapis.com/v1alpha1/projects/${project.slug}/control-plane${IPAM}/namespaces/default/networks/via-milo`,
      {
        token: viewerToken,
      },
    );
    expect(seen.status).toBe(200);
    expect(seen.body.spec.cidrs).toEqual([{ cidr: '10.90.0.0/16' }]);
    // The audit event names the user who acted.
    const audited = await testDb()
      .db.select({ actorLabel: events.actorLabel })
      .from(events)
      .where(and(eq(events.projectId, project.id), eq(events.actorLabel, `${who.user} (front proxy)`)));
    expect(audited.length).toBeGreaterThan(0);
    const [review] = reviewsOf(who.user);
    expect(review.authorization).toBe(`Bearer ${WEBHOOK_CALLER_TOKEN}`);
    expect(review.spec).toEqual({
      resourceAttributes: {
        namespace: 'default',
        verb: 'create',
        group: 'ipam.miloapis.com',
        version: 'v1alpha1',
        resource: 'networks',
        subresource: '',
        name: '',
      },
      user: who.user,
      groups: ['system:authenticated', 'team-a'],
      extra: { 'iam.miloapis.com/parent-type': ['Project'], 'iam.miloapis.com/parent-name': [project.slug] },
    });
  });

  test.each([
    ['no client certificate', undefined],
    ['a certificate from another CA', 'otherCa'],
    ['a certificate of the CA whose CN is not allowed', 'wrongName'],
  ] as const)('the same headers with %s are ignored: 401, and no review is asked', async (_, client) => {
    const who = someone(['system:masters']);
    const res = await aggr.request('GET', `${IPAM}/namespaces/default/networks`, { cert: client ? aggr.clients[client] : undefined, as: who });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect(reviewsOf(who.user)).toEqual([]);
  });

  test('bearer tokens keep working at the root and on the control plane; front-proxy headers beside them change nothing', async () => {
    const list = await aggr.request('GET', `${IPAM}/namespaces/default/networks`, { token: viewerToken });
    expect(list.status).toBe(200);
    expect(list.body.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toContain('via-milo');
    // A viewer token claiming to be system:masters through the headers is still a viewer.
    const escalated = await aggr.request('POST', `${IPAM}/namespaces/default/networks`, {
      token: viewerToken,
      as: { user: 'admin', groups: ['system:masters'], extra: inProject(project.slug) },
      body: network('escalated', '10.91.0.0/16'),
    });
    expect(escalated.status).toBe(403);
    expect(escalated.body.message).toContain('token:aggr-viewer');
    const written = await aggr.request('POST', `${IPAM}/namespaces/default/networks`, { token: editorToken, body: network('by-token', '10.92.0.0/16') });
    expect(written.status).toBe(201);
    const plane = await aggr.request('GET', `/apis/resourcemanager.miloapis.com/v1alpha1/projects/${project.slug}/control-plane/apis`, { token: viewerToken });
    expect(plane.status).toBe(200);
    expect(plane.body.groups.map((g: { name: string }) => g.name)).toContain('ipam.miloapis.com');
  });

  test('the front proxy with no user header authenticates no one', async () => {
    const res = await aggr.request('GET', '/apis', { cert: aggr.clients.proxy, as: { groups: ['system:masters'] } });
    expect(res.status).toBe(401);
  });
});

describe('configured from the environment, as the web process starts it', () => {
  test('REQUESTHEADER_* and AUTHORIZATION_WEBHOOK_CONFIG_FILE in the environment make the front proxy and its authorizer', async () => {
    const fromEnv = await startAggregated({ db: () => testDb().db, webhook, fromProcessEnv: true });
    try {
      const who = someone();
      const res = await fromEnv.request('GET', `${IPAM}/namespaces/default/networks`, { cert: fromEnv.clients.proxy, as: who });
      expect(res.status).toBe(200);
      expect(reviewsOf(who.user)).toHaveLength(1);
      expect((await fromEnv.request('GET', `${IPAM}/namespaces/default/networks`, { cert: fromEnv.clients.wrongName, as: who })).status).toBe(401);
    } finally {
      await fromEnv.stop();
    }
  });
});

describe('the parent from Milo extras', () => {
  test('without a parent, or with an organization, project kinds are not reached; discovery is', async () => {
    const parents: Record<string, string[]>[] = [{}, { 'iam.miloapis.com/parent-type': ['Organization'], 'iam.miloapis.com/parent-name': ['some-org'] }];
    for (const extra of parents) {
      const who = { ...someone(), extra };
      const discovery = await aggr.request('GET', '/apis', { cert: aggr.clients.proxy, as: who });
      expect(discovery.status).toBe(200);
      expect(discovery.body.groups.map((g: { name: string }) => g.name)).toContain('ipam.miloapis.com');
      const list = await aggr.request('GET', `${IPAM}/namespaces/default/networks`, { cert: aggr.clients.proxy, as: who });
      expect(list.status).toBe(404);
      expect(list.body.message).toContain('networks.ipam.miloapis.com live in a project');
      const namespaces = await aggr.request('GET', '/api/v1/namespaces', { cert: aggr.clients.proxy, as: who });
      expect(namespaces.status).toBe(404);
    }
  });

  test('a project that does not exist is 404; a parent type Meridian does not know is 400 naming the extra', async () => {
    const missing = await aggr.request('GET', `${IPAM}/namespaces/default/networks`, {
      cert: aggr.clients.proxy,
      as: { ...someone(), extra: inProject('no-such-project') },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('project "no-such-project" not found');
    const odd = await aggr.request('GET', `${IPAM}/namespaces/default/networks`, {
      cert: aggr.clients.proxy,
      as: { ...someone(), extra: { 'iam.miloapis.com/parent-type': ['Folder'], 'iam.miloapis.com/parent-name': ['x'] } },
    });
    expect(odd.status).toBe(400);
    expect(odd.body.message).toContain('iam.miloapis.com/parent-type: unsupported parent type "Folder"');
  });
});

describe('delegated authorization (SubjectAccessReview)', () => {
  test('every verb is reviewed with its attributes', async () => {
    const who = someone();
    const ns = `${IPAM}/namespaces/default`;
    const go = (method: string, p: string, body?: unknown, contentType?: string) =>
      aggr.request(method, p, { cert: aggr.clients.proxy, as: who, body, contentType });
    expect((await go('POST', `${ns}/networks`, network('verbs', '10.93.0.0/16'))).status).toBe(201);
    expect((await go('GET', `${ns}/networks/verbs`)).status).toBe(200);
    expect((await go('GET', `${ns}/networks`)).status).toBe(200);
    expect((await go('GET', `${IPAM}/networks`)).status).toBe(200);
    const current = (await go('GET', `${ns}/networks/verbs`)).body;
    expect((await go('PUT', `${ns}/networks/verbs`, { ...current, metadata: { ...current.metadata, labels: { a: '1' } } })).status).toBe(200);
    expect((await go('PATCH', `${ns}/networks/verbs`, { metadata: { labels: { b: '2' } } }, 'application/merge-patch+json')).status).toBe(200);
    expect((await go('GET', `${ns}/networks/verbs/status`)).status).toBe(200);
    // A watch that ends at once (timeoutSeconds): the review is what is asserted.
    expect((await go('GET', `${ns}/networks?watch=true&timeoutSeconds=1`)).status).toBe(200);
    await go('DELETE', `${ns}/networks`);
    expect((await go('DELETE', `${ns}/networks/verbs`)).status).toBe(200);
    expect((await go('GET', '/api/v1/namespaces/default')).status).toBe(200);
    expect((await go('GET', '/apis')).status).toBe(200);
    const attrs = (verb: string, extra: Record<string, string> = {}) => ({
      namespace: 'default',
      verb,
      group: 'ipam.miloapis.com',
      version: 'v1alpha1',
      resource: 'networks',
      subresource: '',
      name: 'verbs',
      ...extra,
    });
    expect(reviewsOf(who.user).map((r) => r.spec.resourceAttributes ?? r.spec.nonResourceAttributes)).toEqual([
      attrs('create', { name: '' }),
      attrs('get'),
      attrs('list', { name: '' }),
      attrs('list', { name: '', namespace: '' }),
      // The second get of the same object is the cached answer.
      attrs('update'),
      attrs('patch'),
      attrs('get', { subresource: 'status' }),
      attrs('watch', { name: '' }),
      attrs('deletecollection', { name: '' }),
      attrs('delete'),
      { namespace: 'default', verb: 'get', group: '', version: 'v1', resource: 'namespaces', subresource: '', name: 'default' },
      { path: '/apis', verb: 'get' },
    ]);
  });

  test('a denial is 403 with the authorizer reason and changes nothing; it is cached, as an allowed answer is', async () => {
    const who = someone();
    denied.add(who.user);
    const first = await aggr.request('POST', `${IPAM}/namespaces/default/networks`, {
      cert: aggr.clients.proxy,
      as: who,
      body: network('denied', '10.94.0.0/16'),
    });
    expect(first.status).toBe(403);
    expect(first.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(first.body.message).toBe(
      `networks.ipam.miloapis.com is forbidden: User "${who.user}" cannot create resource "networks" in API group "ipam.miloapis.com" in the namespace "default": rule: ${who.user} is denied`,
    );
    const again = await aggr.request('POST', `${IPAM}/namespaces/default/networks`, {
      cert: aggr.clients.proxy,
      as: who,
      body: network('denied', '10.94.0.0/16'),
    });
    expect(again.status).toBe(403);
    expect(reviewsOf(who.user)).toHaveLength(1);
    const gone = await aggr.request('GET', `${IPAM}/namespaces/default/networks/denied`, { token: viewerToken });
    expect(gone.status).toBe(404);

    const allowed = someone();
    for (let i = 0; i < 3; i++)
      expect((await aggr.request('GET', `${IPAM}/namespaces/default/networks`, { cert: aggr.clients.proxy, as: allowed })).status).toBe(200);
    expect(reviewsOf(allowed.user)).toHaveLength(1);
  });

  test('groups always allowed skip the review (the aggregator availability checks)', async () => {
    const who = { user: 'system:kube-aggregator', groups: ['system:masters'] };
    const before = webhook.reviews.length;
    expect((await aggr.request('GET', IPAM, { cert: aggr.clients.proxy, as: who })).status).toBe(200);
    expect(webhook.reviews.length).toBe(before);
  });

  test('an authorizer that cannot be reached, or answers an error, refuses the request (503 with the reason); it is asked again once back', async () => {
    const who = someone();
    await webhook.down();
    try {
      const refused = await aggr.request('POST', `${IPAM}/namespaces/default/networks`, {
        cert: aggr.clients.proxy,
        as: who,
        body: network('unreached', '10.95.0.0/16'),
      });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable' });
      expect(refused.body.message).toContain('the request cannot be authorized: the webhook at https://127.0.0.1:');
    } finally {
      await webhook.up();
    }
    webhook.failWith(500);
    try {
      const refused = await aggr.request('GET', `${IPAM}/namespaces/default/networks/unreached`, { cert: aggr.clients.proxy, as: who });
      expect(refused.status).toBe(503);
      expect(refused.body.message).toContain('HTTP 500');
    } finally {
      webhook.failWith(undefined);
    }
    expect((await aggr.request('GET', `${IPAM}/namespaces/default/networks/unreached`, { token: viewerToken })).status).toBe(404);
    // Failures are not cached: the next request is reviewed and allowed.
    const created = await aggr.request('POST', `${IPAM}/namespaces/default/networks`, {
      cert: aggr.clients.proxy,
      as: who,
      body: network('unreached', '10.95.0.0/16'),
    });
    expect(created.status).toBe(201);
  });

  test('answers last as long as configured: a denial is asked again after its TTL, an allowed answer is not', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'meridian-sar-'));
    const file = path.join(dir, 'authz.kubeconfig');
    // The caller's token in a file, read at every call (a rotated service-account token).
    writeFileSync(path.join(dir, 'token'), 'first-token\n');
    writeFileSync(file, webhook.kubeconfig('/authorize', 'token'));
    const reviewer = createSubjectAccessReviewer(readWebhookKubeconfig(file), { authorizedTtlMs: 60_000, unauthorizedTtlMs: 300, timeoutMs: 2_000 });
    try {
      const no = { username: `${uniq('ttl')}@example.com`, groups: [], extra: {} };
      const yes = { username: `${uniq('ttl')}@example.com`, groups: [], extra: {} };
      denied.add(no.username);
      const a = { kind: 'nonResource' as const, verb: 'get', path: '/apis' };
      expect((await reviewer.authorize(no, a)).allowed).toBe(false);
      expect((await reviewer.authorize(yes, a)).allowed).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
      await reviewer.authorize(no, a);
      await reviewer.authorize(yes, a);
      expect(reviewsOf(no.username)).toHaveLength(2);
      expect(reviewsOf(yes.username)).toHaveLength(1);
      expect(reviewsOf(no.username).map((r) => r.authorization)).toEqual(['Bearer first-token', 'Bearer first-token']);
      writeFileSync(path.join(dir, 'token'), 'rotated-token\n');
      await new Promise((r) => setTimeout(r, 400));
      await reviewer.authorize(no, a);
      expect(reviewsOf(no.username).map((r) => r.authorization)).toEqual(['Bearer first-token', 'Bearer first-token', 'Bearer rotated-token']);
      // Concurrent identical reviews share one call.
      const together = { username: `${uniq('ttl')}@example.com`, groups: [], extra: {} };
      await Promise.all(Array.from({ length: 8 }, () => reviewer.authorize(together, a)));
      expect(reviewsOf(together.username)).toHaveLength(1);
      await webhook.down();
      try {
        await expect(reviewer.authorize({ ...together, username: 'not-cached' }, a)).rejects.toBeInstanceOf(WebhookUnavailable);
      } finally {
        await webhook.up();
      }
    } finally {
      reviewer.close();
    }
  });
});

test('a webhook kubeconfig that names no server is refused at start, naming the file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'meridian-sar-'));
  const file = path.join(dir, 'broken.kubeconfig');
  writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: [{name: x, cluster: {}}]\n');
  expect(() => readWebhookKubeconfig(file)).toThrow(`${file}: not a kubeconfig naming a webhook server`);
});

describe('delegated authentication (TokenReview)', () => {
  test('a token Meridian did not issue is reviewed, cached, and its user authorized like a front-proxied one', async () => {
    const token = `foreign-${uniq('tok')}`;
    const username = `${uniq('carol')}@example.com`;
    foreignTokens.set(token, { username, groups: ['system:authenticated'], extra: inProject(project.slug) });
    for (let i = 0; i < 2; i++) expect((await aggr.request('GET', `${IPAM}/namespaces/default/networks`, { token })).status).toBe(200);
    expect(webhook.reviews.filter((r) => r.kind === 'TokenReview' && r.spec.token === token)).toHaveLength(1);
    expect(reviewsOf(username)[0].spec).toMatchObject({ user: username, extra: inProject(project.slug), resourceAttributes: { verb: 'list' } });
    denied.add(username);
    const unknown = await aggr.request('GET', `${IPAM}/namespaces/default/networks`, { token: `foreign-${uniq('nobody')}` });
    expect(unknown.status).toBe(401);
  });
});

describe('health', () => {
  test('/livez, /readyz and /healthz answer without credentials, as an extension server does', async () => {
    for (const p of ['/livez', '/readyz', '/healthz']) {
      const res = await aggr.request('GET', p);
      expect(res.status).toBe(200);
      expect(res.text).toBe('ok');
    }
    const verbose = await aggr.request('GET', '/readyz?verbose');
    expect(verbose.text).toBe('[+]ping ok\n[+]database ok\nreadyz check passed\n');
    expect((await aggr.request('GET', '/readyz/database')).status).toBe(200);
    expect((await aggr.request('GET', '/livez/nothing')).status).toBe(404);
  });
});

// Last: it replaces the front proxy's CA the other tests use.
describe('the requestheader CA', () => {
  test('is reloaded when its file changes: the new CA is the front proxy, the old one no longer is', async () => {
    const rotated = await makeCa('front-proxy-ca rotated');
    const client = await rotated.issue('client', 'front-proxy-client');
    const who = { user: 'system:kube-aggregator', groups: ['system:masters'] };
    expect((await aggr.request('GET', '/apis', { cert: client, as: who })).status).toBe(401);
    writeFileSync(aggr.frontProxyCaFile, rotated.cert);
    let status = 401;
    for (let i = 0; i < 50 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await aggr.request('GET', '/apis', { cert: client, as: who })).status;
    }
    expect(status).toBe(200);
    expect((await aggr.request('GET', '/apis', { cert: aggr.clients.proxy, as: who })).status).toBe(401);
  });
});
