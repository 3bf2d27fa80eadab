import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { getMachine } from '@/server/fleet/machines';
import { testDb } from '@/test/db';
import { makeFleetCorner, startFleet } from '@/test/fleet';
import { startKubeServer } from '@/test/kube-server';
import { kubeconfig } from './kubeconfig';

/**
 * Stock kubectl (/usr/bin/kubectl, Debian's kubernetes-client 1.32) against the Kubernetes API
 * served over HTTPS by the web process's server (server/kube/https.ts) on a real database, through
 * kubeconfigs as `meridian kubeconfig` writes them.
 */

const run = promisify(execFile);
let kube: Awaited<ReturnType<typeof startKubeServer>>;
let dir: string;
let config: string;
let viewerConfig: string;
let otherConfig: string;
let slug: string;

async function kubectl(args: string[], options: { config?: string; input?: string } = {}) {
  const child = run('/usr/bin/kubectl', args, { env: { ...process.env, KUBECONFIG: options.config ?? config, HOME: dir }, encoding: 'utf8', timeout: 60_000 });
  if (options.input !== undefined) child.child.stdin?.end(options.input);
  return child;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** kubectl's failure: its exit code and what it said. */
async function kubectlFails(args: string[], options: { config?: string; input?: string } = {}) {
  try {
    const out = await kubectl(args, options);
    throw new Error(`kubectl ${args.join(' ')} succeeded: ${out.stdout}`);
  } catch (e) {
    const err = e as { code?: number; stderr?: string; stdout?: string };
    if (typeof err.code !== 'number') throw e;
    return { code: err.code, stderr: err.stderr ?? '', stdout: err.stdout ?? '' };
  }
}

beforeAll(async () => {
  kube = await startKubeServer();
  dir = kube.dir;
  slug = kube.project.slug;
  const write = (name: string, token: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, kubeconfig({ project: slug, origin: kube.origin, caPem: kube.caPem, token }));
    return file;
  };
  config = write('editor.kubeconfig', kube.tokens.editor);
  viewerConfig = write('viewer.kubeconfig', kube.tokens.viewer);
  // A token of another project, pointed at this project's control plane.
  otherConfig = write('other.kubeconfig', kube.tokens.otherProject);
});

afterAll(async () => {
  await kube?.stop();
});

describe('kubectl', () => {
  test('api-resources lists the IPAM kinds with their short names', async () => {
    const { stdout } = await kubectl(['api-resources']);
    expect(stdout).toMatch(/ipclaims\s+ipc\s+ipam\.miloapis\.com\/v1alpha1\s+true\s+IPClaim/);
    expect(stdout).toMatch(/networks\s+net\s+ipam\.miloapis\.com\/v1alpha1\s+true\s+Network/);
    expect(stdout).toMatch(/namespaces\s+ns\s+v1\s+false\s+Namespace/);
  });

  test('explain reads the OpenAPI v3 schema of a field', async () => {
    const { stdout } = await kubectl(['explain', 'ipclaim.spec']);
    expect(stdout).toContain('KIND:       IPClaim');
    expect(stdout).toContain('GROUP:      ipam.miloapis.com');
    expect(stdout).toMatch(/network\s+<string> -required-/);
    expect(stdout).toContain('The network the block is claimed from');
  });

  test('apply of a network and claims, apply again unchanged, get, label, annotate, wait, diff, delete', async () => {
    const manifest = `apiVersion: ipam.miloapis.com/v1alpha1
kind: Network
metadata:
  name: lab
spec:
  description: the lab
  cidrs:
    - cidr: 10.20.0.0/16
---
apiVersion: ipam.miloapis.com/v1alpha1
kind: IPClaim
metadata:
  name: web
  labels:
    app: web
spec:
  network: lab
  prefixLength: 24
---
apiVersion: ipam.miloapis.com/v1alpha1
kind: IPClaim
metadata:
  name: db
spec:
  network: lab
  prefixLength: 28
`;
    const file = path.join(dir, 'lab.yaml');
    writeFileSync(file, manifest);
    const first = await kubectl(['apply', '-f', file]);
    expect(first.stdout).toBe('network.ipam.miloapis.com/lab created\nipclaim.ipam.miloapis.com/web created\nipclaim.ipam.miloapis.com/db created\n');
    const again = await kubectl(['apply', '-f', file]);
    expect(again.stdout).toBe('network.ipam.miloapis.com/lab unchanged\nipclaim.ipam.miloapis.com/web unchanged\nipclaim.ipam.miloapis.com/db unchanged\n');

    const table = await kubectl(['get', 'ipclaims']);
    expect(table.stdout).toMatch(/^NAME\s+NETWORK\s+CIDR\s+PHASE\s+AGE\n/);
    expect(table.stdout).toMatch(/\nweb\s+lab\s+10\.20\.\d+\.0\/24\s+Bound\s+\d+s\n/);
    const wide = await kubectl(['get', 'ipc', '-o', 'wide', '-l', 'app=web']);
    expect(wide.stdout).toMatch(/^NAME\s+NETWORK\s+CIDR\s+PHASE\s+POOL\s+RECLAIM\s+AGE\n/);
    expect(wide.stdout.trim().split('\n')).toHaveLength(2);

    const asYaml = await kubectl(['get', 'ipclaim', 'web', '-o', 'yaml']);
    expect(asYaml.stdout).toContain('kind: IPClaim');
    expect(asYaml.stdout).toMatch(/resourceVersion: "\d+"/);
    expect(asYaml.stdout).toContain('kubectl.kubernetes.io/last-applied-configuration');
    expect(asYaml.stdout).toContain('phase: Bound');

    await kubectl(['label', 'ipclaim', 'db', 'tier=data']);
    await kubectl(['annotate', 'ipclaim', 'db', 'owner=team-a']);
    const labelled = JSON.parse((await kubectl(['get', 'ipclaim', 'db', '-o', 'json'])).stdout);
    expect(labelled.metadata.labels).toEqual({ tier: 'data' });
    expect(labelled.metadata.annotations.owner).toBe('team-a');
    expect((await kubectl(['get', 'ipclaims', '-l', 'tier=data', '-o', 'name'])).stdout).toBe('ipclaim.ipam.miloapis.com/db\n');
    expect((await kubectl(['get', 'ipclaims', '--field-selector', 'spec.network=lab,metadata.name!=db', '-o', 'name'])).stdout).toBe(
      'ipclaim.ipam.miloapis.com/web\n',
    );

    const waited = await kubectl(['wait', '--for=jsonpath={.status.phase}=Bound', 'ipclaim/web', '--timeout=20s']);
    expect(waited.stdout).toContain('ipclaim.ipam.miloapis.com/web condition met');

    // A changed description: diff shows it (exit 1), apply changes it.
    writeFileSync(file, manifest.replace('description: the lab', 'description: the lab, second floor'));
    const diff = await kubectlFails(['diff', '-f', file]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('+  description: the lab, second floor');
    expect((await kubectl(['apply', '-f', file])).stdout).toContain('network.ipam.miloapis.com/lab configured');

    // Immutable: a claim's network cannot change.
    writeFileSync(file, manifest.replace('prefixLength: 28', 'prefixLength: 27'));
    const immutable = await kubectlFails(['apply', '-f', file]);
    expect(immutable.stderr).toContain('spec.prefixLength: Invalid value: 27: field is immutable');

    expect((await kubectl(['delete', 'ipclaim', 'web', 'db'])).stdout).toBe(
      'ipclaim.ipam.miloapis.com "web" deleted\nipclaim.ipam.miloapis.com "db" deleted\n',
    );
    const gone = await kubectlFails(['get', 'ipclaim', 'web']);
    expect(gone.stderr).toContain('Error from server (NotFound): ipclaims.ipam.miloapis.com "web" not found');
  });

  test('server-side apply: a second field manager conflicts (409 naming the manager and field), --force-conflicts takes the field over', async () => {
    const net = `apiVersion: ipam.miloapis.com/v1alpha1
kind: Network
metadata:
  name: ssa
spec:
  cidrs:
    - cidr: 10.30.0.0/16
---
apiVersion: ipam.miloapis.com/v1alpha1
kind: IPClaim
metadata:
  name: ssa-a
  labels:
    team: blue
spec:
  network: ssa
  prefixLength: 26
`;
    const file = path.join(dir, 'ssa.yaml');
    writeFileSync(file, net);
    const first = await kubectl(['apply', '--server-side', '--field-manager', 'flux', '-f', file]);
    expect(first.stdout).toBe('network.ipam.miloapis.com/ssa serverside-applied\nipclaim.ipam.miloapis.com/ssa-a serverside-applied\n');
    const again = await kubectl(['apply', '--server-side', '--field-manager', 'flux', '-f', file]);
    expect(again.stdout).toContain('ipclaim.ipam.miloapis.com/ssa-a serverside-applied');
    const claim = JSON.parse((await kubectl(['get', 'ipclaim', 'ssa-a', '-o', 'json', '--show-managed-fields'])).stdout);
    expect(claim.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: 'flux',
        operation: 'Apply',
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } }, 'f:spec': { 'f:network': {}, 'f:prefixLength': {} } },
      }),
    ]);

    const other = path.join(dir, 'ssa-other.yaml');
    writeFileSync(
      other,
      `apiVersion: ipam.miloapis.com/v1alpha1
kind: IPClaim
metadata:
  name: ssa-a
  labels:
    team: red
spec:
  network: ssa
`,
    );
    const conflict = await kubectlFails(['apply', '--server-side', '--field-manager', 'argo', '-f', other]);
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "flux"');
    expect(conflict.stderr).toContain('.metadata.labels.team');
    const forced = await kubectl(['apply', '--server-side', '--field-manager', 'argo', '--force-conflicts', '-f', other]);
    expect(forced.stdout).toContain('serverside-applied');
    const taken = JSON.parse((await kubectl(['get', 'ipclaim', 'ssa-a', '-o', 'json', '--show-managed-fields'])).stdout);
    expect(taken.metadata.labels).toEqual({ team: 'red' });
    const managers = Object.fromEntries(taken.metadata.managedFields.map((m: { manager: string; fieldsV1: unknown }) => [m.manager, m.fieldsV1]));
    expect(managers.argo).toEqual({ 'f:metadata': { 'f:labels': { 'f:team': {} } }, 'f:spec': { 'f:network': {} } });
    expect(managers.flux).toEqual({ 'f:spec': { 'f:network': {}, 'f:prefixLength': {} } });

    await kubectl(['delete', 'ipclaim/ssa-a', 'network/ssa']);
  });

  test('create namespace, a claim in it; names and lists are per namespace', async () => {
    expect((await kubectl(['create', 'namespace', 'dev'])).stdout).toBe('namespace/dev created\n');
    expect((await kubectl(['get', 'namespaces', '-o', 'name'])).stdout).toBe('namespace/default\nnamespace/dev\n');
    await kubectl(['apply', '-f', '-'], {
      input: `apiVersion: ipam.miloapis.com/v1alpha1
kind: Network
metadata: {name: devnet, namespace: dev}
spec: {cidrs: [{cidr: 10.40.0.0/16}]}
`,
    });
    const created = await kubectl(['-n', 'dev', 'create', '-f', '-'], {
      input: 'apiVersion: ipam.miloapis.com/v1alpha1\nkind: IPClaim\nmetadata: {name: dev-claim}\nspec: {network: devnet, prefixLength: 24}\n',
    });
    expect(created.stdout).toBe('ipclaim.ipam.miloapis.com/dev-claim created\n');
    expect((await kubectl(['-n', 'dev', 'get', 'ipclaims', '-o', 'name'])).stdout).toBe('ipclaim.ipam.miloapis.com/dev-claim\n');
    expect((await kubectl(['get', 'ipclaims', '-o', 'name'])).stdout).not.toContain('dev-claim');
    expect((await kubectl(['get', 'ipclaims', '-A', '--no-headers'])).stdout).toMatch(/^dev\s+dev-claim\s+devnet\s+10\.40\.0\.0\/24\s+Bound/m);
    const elsewhere = await kubectlFails(['get', 'ipclaim', 'dev-claim']);
    expect(elsewhere.stderr).toContain('(NotFound)');
    const noSuch = await kubectlFails(['-n', 'nope', 'create', '-f', '-'], {
      input: 'apiVersion: ipam.miloapis.com/v1alpha1\nkind: IPClaim\nmetadata: {name: x}\nspec: {network: devnet}\n',
    });
    expect(noSuch.stderr).toContain('namespaces "nope" not found');
    const busy = await kubectlFails(['delete', 'namespace', 'dev']);
    expect(busy.stderr).toContain('still holds');
    await kubectl(['-n', 'dev', 'delete', 'ipclaim/dev-claim', 'network/devnet']);
    expect((await kubectl(['delete', 'namespace', 'dev'])).stdout).toBe('namespace "dev" deleted\n');
  });

  test("a viewer token reads but cannot write; another project's token finds nothing here", async () => {
    expect((await kubectl(['get', 'ipclaims'], { config: viewerConfig })).stderr).toContain('No resources found in default namespace.');
    const denied = await kubectlFails(['create', 'namespace', 'ro'], { config: viewerConfig });
    expect(denied.stderr).toContain('Error from server (Forbidden)');
    const foreign = await kubectlFails(['get', 'ipclaims'], { config: otherConfig });
    expect(foreign.stderr).toMatch(/the server could not find the requested resource|doesn't have a resource type/);
    expect(foreign.stderr).not.toContain(slug + '"');
  });

  test('a kind the system makes, declared without create: retained allocations are listed, released by delete, never created', async () => {
    await kubectl(['apply', '-f', '-'], {
      input: `apiVersion: ipam.miloapis.com/v1alpha1
kind: Network
metadata: {name: keep}
spec: {cidrs: [{cidr: 10.70.0.0/16}]}
---
apiVersion: ipam.miloapis.com/v1alpha1
kind: IPClaim
metadata: {name: kept}
spec: {network: keep, prefixLength: 24, reclaimPolicy: Retain}
`,
    });
    await kubectl(['delete', 'ipclaim', 'kept']);
    const listed = await kubectl(['get', 'retainedallocations']);
    expect(listed.stdout).toMatch(/^NAME\s+NETWORK\s+CIDR\s+UNTIL\s+AGE\n/);
    expect(listed.stdout).toMatch(/\nkept\s+keep\s+10\.70\.0\.0\/24\s+\d{4}-/);
    const verbs = await kubectl(['api-resources', '-o', 'wide']);
    expect(verbs.stdout).toMatch(/retainedallocations\s+ra\s+ipam\.miloapis\.com\/v1alpha1\s+true\s+RetainedAllocation\s+delete,get,list,patch,update,watch\s/);
    const create = await kubectlFails(['create', '-f', '-'], {
      input:
        'apiVersion: ipam.miloapis.com/v1alpha1\nkind: RetainedAllocation\nmetadata: {name: made}\nspec: {network: keep, pool: keep-v4, cidr: 10.70.9.0/24}\n',
    });
    expect(create.stderr).toContain('(MethodNotAllowed)');
    expect((await kubectl(['delete', 'ra', 'kept'])).stdout).toBe('retainedallocation.ipam.miloapis.com "kept" deleted\n');
    expect((await kubectl(['get', 'ra', '-o', 'name'])).stdout).toBe('');
    await kubectl(['delete', 'network', 'keep']);
  });

  test('get -w --output-watch-events: every create and delete another client makes, as it happens', async () => {
    const yamlOf = (name: string) =>
      `apiVersion: ipam.miloapis.com/v1alpha1\nkind: Network\nmetadata:\n  name: ${name}\nspec:\n  cidrs:\n  - cidr: 10.91.0.0/16\n`;
    await kubectl(['apply', '-f', '-'], { input: yamlOf('watched') });
    const child = spawn('/usr/bin/kubectl', ['get', 'ipclaims', '-w', '--output-watch-events'], { env: { ...process.env, KUBECONFIG: config, HOME: dir } });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const until = async (re: RegExp) => {
      const deadline = Date.now() + 20_000;
      while (!re.test(out)) {
        if (Date.now() > deadline) throw new Error(`kubectl printed: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      // The claims made before kubectl's list are printed as ADDED too; after it, its watch brings them.
      await new Promise((r) => setTimeout(r, 1_500));
      for (const name of ['w-1', 'w-2']) {
        const created = await kube.request('POST', '/apis/ipam.miloapis.com/v1alpha1/namespaces/default/ipclaims', {
          body: { apiVersion: 'ipam.miloapis.com/v1alpha1', kind: 'IPClaim', metadata: { name }, spec: { network: 'watched', prefixLength: 28 } },
        });
        expect(created.status).toBe(201);
      }
      await until(/ADDED\s+w-2\s+watched\s+10\.91\./);
      expect(out).toMatch(/ADDED\s+w-1\s+watched\s+10\.91\./);
      await kube.request('DELETE', '/apis/ipam.miloapis.com/v1alpha1/namespaces/default/ipclaims/w-1');
      await until(/DELETED\s+w-1/);
      expect(out).not.toMatch(/error|Error/);
    } finally {
      child.kill();
    }
  });

  test('a network and a claim named like ones in default live in another namespace', async () => {
    await kubectl(['create', 'namespace', 'twins']);
    const net = (ns: string, cidr: string) => `apiVersion: ipam.miloapis.com/v1alpha1
kind: Network
metadata: {name: twin-net, namespace: ${ns}}
spec: {cidrs: [{cidr: ${cidr}}]}
---
apiVersion: ipam.miloapis.com/v1alpha1
kind: IPClaim
metadata: {name: twin, namespace: ${ns}}
spec: {network: twin-net, prefixLength: 24}
`;
    await kubectl(['apply', '-f', '-'], { input: net('default', '10.44.0.0/16') });
    const second = await kubectl(['apply', '-f', '-'], { input: net('twins', '10.45.0.0/16') });
    expect(second.stdout).toBe('network.ipam.miloapis.com/twin-net created\nipclaim.ipam.miloapis.com/twin created\n');
    const all = (await kubectl(['get', 'ipclaims', '-A', '--field-selector', 'metadata.name=twin', '--no-headers'])).stdout;
    expect(all).toMatch(/^default\s+twin\s+twin-net\s+10\.44\.0\.0\/24\s+Bound/m);
    expect(all).toMatch(/^twins\s+twin\s+twin-net\s+10\.45\.0\.0\/24\s+Bound/m);
    await kubectl(['-n', 'twins', 'delete', 'ipclaim/twin', 'network/twin-net']);
    expect((await kubectl(['get', 'ipclaim', 'twin', '-o', 'jsonpath={.status.allocatedCIDR}'])).stdout).toBe('10.44.0.0/24');
    await kubectl(['delete', 'ipclaim/twin', 'network/twin-net']);
    await kubectl(['delete', 'namespace', 'twins']);
  });

  test('quota and tenancy kinds: apply (then unchanged), label, annotate, get -o wide; the platform plane for operators', async () => {
    const operatorConfig = path.join(dir, 'operator.kubeconfig');
    writeFileSync(operatorConfig, kubeconfig({ project: slug, origin: kube.origin, caPem: kube.caPem, token: kube.tokens.operator }));
    const platformConfig = path.join(dir, 'platform.kubeconfig');
    writeFileSync(
      platformConfig,
      kubeconfig({ project: slug, origin: kube.origin, caPem: kube.caPem, token: kube.tokens.operator }).replace(kube.root, kube.platformRoot),
    );
    const resources = (await kubectl(['api-resources'], { config: platformConfig })).stdout;
    expect(resources).toMatch(/resourceregistrations\s+rr\s+quota\.miloapis\.com\/v1alpha1\s+false\s+ResourceRegistration/);
    expect(resources).toMatch(/projects\s+proj\s+resourcemanager\.miloapis\.com\/v1alpha1\s+false\s+Project/);
    const registration = `apiVersion: quota.miloapis.com/v1alpha1
kind: ResourceRegistration
metadata: {name: kubectl.example.com.gizmos}
spec: {resourceType: kubectl.example.com/gizmos, type: Allocation, baseUnit: gizmo, displayUnit: gizmos, claimingKinds: [Gizmo]}
`;
    expect((await kubectl(['apply', '-f', '-'], { config: platformConfig, input: registration })).stdout).toBe(
      'resourceregistration.quota.miloapis.com/kubectl.example.com.gizmos created\n',
    );
    expect((await kubectl(['get', 'projects', slug, '--no-headers'], { config: platformConfig })).stdout).toMatch(new RegExp(`^${slug}\\s+\\S+-org\\s+Active`));
    const denied = await kubectlFails(['get', 'resourceregistrations']);
    expect(denied.stderr).toMatch(/the server doesn't have a resource type|could not find the requested resource/);

    const grant = `apiVersion: quota.miloapis.com/v1alpha1
kind: ResourceGrant
metadata: {name: gizmos}
spec: {allowances: [{resourceType: kubectl.example.com/gizmos, amount: 7}]}
`;
    expect((await kubectl(['apply', '-f', '-'], { config: operatorConfig, input: grant })).stdout).toBe('resourcegrant.quota.miloapis.com/gizmos created\n');
    expect((await kubectl(['apply', '-f', '-'], { config: operatorConfig, input: grant })).stdout).toBe('resourcegrant.quota.miloapis.com/gizmos unchanged\n');
    await kubectl(['label', 'resourcegrant', 'gizmos', 'team=a'], { config: operatorConfig });
    await kubectl(['annotate', 'resourcegrant', 'gizmos', 'note=kubectl'], { config: operatorConfig });
    const wide = (await kubectl(['get', 'resourcegrants', 'gizmos', '-o', 'wide'])).stdout;
    expect(wide).toMatch(/^NAME\s+ALLOWANCES\s+ACTIVE\s+SOURCE\s+AGE/);
    expect(wide).toMatch(/gizmos\s+kubectl\.example\.com\/gizmos=7\s+True\s+Operator/);
    expect((await kubectl(['get', 'resourcegrant', 'gizmos', '-o', 'jsonpath={.metadata.labels.team}/{.metadata.annotations.note}'])).stdout).toBe('a/kubectl');
    const editorGrant = await kubectlFails(['delete', 'resourcegrant', 'gizmos']);
    expect(editorGrant.stderr).toContain('(Forbidden)');
    expect((await kubectl(['get', 'allowancebuckets', '--no-headers'])).stdout).toMatch(/kubectl\.example\.com\/gizmos\s+7\s+0\s+Ok/);

    const request = await kubectl(['create', '-f', '-', '-o', 'name'], {
      input:
        'apiVersion: quota.miloapis.com/v1alpha1\nkind: QuotaIncreaseRequest\nmetadata: {generateName: gizmos-}\nspec: {resourceType: kubectl.example.com/gizmos, amount: 3, reason: more}\n',
    });
    expect(request.stdout).toMatch(/^quotaincreaserequest\.quota\.miloapis\.com\/[0-9a-f-]{36}\n$/);
    expect((await kubectl(['get', 'qir', '--no-headers'])).stdout).toMatch(/kubectl\.example\.com\/gizmos\s+3\s+Pending/);
    // An operator approves it in the platform plane by writing its status; the grant raises the bucket.
    const requestName = request.stdout.trim().split('/')[1];
    const approved = await kubectl(
      ['patch', 'qir', requestName, '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Approved","decisionReason":"fine"}}'],
      { config: platformConfig },
    );
    expect(approved.stdout).toBe(`quotaincreaserequest.quota.miloapis.com/${requestName} patched\n`);
    expect((await kubectl(['get', 'qir', requestName, '--no-headers'])).stdout).toMatch(/kubectl\.example\.com\/gizmos\s+3\s+Approved/);
    expect((await kubectl(['get', 'allowancebuckets', '--no-headers'])).stdout).toMatch(/kubectl\.example\.com\/gizmos\s+10\s+0\s+Ok/);
    expect((await kubectl(['get', 'members', '-o', 'wide'])).stdout).toMatch(/^NAME\s+ROLE\s+DISPLAY NAME\s+AGE/);
    await kubectl(['delete', 'resourcegrant', 'gizmos'], { config: operatorConfig });
  });
});

describe('kubectl and machines (the simulator and a worker run the fleet)', () => {
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  let corner: Awaited<ReturnType<typeof makeFleetCorner>>;

  beforeAll(async () => {
    fleet = await startFleet();
    corner = await makeFleetCorner(testDb().db, 2);
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  test('apply of a network, a claim and a machine request; get -o wide; wait for Ready; delete waits for the cleanup', { timeout: 180_000 }, async () => {
    const manifest = `apiVersion: ipam.miloapis.com/v1alpha1
kind: Network
metadata: {name: rack}
spec: {cidrs: [{cidr: 10.90.0.0/16}]}
---
apiVersion: ipam.miloapis.com/v1alpha1
kind: IPClaim
metadata: {name: rack-vip}
spec: {network: rack, prefixLength: 32}
---
apiVersion: metal.datumapis.com/v1alpha1
kind: Machine
metadata:
  name: node-1
  labels: {role: worker}
spec:
  class: ${corner.spec.class}
  profile: ${corner.spec.profile}
  location: ${corner.spec.location}
  interfaces:
    - {network: rack, families: [IPv4]}
`;
    const file = path.join(dir, 'rack.yaml');
    writeFileSync(file, manifest);
    expect((await kubectl(['apply', '-f', file])).stdout).toBe(
      'network.ipam.miloapis.com/rack created\nipclaim.ipam.miloapis.com/rack-vip created\nmachine.metal.datumapis.com/node-1 created\n',
    );
    const resources = await kubectl(['api-resources', '--api-group', 'metal.datumapis.com', '-o', 'wide']);
    expect(resources.stdout).toMatch(/machines\s+mach\s+metal\.datumapis\.com\/v1alpha1\s+true\s+Machine\s+create,delete,get,list,patch,update,watch\s/);

    const explained = await kubectl(['explain', 'machine.spec']);
    expect(explained.stdout).toContain('GROUP:      metal.datumapis.com');
    expect(explained.stdout).toMatch(/location\s+<string> -required-/);
    expect(explained.stdout).toContain('The site it is placed in');
    const waited = await kubectl(['wait', '--for=jsonpath={.status.phase}=Ready', 'machine/node-1', '--timeout=120s']);
    expect(waited.stdout).toContain('machine.metal.datumapis.com/node-1 condition met');
    expect((await kubectl(['apply', '-f', file])).stdout).toContain('machine.metal.datumapis.com/node-1 unchanged');

    const table = await kubectl(['get', 'machines']);
    expect(table.stdout).toMatch(/^NAME\s+PHASE\s+SITE\s+REASON\s+AGE\n/);
    expect(table.stdout).toMatch(new RegExp(`\\nnode-1\\s+Ready\\s+${corner.spec.location}\\s`));
    const wide = await kubectl(['get', 'machines', '-o', 'wide', '-l', 'role=worker']);
    expect(wide.stdout).toMatch(/^NAME\s+PHASE\s+SITE\s+REASON\s+CLASS\s+PROFILE\s+DEVICE\s+ADDRESSES\s+AGE\n/);
    expect(wide.stdout).toMatch(new RegExp(`\\nnode-1\\s+Ready\\s+${corner.spec.location}\\s+.*${corner.devices[0]}\\s+10\\.90\\.\\d+\\.\\d+/32\\s`));
    expect((await kubectl(['get', 'machines', '--field-selector', `status.phase=Ready,spec.location=${corner.spec.location}`, '-o', 'name'])).stdout).toBe(
      'machine.metal.datumapis.com/node-1\n',
    );
    expect((await kubectl(['get', 'machines', '--field-selector', 'status.phase=Pending', '-o', 'name'])).stdout).toBe('');

    // The spec is immutable: a changed profile is refused with its path.
    const immutable = await kubectlFails(['apply', '-f', '-'], { input: manifest.replace(`profile: ${corner.spec.profile}`, 'profile: other-os') });
    expect(immutable.stderr).toContain('spec.profile: Invalid value: "other-os": field is immutable');

    // delete waits until the machine's cleanup has completed and the object is gone: with the
    // provider refusing every call, kubectl is still waiting once the release is recorded; it returns after.
    const machineId = (await getMachine(testDb().db, kube.project.id, 'node-1')).id;
    await fleet.pauseProvider();
    let settled = false;
    const deleting = kubectl(['delete', 'machine', 'node-1', '--timeout=150s']).finally(() => (settled = true));
    await waitFor('the release to be requested', async () => (await getMachine(testDb().db, kube.project.id, 'node-1')).deletionRequestedAt);
    const during = JSON.parse((await kubectl(['get', 'machine', 'node-1', '-o', 'json'])).stdout);
    expect(during.metadata.finalizers).toEqual(['metal.datumapis.com/cleanup']);
    expect(settled).toBe(false);
    await fleet.resumeProvider();
    expect((await deleting).stdout).toBe('machine.metal.datumapis.com "node-1" deleted\n');
    const released = await getMachine(testDb().db, kube.project.id, 'node-1');
    expect({ id: released.id, phase: released.phase }).toEqual({ id: machineId, phase: 'Released' });
    expect((await kubectlFails(['get', 'machine', 'node-1'])).stderr).toContain('machines.metal.datumapis.com "node-1" not found');
    await kubectl(['delete', 'ipclaim/rack-vip', 'network/rack']);
  });

  test('a machine being released shows deletionTimestamp and the cleanup finalizer until it is gone', { timeout: 180_000 }, async () => {
    await kubectl(['apply', '-f', '-'], {
      input: `apiVersion: metal.datumapis.com/v1alpha1
kind: Machine
metadata: {name: node-2}
spec: {class: ${corner.spec.class}, profile: ${corner.spec.profile}, location: ${corner.spec.location}}
`,
    });
    await kubectl(['wait', '--for=jsonpath={.status.phase}=Ready', 'machine/node-2', '--timeout=120s']);
    await fleet.pauseProvider();
    expect((await kubectl(['delete', 'machine', 'node-2', '--wait=false'])).stdout).toBe('machine.metal.datumapis.com "node-2" deleted\n');
    const deleting = JSON.parse((await kubectl(['get', 'machine', 'node-2', '-o', 'json'])).stdout);
    expect(deleting.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(deleting.metadata.finalizers).toEqual(['metal.datumapis.com/cleanup']);
    expect(['Ready', 'Releasing']).toContain(deleting.status.phase);
    // Deleting again changes nothing; the system's finalizer cannot be removed by a client.
    expect((await kubectl(['delete', 'machine', 'node-2', '--wait=false'])).stdout).toBe('machine.metal.datumapis.com "node-2" deleted\n');
    await kubectl(['patch', 'machine', 'node-2', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    const again = JSON.parse((await kubectl(['get', 'machine', 'node-2', '-o', 'json'])).stdout);
    expect(again.metadata.deletionTimestamp).toBe(deleting.metadata.deletionTimestamp);
    expect(again.metadata.finalizers).toEqual(['metal.datumapis.com/cleanup']);
    await fleet.resumeProvider();
    const gone = await kubectl(['wait', '--for=delete', 'machine/node-2', '--timeout=150s']);
    // kubectl says "condition met" when it watched the object go, and nothing when it was gone already.
    expect(['', 'machine.metal.datumapis.com/node-2 condition met\n']).toContain(gone.stdout);
    expect((await kubectlFails(['get', 'machine', 'node-2'])).stderr).toContain('NotFound');
    expect((await getMachine(testDb().db, kube.project.id, 'node-2')).phase).toBe('Released');
  });
});
