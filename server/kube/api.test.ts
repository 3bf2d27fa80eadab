import { KubeConfig, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { findCluster } from '@/server/cni/clusters';
import { addLease } from '@/server/cni/leases';
import { systemActor } from '@/server/audit/events';
import { getMachine } from '@/server/fleet/machines';
import { machineCapacityKind } from '@/server/kube/kinds/fleet';
import { createApiToken } from '@/server/tenancy/tokens';
import { getClaim } from '@/server/ipam/claims';
import { testDb } from '@/test/db';
import { makeUser } from '@/test/fixtures';
import { makeFleetCorner, startFleet } from '@/test/fleet';
import { startKubeServer } from '@/test/kube-server';
import { kubeconfig } from './kubeconfig';

/** The Kubernetes API's wire behaviour, request by request, and @kubernetes/client-node as a library client. */

let kube: Awaited<ReturnType<typeof startKubeServer>>;
const NS = '/apis/ipam.miloapis.com/v1alpha1/namespaces/default';

beforeAll(async () => {
  kube = await startKubeServer();
  const net = await kube.request('POST', `${NS}/networks`, {
    body: { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'Network', metadata: { name: 'wire' }, spec: { cidrs: [{ cidr: '10.50.0.0/16' }] } },
  });
  expect(net.status).toBe(201);
});

afterAll(async () => {
  await kube?.stop();
});

const claim = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'ipam.miloapis.com/v1alpha1',
  kind: 'IPClaim',
  metadata: { name },
  spec: { network: 'wire', prefixLength: 28, ...spec },
});

describe('the wire', () => {
  test('without a token: 401 Status; discovery, version and OpenAPI answer with one', async () => {
    const anonymous = await kube.request('GET', '/apis', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
    const aggregated = await kube.request('GET', '/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' });
    expect(aggregated.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const group = (name: string) => aggregated.body.items.find((g: { metadata: { name: string } }) => g.metadata.name === name);
    expect(group('ipam.miloapis.com').versions[0].resources.map((r: { resource: string }) => r.resource)).toEqual([
      'networks',
      'ipclaims',
      'retainedallocations',
      'clusters',
      'podleases',
      'capacityalertrules',
      'webhooks',
    ]);
    expect(group('metal.datumapis.com').versions[0].resources.map((r: { resource: string }) => r.resource)).toEqual([
      'machines',
      'machineallocations',
      'installations',
    ]);
    expect((await kube.request('GET', '/version')).body.major).toBe('1');
    const index = (await kube.request('GET', '/openapi/v3')).body;
    const url = index.paths['apis/ipam.miloapis.com/v1alpha1'].serverRelativeURL as string;
    expect(url.startsWith(`/apis/resourcemanager.miloapis.com/v1alpha1/projects/${kube.project.slug}/control-plane/openapi/v3/`)).toBe(true);
    const v3 = (await kube.request('GET', url.slice(url.indexOf('/openapi')))).body;
    expect(v3.components.schemas['com.miloapis.ipam.v1alpha1.IPClaim']['x-kubernetes-group-version-kind']).toEqual([
      { group: 'ipam.miloapis.com', version: 'v1alpha1', kind: 'IPClaim' },
    ]);
  });

  test('PUT with a stale resourceVersion is 409 Conflict; with the current one it writes and bumps it', async () => {
    const created = (await kube.request('POST', `${NS}/ipclaims`, { body: claim('put-me') })).body;
    const labelled = await kube.request('PUT', `${NS}/ipclaims/put-me`, { body: { ...created, metadata: { ...created.metadata, labels: { a: '1' } } } });
    expect(labelled.status).toBe(200);
    expect(Number(labelled.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    const stale = await kube.request('PUT', `${NS}/ipclaims/put-me`, { body: { ...created, metadata: { ...created.metadata, labels: { a: '2' } } } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ kind: 'Status', reason: 'Conflict', details: { name: 'put-me', group: 'ipam.miloapis.com', kind: 'IPClaim' } });
    expect(stale.body.message).toContain('the object has been modified');
    // The domain keeps the claim's labels too (they feed its quota).
    expect((await getClaim(testDb().db, kube.project.id, 'put-me')).labels).toEqual({ a: '1' });
  });

  test('immutable fields: 422 Invalid naming the field', async () => {
    const res = await kube.request('PATCH', `${NS}/ipclaims/put-me`, { body: { spec: { network: 'other' } }, contentType: 'application/merge-patch+json' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ reason: 'Invalid', details: { causes: [{ field: 'spec.network', reason: 'FieldValueInvalid' }] } });
    expect(res.body.details.causes[0].message).toContain('field is immutable');
  });

  test('JSON patch and merge patch change labels; the status subresource is read-only', async () => {
    const patched = await kube.request('PATCH', `${NS}/ipclaims/put-me`, {
      body: [{ op: 'add', path: '/metadata/labels/b', value: '2' }],
      contentType: 'application/json-patch+json',
    });
    expect(patched.body.metadata.labels).toEqual({ a: '1', b: '2' });
    const merged = await kube.request('PATCH', `${NS}/ipclaims/put-me`, {
      body: { metadata: { labels: { a: null } } },
      contentType: 'application/merge-patch+json',
    });
    expect(merged.body.metadata.labels).toEqual({ b: '2' });
    const status = await kube.request('PUT', `${NS}/ipclaims/put-me/status`, { body: merged.body });
    expect(status.status).toBe(405);
    expect((await kube.request('GET', `${NS}/ipclaims/put-me/status`)).body.status.phase).toBe('Bound');
  });

  test('fieldValidation: Strict refuses unknown fields, Warn drops them with a Warning header', async () => {
    const strict = await kube.request('POST', `${NS}/ipclaims?fieldValidation=Strict`, {
      body: { ...claim('strict'), spec: { network: 'wire', colour: 'red' } },
    });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('strict decoding error: unknown field "spec.colour"');
    const warned = await kube.request('POST', `${NS}/ipclaims`, { body: { ...claim('warned'), spec: { network: 'wire', prefixLength: 28, colour: 'red' } } });
    expect(warned.status).toBe(201);
    expect(warned.headers.warning).toBe('299 - "unknown field \\"spec.colour\\""');
  });

  test('dryRun=All decides and writes nothing; delete preconditions', async () => {
    const dry = await kube.request('POST', `${NS}/ipclaims?dryRun=All`, { body: claim('dry') });
    expect(dry.status).toBe(201);
    expect(dry.body.status.allocatedCIDR).toMatch(/^10\.50\./);
    expect((await kube.request('GET', `${NS}/ipclaims/dry`)).status).toBe(404);
    const current = (await kube.request('GET', `${NS}/ipclaims/warned`)).body;
    const wrong = await kube.request('DELETE', `${NS}/ipclaims/warned`, { body: { preconditions: { resourceVersion: '1' } } });
    expect(wrong.status).toBe(409);
    const dryDelete = await kube.request('DELETE', `${NS}/ipclaims/warned?dryRun=All`);
    expect(dryDelete.status).toBe(200);
    expect((await kube.request('GET', `${NS}/ipclaims/warned`)).status).toBe(200);
    const gone = await kube.request('DELETE', `${NS}/ipclaims/warned`, {
      body: { preconditions: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion } },
    });
    expect(gone.status).toBe(200);
    expect((await kube.request('GET', `${NS}/ipclaims/warned`)).body).toMatchObject({ reason: 'NotFound', code: 404 });
  });

  test('list pages with limit and continue; Table output', async () => {
    for (const n of ['page-a', 'page-b', 'page-c']) await kube.request('POST', `${NS}/ipclaims`, { body: claim(n, { prefixLength: 30 }) });
    const first = (await kube.request('GET', `${NS}/ipclaims?limit=2&labelSelector=!nothing&fieldSelector=status.phase=Bound`)).body;
    expect(first.items).toHaveLength(2);
    const rest = (await kube.request('GET', `${NS}/ipclaims?limit=100&continue=${first.metadata.continue}`)).body;
    const names = [...first.items, ...rest.items].map((i: KubernetesObject) => i.metadata!.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['page-a', 'page-b', 'page-c', 'put-me']));
    const t = (await kube.request('GET', `${NS}/ipclaims`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' })).body;
    expect(t.kind).toBe('Table');
    expect(t.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Network', 'CIDR', 'Phase', 'Pool', 'Reclaim', 'Age']);
    expect(t.rows[0].object.kind).toBe('PartialObjectMetadata');
  });

  test("another project's control plane: 404 without naming anything", async () => {
    const foreign = await kube.request('GET', `${NS}/ipclaims/put-me`, { token: kube.tokens.otherProject });
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toBe('the server could not find the requested resource');
    const viewerWrite = await kube.request('POST', `${NS}/ipclaims`, { token: kube.tokens.viewer, body: claim('nope') });
    expect(viewerWrite.status).toBe(403);
    expect(viewerWrite.body.reason).toBe('Forbidden');
  });
});

describe('namespaces', () => {
  const TEAM = '/apis/ipam.miloapis.com/v1alpha1/namespaces/team';

  test('a network and a claim named like ones in default live side by side in another namespace', async () => {
    expect((await kube.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } } })).status).toBe(201);
    const net = await kube.request('POST', `${TEAM}/networks`, {
      body: { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'Network', metadata: { name: 'wire' }, spec: { cidrs: [{ cidr: '10.51.0.0/16' }] } },
    });
    expect(net.status).toBe(201);
    expect(net.body.metadata.namespace).toBe('team');
    await kube.request('POST', `${NS}/ipclaims`, { body: claim('twin') });
    const twin = await kube.request('POST', `${TEAM}/ipclaims`, {
      body: { ...claim('twin'), spec: { network: 'wire', prefixLength: 28, reclaimPolicy: 'Retain' } },
    });
    expect(twin.status).toBe(201);
    // The claim in team is bound from team's network "wire", not default's.
    expect(twin.body.status.allocatedCIDR).toMatch(/^10\.51\./);
    expect((await kube.request('GET', `${NS}/ipclaims/twin`)).body.status.allocatedCIDR).toMatch(/^10\.50\./);
    const all = (await kube.request('GET', '/apis/ipam.miloapis.com/v1alpha1/ipclaims?fieldSelector=metadata.name=twin')).body;
    expect(all.items.map((i: KubernetesObject) => i.metadata!.namespace)).toEqual(['default', 'team']);
    // REST v1 and the domain's default reads see default's only.
    expect((await getClaim(testDb().db, kube.project.id, 'twin')).allocatedCidr).toMatch(/^10\.50\./);
    expect((await getClaim(testDb().db, kube.project.id, 'twin', 'team')).allocatedCidr).toMatch(/^10\.51\./);
    // A Retain claim deleted in team leaves its block under its name in team only.
    expect((await kube.request('DELETE', `${TEAM}/ipclaims/twin`)).status).toBe(200);
    const retained = (await kube.request('GET', `${TEAM}/retainedallocations`)).body.items;
    expect(retained.map((r: KubernetesObject) => r.metadata!.name)).toEqual(['twin']);
    expect((await kube.request('GET', `${NS}/retainedallocations/twin`)).status).toBe(404);
    expect((await kube.request('GET', `${NS}/ipclaims/twin`)).status).toBe(200);
    expect((await kube.request('DELETE', `${TEAM}/retainedallocations/twin`)).status).toBe(200);
    expect((await kube.request('DELETE', `${TEAM}/networks/wire`)).status).toBe(200);
    expect((await kube.request('GET', `${NS}/networks/wire`)).status).toBe(200);
  });

  test('lists page in key order across namespaces; a continue token too old is 410 Expired', async () => {
    await kube.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pages' } } });
    await kube.request('POST', '/apis/ipam.miloapis.com/v1alpha1/namespaces/pages/networks', {
      body: { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'Network', metadata: { name: 'wire' }, spec: { cidrs: [{ cidr: '10.52.0.0/16' }] } },
    });
    for (const n of ['p1', 'p2', 'p3'])
      await kube.request('POST', '/apis/ipam.miloapis.com/v1alpha1/namespaces/pages/ipclaims', { body: claim(n, { prefixLength: 30 }) });
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = (await kube.request('GET', `/apis/ipam.miloapis.com/v1alpha1/ipclaims?limit=2${token ? `&continue=${token}` : ''}`)).body;
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i: KubernetesObject) => `${i.metadata!.namespace}/${i.metadata!.name}`));
      token = page.metadata.continue;
    } while (token);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(['default/twin', 'pages/p1', 'pages/p2', 'pages/p3']));
    const old = Buffer.from(JSON.stringify({ ns: 'default', name: 'a', rv: '1', at: Date.now() - 10 * 60 * 1000 })).toString('base64url');
    const expired = await kube.request('GET', `${NS}/ipclaims?limit=1&continue=${old}`);
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
    expect((await kube.request('GET', `${NS}/ipclaims?limit=1&continue=nonsense`)).status).toBe(400);
  });
});

describe('@kubernetes/client-node', () => {
  test('KubernetesObjectApi creates, reads, patches and deletes each kind', async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig({ project: kube.project.slug, origin: kube.origin, caPem: kube.caPem, token: kube.tokens.editor }));
    const api = KubernetesObjectApi.makeApiClient(kc);
    const objects: KubernetesObject[] = [
      {
        apiVersion: 'ipam.miloapis.com/v1alpha1',
        kind: 'Network',
        metadata: { name: 'lib-net', namespace: 'default' },
        spec: { cidrs: [{ cidr: '10.60.0.0/16' }] },
      } as KubernetesObject,
      { ...claim('lib-claim'), metadata: { name: 'lib-claim', namespace: 'default' }, spec: { network: 'lib-net', prefixLength: 24 } } as KubernetesObject,
    ];
    for (const o of objects) {
      const created = await api.create(o);
      expect(created.metadata?.uid).toBeTruthy();
      const read = await api.read({ apiVersion: o.apiVersion!, kind: o.kind!, metadata: { name: o.metadata!.name!, namespace: 'default' } });
      expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
      const patched = await api.patch(
        { ...o, metadata: { ...o.metadata, labels: { via: 'client-node' } } },
        undefined,
        undefined,
        'client-node',
        undefined,
        'application/merge-patch+json' as never,
      );
      expect(patched.metadata?.labels).toEqual({ via: 'client-node' });
    }
    for (const o of [...objects].reverse()) await api.delete(o);
    await expect(
      api.read({ apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'IPClaim', metadata: { name: 'lib-claim', namespace: 'default' } }),
    ).rejects.toMatchObject({ code: 404 });
  });
});

describe('quota and tenancy kinds', () => {
  const QUOTA = '/apis/quota.miloapis.com/v1alpha1';
  const IAM = '/apis/iam.miloapis.com/v1alpha1';
  const TYPE = 'kubetest.example.com/widgets';
  const client = (token: string, platform = false) => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig({ project: kube.project.slug, origin: kube.origin, caPem: kube.caPem, token }));
    if (platform) kc.clusters[0] = { ...kc.clusters[0], server: kube.platformRoot };
    return KubernetesObjectApi.makeApiClient(kc);
  };

  test('platform control plane: operators only; registrations and creation policies through KubernetesObjectApi', async () => {
    expect((await kube.request('GET', '/apis', { platform: true, token: kube.tokens.editor })).status).toBe(403);
    expect((await kube.request('GET', '/apis', { platform: true, token: null })).status).toBe(401);
    const discovery = (await kube.request('GET', '/apis/quota.miloapis.com/v1alpha1', { platform: true, token: kube.tokens.operator })).body;
    expect(discovery.resources.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(['resourceregistrations', 'grantcreationpolicies', 'claimcreationpolicies', 'quotaincreaserequests']),
    );
    // A project's plane does not serve the platform's kinds.
    expect((await kube.request('GET', `${QUOTA}/resourceregistrations`, { token: kube.tokens.operator })).status).toBe(404);

    const api = client(kube.tokens.operator, true);
    const registration = {
      apiVersion: 'quota.miloapis.com/v1alpha1',
      kind: 'ResourceRegistration',
      metadata: { name: 'kubetest.example.com.widgets' },
      spec: { resourceType: TYPE, type: 'Allocation', baseUnit: 'widget', displayUnit: 'widgets', claimingKinds: ['Widget'] },
    } as KubernetesObject;
    const created = await api.create(registration);
    expect(created.metadata?.uid).toBeTruthy();
    const patched = await api.patch(
      {
        ...registration,
        metadata: { name: 'kubetest.example.com.widgets', labels: { tier: 'test' } },
        spec: { description: 'test widgets' },
      } as KubernetesObject,
      undefined,
      undefined,
      'client-node',
      undefined,
      'application/merge-patch+json' as never,
    );
    expect(patched.metadata?.labels).toEqual({ tier: 'test' });
    expect((patched as unknown as { spec: { description: string } }).spec.description).toBe('test widgets');
    expect(Number(patched.metadata?.generation)).toBe(2);
    const immutable = await kube.request('PATCH', '/apis/quota.miloapis.com/v1alpha1/resourceregistrations/kubetest.example.com.widgets', {
      platform: true,
      token: kube.tokens.operator,
      body: { spec: { resourceType: 'kubetest.example.com/gadgets' } },
      contentType: 'application/merge-patch+json',
    });
    expect(immutable.status).toBe(422);
    expect(immutable.body.details.causes[0]).toMatchObject({ field: 'spec.resourceType' });

    const policy = {
      apiVersion: 'quota.miloapis.com/v1alpha1',
      kind: 'GrantCreationPolicy',
      metadata: { name: 'kube-widgets' },
      spec: { grantNameTemplate: 'widgets-{{ trigger.metadata.name }}', allowances: [{ resourceType: TYPE, amount: 5 }], enabled: false },
    } as KubernetesObject;
    await api.create(policy);
    const read = await api.read({ apiVersion: 'quota.miloapis.com/v1alpha1', kind: 'GrantCreationPolicy', metadata: { name: 'kube-widgets' } });
    expect((read as unknown as { status: { conditions: { type: string; status: string }[] } }).status.conditions[0]).toMatchObject({
      type: 'Ready',
      status: 'True',
    });
    await api.delete(policy);
    await expect(
      api.read({ apiVersion: 'quota.miloapis.com/v1alpha1', kind: 'GrantCreationPolicy', metadata: { name: 'kube-widgets' } }),
    ).rejects.toMatchObject({
      code: 404,
    });

    const projects = (await kube.request('GET', '/apis/resourcemanager.miloapis.com/v1alpha1/projects', { platform: true, token: kube.tokens.operator })).body;
    expect(projects.items.map((p: KubernetesObject) => p.metadata!.name)).toEqual(expect.arrayContaining([kube.project.slug, kube.other.slug]));
    const organizations = (
      await kube.request('GET', '/apis/resourcemanager.miloapis.com/v1alpha1/organizations', { platform: true, token: kube.tokens.operator })
    ).body;
    const mine = organizations.items.find(
      (o: KubernetesObject) =>
        o.metadata!.name === projects.items.find((p: KubernetesObject) => p.metadata!.name === kube.project.slug).spec.organizationRef.name,
    );
    expect(mine.status.projects).toBeGreaterThanOrEqual(1);
    const table = await kube.request('GET', `/apis/resourcemanager.miloapis.com/v1alpha1/organizations/${mine.metadata.name}`, {
      platform: true,
      token: kube.tokens.operator,
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Display Name', 'Projects', 'Age']);
    // Read-only, and operators' alone.
    expect(
      (
        await kube.request('DELETE', `/apis/resourcemanager.miloapis.com/v1alpha1/organizations/${mine.metadata.name}`, {
          platform: true,
          token: kube.tokens.operator,
        })
      ).status,
    ).toBe(405);
    expect((await kube.request('GET', '/apis/resourcemanager.miloapis.com/v1alpha1/organizations', { platform: true, token: kube.tokens.editor })).status).toBe(
      403,
    );
  });

  test('grants (operators write), buckets (read-only), increase requests (tenants ask) in the project plane', async () => {
    const asOperator = client(kube.tokens.operator);
    const grant = {
      apiVersion: 'quota.miloapis.com/v1alpha1',
      kind: 'ResourceGrant',
      metadata: { name: 'kube-grant' },
      spec: { allowances: [{ resourceType: TYPE, amount: 10 }] },
    } as KubernetesObject;
    const editorWrite = await kube.request('POST', `${QUOTA}/resourcegrants`, { body: grant });
    expect(editorWrite.status).toBe(403);
    expect(editorWrite.body.message).toContain('an operator token is needed');
    await asOperator.create(grant);
    const grown = await asOperator.patch(
      { ...grant, spec: { allowances: [{ resourceType: TYPE, amount: 12 }] } } as KubernetesObject,
      undefined,
      undefined,
      'client-node',
      undefined,
      'application/merge-patch+json' as never,
    );
    expect((grown as unknown as { spec: { allowances: { amount: number }[] } }).spec.allowances[0].amount).toBe(12);
    const buckets = (await kube.request('GET', `${QUOTA}/allowancebuckets?fieldSelector=spec.resourceType=${TYPE}`)).body.items;
    expect(buckets).toHaveLength(1);
    expect(buckets[0].status).toMatchObject({ limit: 12, allocated: 0 });
    expect((await kube.request('DELETE', `${QUOTA}/allowancebuckets/${buckets[0].metadata.name}`)).status).toBe(405);

    const asEditor = client(kube.tokens.editor);
    const request = await asEditor.create({
      apiVersion: 'quota.miloapis.com/v1alpha1',
      kind: 'QuotaIncreaseRequest',
      metadata: {},
      spec: { resourceType: TYPE, amount: 5, reason: 'more widgets' },
    } as KubernetesObject);
    const name = request.metadata!.name!;
    expect((request as unknown as { status: { phase: string } }).status.phase).toBe('Pending');
    const labelled = await kube.request('PATCH', `${QUOTA}/quotaincreaserequests/${name}`, {
      body: { metadata: { labels: { team: 'a' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(labelled.body.metadata.labels).toEqual({ team: 'a' });
    const changed = await kube.request('PATCH', `${QUOTA}/quotaincreaserequests/${name}`, {
      body: { spec: { amount: 50 } },
      contentType: 'application/merge-patch+json',
    });
    expect(changed.status).toBe(422);
    expect(changed.body.details.causes[0].message).toContain('field is immutable');
    const queue = (await kube.request('GET', `${QUOTA}/quotaincreaserequests`, { platform: true, token: kube.tokens.operator })).body.items;
    expect(queue.map((q: KubernetesObject) => q.metadata!.name)).toContain(name);
    // Another project's plane never shows this project's requests.
    const foreign = await kube.request('GET', `${QUOTA}/quotaincreaserequests/${name}`, { token: kube.tokens.otherProject });
    expect(foreign.status).toBe(404);
    await asOperator.delete(grant);
  });

  test('operators decide increase requests by writing their status on the platform plane', async () => {
    const QIR = '/apis/quota.miloapis.com/v1alpha1/quotaincreaserequests';
    const ask = async (amount: number) =>
      (
        await kube.request('POST', `${QUOTA}/quotaincreaserequests`, {
          token: kube.tokens.editor,
          body: { apiVersion: 'quota.miloapis.com/v1alpha1', kind: 'QuotaIncreaseRequest', metadata: {}, spec: { resourceType: TYPE, amount, reason: 'more' } },
        })
      ).body.metadata.name as string;
    const status = (name: string, body: unknown, options: { token?: string; contentType?: string; method?: string; query?: string } = {}) =>
      kube.request(options.method ?? 'PATCH', `${QIR}/${name}/status${options.query ?? ''}`, {
        platform: true,
        token: options.token ?? kube.tokens.operator,
        body,
        contentType: options.contentType ?? 'application/merge-patch+json',
      });
    const limit = async () => (await kube.request('GET', `${QUOTA}/allowancebuckets?fieldSelector=spec.resourceType=${TYPE}`)).body.items[0]?.status.limit ?? 0;

    // One request per type may be pending: an earlier one is rejected first.
    const queued = (await kube.request('GET', `${QIR}?fieldSelector=status.phase=Pending`, { platform: true, token: kube.tokens.operator })).body.items;
    for (const q of queued) expect((await status(q.metadata.name, { status: { phase: 'Rejected', decisionReason: 'superseded' } })).status).toBe(200);
    const first = await ask(4);
    const before = await limit();
    // Only an operator decides; a tenant's token reaches no platform plane.
    expect((await status(first, { status: { phase: 'Approved' } }, { token: kube.tokens.editor })).status).toBe(403);
    // A dry run decides and keeps nothing.
    const dry = await status(first, { status: { phase: 'Approved' } }, { query: '?dryRun=All' });
    expect(dry.status).toBe(200);
    expect(dry.body.status.phase).toBe('Approved');
    expect((await kube.request('GET', `${QIR}/${first}`, { platform: true, token: kube.tokens.operator })).body.status.phase).toBe('Pending');
    expect(await limit()).toBe(before);
    // A rejection needs a reason: 422 naming the status field.
    const bare = await status(first, { status: { phase: 'Rejected' } });
    expect(bare.status).toBe(422);
    expect(bare.body.details.causes[0]).toMatchObject({ field: 'status.decisionReason' });
    const approved = await status(first, { status: { phase: 'Approved', approvedAmount: 3, decisionReason: 'three is enough' } });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toMatchObject({ phase: 'Approved', approvedAmount: 3, decisionReason: 'three is enough' });
    expect(approved.body.status.grantRef.name).toMatch(/^increase-/);
    expect(await limit()).toBe(before + 3);
    // Writing the same decision again changes nothing; another decision is a conflict.
    const again = await status(first, { status: { phase: 'Approved', approvedAmount: 3, decisionReason: 'three is enough' } });
    expect(again.status).toBe(200);
    expect(again.body.metadata.resourceVersion).toBe(approved.body.metadata.resourceVersion);
    expect((await status(first, { status: { phase: 'Rejected', decisionReason: 'changed my mind' } })).status).toBe(409);
    expect(await limit()).toBe(before + 3);

    // A JSON patch and a PUT of the whole object decide as well; the PUT's resourceVersion is its precondition.
    const second = await ask(2);
    const current = (await kube.request('GET', `${QIR}/${second}`, { platform: true, token: kube.tokens.operator })).body;
    const stale = await status(
      second,
      {
        ...current,
        metadata: { ...current.metadata, resourceVersion: `${current.metadata.resourceVersion}0` },
        status: { ...current.status, phase: 'Rejected', decisionReason: 'no' },
      },
      { method: 'PUT', contentType: 'application/json' },
    );
    expect(stale.status).toBe(409);
    const rejected = await status(
      second,
      { ...current, status: { ...current.status, phase: 'Rejected', decisionReason: 'not this month' } },
      {
        method: 'PUT',
        contentType: 'application/json',
      },
    );
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toMatchObject({ phase: 'Rejected', decisionReason: 'not this month' });
    expect(Number(rejected.body.metadata.resourceVersion)).toBeGreaterThan(Number(current.metadata.resourceVersion));
    expect(await limit()).toBe(before + 3);
    const third = await ask(1);
    const patched = await status(third, [{ op: 'replace', path: '/status/phase', value: 'Approved' }], { contentType: 'application/json-patch+json' });
    expect(patched.body.status.phase).toBe('Approved');
    expect(await limit()).toBe(before + 4);
    // The tenant sees the decisions in its own plane.
    const mine = (await kube.request('GET', `${QUOTA}/quotaincreaserequests/${second}`)).body;
    expect(mine.status).toMatchObject({ phase: 'Rejected', decisionReason: 'not this month' });
    // Status stays the system's on kinds that do not let anyone decide it.
    const claimStatus = await kube.request('PATCH', `${NS}/ipclaims/put-me/status`, {
      body: { status: { phase: 'Bound' } },
      contentType: 'application/merge-patch+json',
    });
    expect(claimStatus.status).toBe(405);
  });

  test('members (owners change roles) and invitations (owners invite and revoke)', async () => {
    const member = await makeUser(testDb().db, { projectId: kube.project.id, role: 'editor' });
    const path = `${IAM}/members/${encodeURIComponent(member.email)}`;
    expect((await kube.request('GET', path, { token: kube.tokens.viewer })).body.spec.role).toBe('editor');
    const denied = await kube.request('PATCH', path, {
      token: kube.tokens.editor,
      body: { spec: { role: 'viewer' } },
      contentType: 'application/merge-patch+json',
    });
    expect(denied.status).toBe(403);
    const asOwner = client(kube.tokens.ownerUser);
    const demoted = await asOwner.patch(
      { apiVersion: 'iam.miloapis.com/v1alpha1', kind: 'Member', metadata: { name: member.email }, spec: { role: 'viewer' } } as KubernetesObject,
      undefined,
      undefined,
      'client-node',
      undefined,
      'application/merge-patch+json' as never,
    );
    expect((demoted as unknown as { spec: { role: string } }).spec.role).toBe('viewer');
    const invitation = await asOwner.create({
      apiVersion: 'iam.miloapis.com/v1alpha1',
      kind: 'Invitation',
      metadata: {},
      spec: { email: 'invited-by-kube@example.com', role: 'viewer' },
    } as KubernetesObject);
    expect((invitation as unknown as { status: { link: string } }).status.link).toMatch(/^\//);
    const pending = (await kube.request('GET', `${IAM}/invitations`, { token: kube.tokens.ownerUser })).body.items;
    expect(pending.map((i: { spec: { email: string } }) => i.spec.email)).toContain('invited-by-kube@example.com');
    expect(pending[0].status.link).toBeUndefined();
    await asOwner.delete(invitation);
    expect((await kube.request('GET', `${IAM}/invitations/${invitation.metadata!.name}`, { token: kube.tokens.ownerUser })).status).toBe(404);
    await asOwner.delete({ apiVersion: 'iam.miloapis.com/v1alpha1', kind: 'Member', metadata: { name: member.email } } as KubernetesObject);
    expect((await kube.request('GET', path)).status).toBe(404);
  });
});

describe('machines (the simulator and a worker run the fleet)', () => {
  const MACHINES = '/apis/metal.datumapis.com/v1alpha1/namespaces/default/machines';
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  let corner: Awaited<ReturnType<typeof makeFleetCorner>>;
  const machine = (name: string, metadata: Record<string, unknown> = {}) => ({
    apiVersion: 'metal.datumapis.com/v1alpha1',
    kind: 'Machine',
    metadata: { name, ...metadata },
    spec: corner.spec,
  });
  const machineRows = async () =>
    (await testDb().db.execute(sql`select name, phase, deletion_requested_at is not null as deleting from machines where project_id = ${kube.project.id}`)).map(
      (r) => `${r.name}:${r.phase}:${r.deleting}`,
    );

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  beforeAll(async () => {
    fleet = await startFleet();
    corner = await makeFleetCorner(testDb().db, 2);
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  test('machine capacities (platform plane): every device by its reference, with state and the machine bound', async () => {
    const ctx = { db: testDb().db, projectId: kube.project.id, actor: systemActor('test') };
    const listed = await machineCapacityKind.storage.list(ctx, { namespace: undefined, limit: Infinity });
    const mine = listed.filter((c) => corner.devices.includes(c.name));
    expect(mine.map((c) => c.name)).toEqual([...corner.devices].sort());
    expect(mine[0].spec).toEqual({ deviceRef: corner.devices[0], class: corner.spec.class, location: corner.spec.location });
    expect(await machineCapacityKind.storage.get(ctx, corner.devices[1])).toMatchObject({ status: { health: 'Healthy' } });
    expect(await machineCapacityKind.storage.get(ctx, 'no-such-device')).toBeUndefined();
    expect(machineCapacityKind).toMatchObject({ plane: 'platform', namespaced: false });
  });

  test('dryRun=All: a create decides (catalogue, quota) and stores nothing; a refused one says why', async () => {
    const before = await machineRows();
    const dry = await kube.request('POST', `${MACHINES}?dryRun=All`, { body: machine('dry-m') });
    expect(dry.status).toBe(201);
    expect(dry.body.status.phase).toBe('Pending');
    expect(dry.body.metadata.uid).toBeTruthy();
    expect(await machineRows()).toEqual(before);
    const nowhere = await kube.request('POST', `${MACHINES}?dryRun=All`, { body: { ...machine('dry-x'), spec: { ...corner.spec, location: 'no-such-site' } } });
    expect(nowhere.status).toBeGreaterThanOrEqual(400);
    expect(nowhere.body.kind).toBe('Status');
    expect(nowhere.body.message).toContain('no-such-site');
    expect(await machineRows()).toEqual(before);
  });

  test(
    "status is the system's; the spec is immutable; a user finalizer holds a DELETE until removed, then the release runs and the object goes",
    {
      timeout: 120_000,
    },
    async () => {
      const created = await kube.request('POST', MACHINES, { body: machine('held', { finalizers: ['example.com/hold'], labels: { app: 'db' } }) });
      expect(created.status).toBe(201);
      expect(created.body.metadata.finalizers).toEqual(['example.com/hold']);
      expect((await kube.request('PUT', `${MACHINES}/held/status`, { body: created.body })).status).toBe(405);
      const changed = await kube.request('PATCH', `${MACHINES}/held`, { body: { spec: { desiredPower: 'off' } }, contentType: 'application/merge-patch+json' });
      expect(changed.status).toBe(422);
      expect(changed.body.details.causes).toEqual([
        expect.objectContaining({ field: 'spec.desiredPower', message: expect.stringContaining('field is immutable') }),
      ]);

      const wrongUid = await kube.request('DELETE', `${MACHINES}/held`, { body: { preconditions: { uid: '00000000-0000-4000-8000-000000000000' } } });
      expect(wrongUid.status).toBe(409);
      const dryDelete = await kube.request('DELETE', `${MACHINES}/held?dryRun=All`);
      expect(dryDelete.status).toBe(202);
      expect(dryDelete.body.metadata.deletionTimestamp).toBeTruthy();
      expect((await kube.request('GET', `${MACHINES}/held`)).body.metadata.deletionTimestamp).toBeUndefined();

      const held = await kube.request('DELETE', `${MACHINES}/held`, { body: { preconditions: { uid: created.body.metadata.uid } } });
      expect(held.status).toBe(202);
      expect(held.body.metadata.deletionTimestamp).toMatch(/Z$/);
      expect(held.body.metadata.finalizers).toEqual(['example.com/hold']);
      // Held: the domain has not been asked to release it.
      expect((await getMachine(testDb().db, kube.project.id, 'held')).deletionRequestedAt).toBeNull();
      const more = await kube.request('PATCH', `${MACHINES}/held`, {
        body: { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } },
        contentType: 'application/merge-patch+json',
      });
      expect(more.status).toBe(422);
      expect(more.body.details.causes[0]).toMatchObject({ field: 'metadata.finalizers', reason: 'FieldValueForbidden' });
      const again = await kube.request('DELETE', `${MACHINES}/held`);
      expect(again.body.metadata.deletionTimestamp).toBe(held.body.metadata.deletionTimestamp);

      const released = await kube.request('PATCH', `${MACHINES}/held`, {
        body: { metadata: { finalizers: null } },
        contentType: 'application/merge-patch+json',
      });
      expect(released.status).toBe(200);
      expect((await getMachine(testDb().db, kube.project.id, 'held')).deletionRequestedAt).not.toBeNull();
      await waitFor('the machine to be gone', async () => (await kube.request('GET', `${MACHINES}/held`)).status === 404);
      expect((await getMachine(testDb().db, kube.project.id, 'held')).phase).toBe('Released');
    },
  );

  test('a machine released in a namespace leaves nothing behind: the namespace can then be deleted', { timeout: 120_000 }, async () => {
    expect((await kube.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'racks' } } })).status).toBe(201);
    const IN_NS = '/apis/metal.datumapis.com/v1alpha1/namespaces/racks/machines';
    expect((await kube.request('POST', IN_NS, { body: machine('ns-m', { labels: { rack: 'r1' } }) })).status).toBe(201);
    expect((await kube.request('DELETE', '/api/v1/namespaces/racks')).status).toBe(409);
    const deleting = await kube.request('DELETE', `${IN_NS}/ns-m`);
    expect([200, 202]).toContain(deleting.status);
    await waitFor('ns-m to be gone from the list', async () => (await kube.request('GET', IN_NS)).body.items.length === 0);
    expect((await getMachine(testDb().db, kube.project.id, 'ns-m')).phase).toBe('Released');
    expect((await kube.request('DELETE', '/api/v1/namespaces/racks')).status).toBe(200);
  });

  test('KubernetesObjectApi creates, reads, patches and deletes a machine; list and Table', { timeout: 120_000 }, async () => {
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig({ project: kube.project.slug, origin: kube.origin, caPem: kube.caPem, token: kube.tokens.editor }));
    const api = KubernetesObjectApi.makeApiClient(kc);
    const object = { ...machine('lib-m'), metadata: { name: 'lib-m', namespace: 'default' } } as KubernetesObject;
    const created = await api.create(object);
    expect(created.metadata?.uid).toBe((await getMachine(testDb().db, kube.project.id, 'lib-m')).id);
    const read = await api.read({ apiVersion: object.apiVersion!, kind: 'Machine', metadata: { name: 'lib-m', namespace: 'default' } });
    expect(read.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
    const patched = await api.patch(
      { ...object, metadata: { ...object.metadata, labels: { via: 'client-node' } } },
      undefined,
      undefined,
      'client-node',
      undefined,
      'application/merge-patch+json' as never,
    );
    expect(patched.metadata?.labels).toEqual({ via: 'client-node' });
    const listed = await api.list(
      'metal.datumapis.com/v1alpha1',
      'Machine',
      'default',
      undefined,
      undefined,
      undefined,
      'metadata.name=lib-m',
      'via=client-node',
    );
    expect(listed.items.map((i) => i.metadata?.name)).toEqual(['lib-m']);
    const t = (await kube.request('GET', MACHINES, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' })).body;
    expect(t.columnDefinitions.map((c: { name: string }) => c.name)).toEqual([
      'Name',
      'Phase',
      'Site',
      'Reason',
      'Class',
      'Profile',
      'Device',
      'Addresses',
      'Age',
    ]);

    // What the system made for it: its allocation and installation, read-only kinds.
    await waitFor('lib-m to be Ready', async () => (await kube.request('GET', `${MACHINES}/lib-m`)).body.status.phase === 'Ready');
    const FLEET = '/apis/metal.datumapis.com/v1alpha1/namespaces/default';
    const allocations = (await kube.request('GET', `${FLEET}/machineallocations?fieldSelector=spec.machine=lib-m`)).body.items;
    expect(allocations).toHaveLength(1);
    expect(allocations[0].spec).toMatchObject({ machine: 'lib-m', deviceRef: expect.stringMatching(/^dev-/) });
    expect(allocations[0].metadata.name).toBe((await getMachine(testDb().db, kube.project.id, 'lib-m')).allocationId);
    expect(allocations[0].status.status).toBe('Committed');
    const installs = (await kube.request('GET', `${FLEET}/installations?fieldSelector=spec.machine=lib-m`)).body.items;
    expect(installs.map((i: { status: { status: string }; spec: { allocation: string } }) => [i.spec.allocation, i.status.status])).toEqual([
      [allocations[0].metadata.name, 'Succeeded'],
    ]);
    expect((await kube.request('GET', `${FLEET}/installations/${installs[0].metadata.name}`)).status).toBe(200);
    expect((await kube.request('DELETE', `${FLEET}/machineallocations/${allocations[0].metadata.name}`)).status).toBe(405);
    expect((await kube.request('POST', `${FLEET}/installations`, { body: installs[0] })).status).toBe(405);
    // Machine capacities are the platform's: not on a project's control plane.
    const fleetResources = (await kube.request('GET', '/apis/metal.datumapis.com/v1alpha1')).body.resources.map((r: { name: string }) => r.name);
    expect(fleetResources.filter((r: string) => !r.includes('/'))).toEqual(['machines', 'machineallocations', 'installations']);
    expect((await kube.request('GET', '/apis/metal.datumapis.com/v1alpha1/machinecapacities')).status).toBe(404);

    await api.delete(object);
    await waitFor('the machine to be gone', async () => (await kube.request('GET', `${MACHINES}/lib-m`)).status === 404);
    const released = (await kube.request('GET', `${FLEET}/machineallocations/${allocations[0].metadata.name}`)).body;
    expect(released.status.status).toBe('Released');
    await expect(api.read({ apiVersion: object.apiVersion!, kind: 'Machine', metadata: { name: 'lib-m', namespace: 'default' } })).rejects.toMatchObject({
      code: 404,
    });
  });
});

describe('clusters and their pod leases', () => {
  const IPAM = '/apis/ipam.miloapis.com/v1alpha1/namespaces/default';
  const cluster = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'ipam.miloapis.com/v1alpha1',
    kind: 'Cluster',
    metadata: { name },
    spec: { network: 'wire', nodeBlockPrefixV4: 28, ...spec },
  });

  test('create (dry run first), leases readable as a list kind and by name, read-only; a deletion under way shows its finalizer; delete releases', async () => {
    const dry = await kube.request('POST', `${IPAM}/clusters?dryRun=All`, { body: cluster('k1') });
    expect(dry.status).toBe(201);
    expect((await kube.request('GET', `${IPAM}/clusters/k1`)).status).toBe(404);
    const created = await kube.request('POST', `${IPAM}/clusters`, { body: cluster('k1', { description: 'the lab cluster' }) });
    expect(created.status).toBe(201);
    expect(created.body.spec).toEqual({ network: 'wire', description: 'the lab cluster', nodeBlockPrefixV4: 28, nodeBlockPrefixV6: 120 });
    const moved = await kube.request('PATCH', `${IPAM}/clusters/k1`, { body: { spec: { network: 'elsewhere' } }, contentType: 'application/merge-patch+json' });
    expect(moved.status).toBe(422);
    expect(moved.body.details.causes[0]).toMatchObject({ field: 'spec.network', message: expect.stringContaining('field is immutable') });

    const { db } = testDb();
    const ref = await findCluster(db, kube.project.id, 'k1');
    const [lease] = await addLease(
      db,
      ref,
      { cniNetwork: 'meridian', containerId: 'c0ffee', ifname: 'eth0', node: 'node-a', podNamespace: 'web', podName: 'web-0' },
      systemActor('test'),
    );
    const name = `k1.${lease.address.split('/')[0]}`;
    const list = (await kube.request('GET', `${IPAM}/podleases?fieldSelector=spec.cluster=k1,spec.node=node-a`)).body;
    expect(list.items.map((i: KubernetesObject) => i.metadata!.name)).toEqual([name]);
    const one = (await kube.request('GET', `${IPAM}/podleases/${name}`)).body;
    expect(one.spec).toMatchObject({ cluster: 'k1', node: 'node-a', podNamespace: 'web', podName: 'web-0', family: 'IPv4' });
    const t = (await kube.request('GET', `${IPAM}/podleases`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' })).body;
    expect(t.rows[0].cells.slice(0, 5)).toEqual([name, 'k1', lease.address.split('/')[0], 'node-a', 'web/web-0']);
    expect((await kube.request('DELETE', `${IPAM}/podleases/${name}`)).status).toBe(405);
    expect(
      (await kube.request('PATCH', `${IPAM}/podleases/${name}`, { body: { metadata: { labels: { a: 'b' } } }, contentType: 'application/merge-patch+json' }))
        .status,
    ).toBe(405);
    const resources = (await kube.request('GET', '/apis/ipam.miloapis.com/v1alpha1')).body.resources;
    expect(resources.find((r: { name: string }) => r.name === 'podleases').verbs).toEqual(['get', 'list']);
    expect((await kube.request('GET', `${IPAM}/clusters/k1`)).body.status).toEqual({ leases: 1, nodes: 1, blocks: 1 });

    // A deletion the worker is finishing (as a big cluster's is): deletionTimestamp and the finalizer.
    await db.execute(sql`update clusters set deletion_timestamp = now() where id = ${ref.id}`);
    const deleting = (await kube.request('GET', `${IPAM}/clusters/k1`)).body;
    expect(deleting.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(deleting.metadata.finalizers).toEqual(['ipam.miloapis.com/release-leases']);

    const deleted = await kube.request('DELETE', `${IPAM}/clusters/k1`);
    expect(deleted.status).toBe(200);
    expect((await kube.request('GET', `${IPAM}/clusters/k1`)).status).toBe(404);
    expect((await kube.request('GET', `${IPAM}/podleases`)).body.items).toEqual([]);
  });
});

describe('webhooks', () => {
  const WEBHOOKS = '/apis/ipam.miloapis.com/v1alpha1/namespaces/default/webhooks';
  const webhook = (name: string, url = 'https://8.8.8.8/meridian-alerts') => ({
    apiVersion: 'ipam.miloapis.com/v1alpha1',
    kind: 'Webhook',
    metadata: { name },
    spec: { url },
  });

  test('owners register (the secret answered once) and remove them; editors read only; a non-public target is refused with its field', async () => {
    const owner = (await createApiToken(testDb().db, { projectId: kube.project.id, name: 'kube-owner', role: 'owner' }, systemActor('test'))).secret;
    const byEditor = await kube.request('POST', WEBHOOKS, { body: webhook('alerts') });
    expect(byEditor.status).toBe(403);
    const dry = await kube.request('POST', `${WEBHOOKS}?dryRun=All`, { token: owner, body: webhook('alerts') });
    expect(dry.status).toBe(201);
    expect(dry.body.status.signingSecret).toBeUndefined();
    expect((await kube.request('GET', `${WEBHOOKS}/alerts`)).status).toBe(404);
    const created = await kube.request('POST', WEBHOOKS, { token: owner, body: webhook('alerts') });
    expect(created.status).toBe(201);
    expect(created.body.status.signingSecret).toMatch(/^whsec_/);
    const read = (await kube.request('GET', `${WEBHOOKS}/alerts`)).body;
    expect(read.spec).toEqual({ url: 'https://8.8.8.8/meridian-alerts' });
    expect(read.status).toEqual({ enabled: true, pending: 0, delivered: 0 });
    const inside = await kube.request('POST', WEBHOOKS, { token: owner, body: webhook('inside', 'https://127.0.0.1/hook') });
    expect(inside.status).toBeGreaterThanOrEqual(400);
    expect(inside.status).toBeLessThan(500);
    expect(inside.body.kind).toBe('Status');
    const moved = await kube.request('PATCH', `${WEBHOOKS}/alerts`, {
      token: owner,
      body: { spec: { url: 'https://8.8.4.4/x' } },
      contentType: 'application/merge-patch+json',
    });
    expect(moved.body.details.causes[0]).toMatchObject({ field: 'spec.url', message: expect.stringContaining('field is immutable') });
    expect((await kube.request('DELETE', `${WEBHOOKS}/alerts`, { token: owner })).status).toBe(200);
    expect((await kube.request('GET', `${WEBHOOKS}/alerts`)).status).toBe(404);
  });
});

describe('capacity alert rules', () => {
  const RULES = '/apis/ipam.miloapis.com/v1alpha1/namespaces/default/capacityalertrules';
  const rule = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'ipam.miloapis.com/v1alpha1',
    kind: 'CapacityAlertRule',
    metadata: { name },
    spec,
  });

  test('a rule per network (named for it) and for the project: create, defaults, update, immutable scope, refusals naming the field, delete', async () => {
    const wrongName = await kube.request('POST', RULES, { body: rule('wire', { network: 'wire' }) });
    expect(wrongName.status).toBe(422);
    expect(wrongName.body.message).toContain('network.wire');
    const insane = await kube.request('POST', RULES, { body: rule('project', { warningPercent: 90, criticalPercent: 50 }) });
    expect(insane.status).toBe(422);
    expect(insane.body.details.causes[0].field).toBe('spec.warningPercent');
    const dry = await kube.request('POST', `${RULES}?dryRun=All`, { body: rule('network.wire', { network: 'wire', warningPercent: 70 }) });
    expect(dry.status).toBe(201);
    expect((await kube.request('GET', `${RULES}/network.wire`)).status).toBe(404);
    const created = await kube.request('POST', RULES, { body: rule('network.wire', { network: 'wire', warningPercent: 70 }) });
    expect(created.status).toBe(201);
    expect(created.body.spec).toEqual({ network: 'wire', warningPercent: 70, criticalPercent: 95, forecastDays: 7, hysteresisPercent: 5, enabled: true });
    expect((await kube.request('POST', RULES, { body: rule('network.wire', { network: 'wire' }) })).body.reason).toBe('AlreadyExists');
    const project = await kube.request('POST', RULES, { body: rule('project', { criticalPercent: 99 }) });
    expect(project.status).toBe(201);
    const lowered = await kube.request('PATCH', `${RULES}/network.wire`, {
      body: { spec: { criticalPercent: 90 } },
      contentType: 'application/merge-patch+json',
    });
    expect(lowered.status).toBe(200);
    expect(lowered.body.metadata.generation).toBe(2);
    expect((await kube.request('GET', `${RULES}/network.wire`)).body.spec.criticalPercent).toBe(90);
    const rescoped = await kube.request('PATCH', `${RULES}/network.wire`, {
      body: { spec: { network: null, cluster: 'k9' } },
      contentType: 'application/merge-patch+json',
    });
    expect(rescoped.status).toBe(422);
    expect(rescoped.body.details.causes.map((c: { field: string }) => c.field)).toEqual(['spec.network', 'spec.cluster']);
    const names = (await kube.request('GET', RULES)).body.items.map((i: KubernetesObject) => i.metadata!.name);
    expect(names).toEqual(['network.wire', 'project']);
    expect((await kube.request('DELETE', `${RULES}/network.wire`)).status).toBe(200);
    expect((await kube.request('GET', RULES)).body.items.map((i: KubernetesObject) => i.metadata!.name)).toEqual(['project']);
  });
});
