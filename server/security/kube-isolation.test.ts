/**
 * Tenant isolation of the Kubernetes API, enumerated from the declared kinds (server/api/kinds.ts):
 * every kind of a project's control plane is called with every verb by tokens that cannot act in
 * the project (another project's token, a stranger's user token) and must answer exactly as a path
 * that does not exist (404, naming nothing); writes by a viewer are 403; operator-only writes by a
 * project editor are 403. Every kind of the platform control plane refuses project and user tokens
 * (403). Requests aim at real objects, and nothing may change. A kind added later is covered by
 * being declared.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { kubeKinds } from '@/server/api/kinds';
import { systemActor } from '@/server/audit/events';
import { kindsOfPlane, type KindDeclaration } from '@/server/kube/declare';
import { createUserToken } from '@/server/tenancy/tokens';
import { testDb } from '@/test/db';
import { makeUser } from '@/test/fixtures';
import { startKubeServer } from '@/test/kube-server';

let kube: Awaited<ReturnType<typeof startKubeServer>>;
let stranger: string;
const NOT_FOUND = 'the server could not find the requested resource';

const collection = (k: KindDeclaration) => `/apis/${k.group}/${k.version}${k.namespaced ? '/namespaces/default' : ''}/${k.plural}`;

/** Every object of every kind in the project's plane (and the platform's), as an editor/operator sees them: what must not change. */
async function snapshot() {
  const out: Record<string, unknown> = {};
  for (const k of kindsOfPlane(kubeKinds, 'project')) {
    const token = k.readRole === 'owner' ? kube.tokens.owner : kube.tokens.editor;
    const list = await kube.request('GET', collection(k), { token });
    expect(list.status).toBe(200);
    out[k.kind] = list.body.items.map((i: { metadata: { name: string; resourceVersion: string } }) => [i.metadata.name, i.metadata.resourceVersion]);
  }
  for (const k of kindsOfPlane(kubeKinds, 'platform')) {
    const list = await kube.request('GET', collection(k), { platform: true, token: kube.tokens.operator });
    out[`platform/${k.kind}`] = list.body.items.map((i: { metadata: { name: string; resourceVersion: string } }) => [
      i.metadata.name,
      i.metadata.resourceVersion,
    ]);
  }
  return out;
}

beforeAll(async () => {
  kube = await startKubeServer();
  const { db } = testDb();
  const user = await makeUser(db);
  stranger = (await createUserToken(db, { userId: user.id, name: 'stranger' }, systemActor('test'))).secret;
  // Real objects for the requests to aim at.
  const NS = '/apis/ipam.miloapis.com/v1alpha1/namespaces/default';
  const net = { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'Network', metadata: { name: 'secret-net' }, spec: { cidrs: [{ cidr: '10.90.0.0/16' }] } };
  expect((await kube.request('POST', `${NS}/networks`, { body: net })).status).toBe(201);
  const claim = { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'IPClaim', metadata: { name: 'secret-claim' }, spec: { network: 'secret-net' } };
  expect((await kube.request('POST', `${NS}/ipclaims`, { body: claim })).status).toBe(201);
});

afterAll(async () => {
  await kube?.stop();
});

describe('the Kubernetes API across projects', () => {
  test("every kind of a project's plane: another project's token and a stranger's answer 404 naming nothing, for every verb", async () => {
    const before = await snapshot();
    for (const k of kindsOfPlane(kubeKinds, 'project')) {
      const existing = (await kube.request('GET', collection(k), { token: kube.tokens.owner })).body.items[0]?.metadata?.name ?? 'absent';
      const one = `${collection(k)}/${encodeURIComponent(existing)}`;
      const body = { apiVersion: `${k.group}/${k.version}`, kind: k.kind, metadata: { name: existing, labels: { pwned: 'yes' } }, spec: {} };
      for (const token of [kube.tokens.otherProject, stranger]) {
        const answers = [
          await kube.request('GET', collection(k), { token }),
          await kube.request('GET', one, { token }),
          await kube.request('POST', collection(k), { token, body }),
          await kube.request('PUT', one, { token, body }),
          await kube.request('PATCH', one, { token, body: { metadata: { labels: { pwned: 'yes' } } }, contentType: 'application/merge-patch+json' }),
          await kube.request('PATCH', `${one}?fieldManager=x&force=true`, { token, body: JSON.stringify(body), contentType: 'application/apply-patch+yaml' }),
          await kube.request('DELETE', one, { token }),
        ];
        for (const a of answers) {
          expect({ kind: k.kind, status: a.status, message: a.body?.message }).toEqual({ kind: k.kind, status: 404, message: NOT_FOUND });
          expect(JSON.stringify(a.body)).not.toContain(existing === 'absent' ? kube.project.slug : existing);
          expect(JSON.stringify(a.body)).not.toContain(kube.project.slug);
        }
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  test('a viewer cannot write any kind; an editor cannot write what operators or owners write', async () => {
    const before = await snapshot();
    for (const k of kindsOfPlane(kubeKinds, 'project')) {
      const existing = (await kube.request('GET', collection(k), { token: kube.tokens.owner })).body.items[0]?.metadata?.name ?? 'absent';
      const one = `${collection(k)}/${encodeURIComponent(existing)}`;
      const tokens = [kube.tokens.viewer, ...(k.writeRole && k.writeRole !== 'editor' ? [kube.tokens.editor] : [])];
      for (const token of tokens) {
        const answers = [
          await kube.request('POST', collection(k), { token, body: { metadata: { name: 'x' }, spec: {} } }),
          await kube.request('PATCH', one, { token, body: { metadata: { labels: { pwned: 'yes' } } }, contentType: 'application/merge-patch+json' }),
          await kube.request('DELETE', one, { token }),
        ];
        for (const a of answers) expect({ kind: k.kind, status: a.status, reason: a.body.reason }).toEqual({ kind: k.kind, status: 403, reason: 'Forbidden' });
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  test('the platform plane: every kind refuses project and user tokens (403), an unknown token (401)', async () => {
    const before = await snapshot();
    for (const k of kindsOfPlane(kubeKinds, 'platform')) {
      const existing = (await kube.request('GET', collection(k), { platform: true, token: kube.tokens.operator })).body.items[0]?.metadata?.name ?? 'absent';
      const one = `${collection(k)}/${encodeURIComponent(existing)}`;
      for (const token of [kube.tokens.editor, kube.tokens.owner, kube.tokens.ownerUser, stranger]) {
        const answers = [
          await kube.request('GET', collection(k), { platform: true, token }),
          await kube.request('GET', one, { platform: true, token }),
          await kube.request('PATCH', one, {
            platform: true,
            token,
            body: { metadata: { labels: { pwned: 'yes' } } },
            contentType: 'application/merge-patch+json',
          }),
          await kube.request('DELETE', one, { platform: true, token }),
        ];
        for (const a of answers) {
          expect({ kind: k.kind, status: a.status, reason: a.body.reason }).toEqual({ kind: k.kind, status: 403, reason: 'Forbidden' });
          if (existing !== 'absent') expect(JSON.stringify(a.body)).not.toContain(existing);
        }
      }
      expect((await kube.request('GET', collection(k), { platform: true, token: 'not-a-token' })).status).toBe(401);
    }
    expect(await snapshot()).toEqual(before);
  });
});
