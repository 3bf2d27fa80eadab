/**
 * deploy/kubernetes rendered by `kubectl kustomize` (skipped, with the reason, where kubectl is not
 * installed): every overlay of meridian/ and the aggregated/ kustomization render; every rendered
 * object validates against its kind's schema and the meridian workloads meet the policy
 * (validate.ts); and what the manifests say agrees with the code — the APIServices name exactly
 * the group-versions Meridian serves, the probes the paths it answers, the CloudNativePG overlay
 * points DATABASE_URL at the -rw Service's Secret.
 */
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { kubeKinds } from '@/server/api/kinds';
import { groupsOf } from '@/server/kube/discovery';
import { policyProblems, schemaProblems, type K8sObject } from './validate';

const dir = path.resolve(__dirname);

function kubectlMissing(): string | undefined {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'kubectl is not installed (Debian: apt-get install kubernetes-client)';
  }
}
const skip = kubectlMissing();
if (skip) process.stderr.write(`[deploy/kubernetes manifests] skipped: ${skip}\n`);

const render = async (kustomization: string) => {
  const { stdout } = await promisify(execFile)('kubectl', ['kustomize', path.join(dir, kustomization)], { maxBuffer: 16 << 20 });
  return (yaml.loadAll(stdout) as K8sObject[]).filter(Boolean);
};

const OVERLAYS = ['cloudnativepg', 'external-database', 'test-environment', 'aggregated-api'];
const find = (objects: K8sObject[], kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  expect(o, `${kind}/${name}`).toBeDefined();
  return o!;
};
const container = (o: K8sObject) => o.spec.template.spec.containers[0];

// Loading the schema modules takes a while on a busy machine.
describe('the validator', { timeout: 180_000 }, () => {
  const deployment = (): K8sObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'probe' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: {
        metadata: { labels: { a: 'b' } },
        spec: {
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'c',
              image: 'registry.example.com/x:1.0',
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              resources: { limits: { cpu: '1', memory: '1Gi' } },
              readinessProbe: { httpGet: { path: '/readyz', port: 3000 } },
              livenessProbe: { httpGet: { path: '/healthz', port: 3000 } },
            },
          ],
        },
      },
    },
  });

  it('passes a compliant Deployment and names each fault of a faulty one', () => {
    expect(schemaProblems(deployment())).toEqual([]);
    expect(policyProblems(deployment())).toEqual([]);

    const typo = deployment();
    typo.spec.template.spec.containers[0].readinesProbe = typo.spec.template.spec.containers[0].readinessProbe;
    delete typo.spec.template.spec.containers[0].readinessProbe;
    expect(schemaProblems(typo).join('\n')).toMatch(/containers\[0\]\.readinesProbe: unknown field/);
    expect(policyProblems(typo).join('\n')).toMatch(/no readinessProbe/);

    const wrongType = deployment();
    wrongType.spec.replicas = 'two';
    expect(schemaProblems(wrongType).join('\n')).toMatch(/replicas must be integer/);
    const missing = deployment();
    delete missing.spec.selector;
    expect(schemaProblems(missing).join('\n')).toMatch(/selector/);

    const bad = deployment();
    const c = bad.spec.template.spec.containers[0];
    c.securityContext = { privileged: true, capabilities: { add: ['NET_ADMIN'] } };
    c.image = 'registry.example.com/x:latest';
    delete c.resources.limits.memory;
    const problems = policyProblems(bad).join('\n');
    for (const p of [
      /privileged/,
      /allowPrivilegeEscalation/,
      /not read-only/,
      /not all dropped/,
      /adds capabilities NET_ADMIN/,
      /latest tag/,
      /no memory limit/,
    ])
      expect(problems).toMatch(p);
    c.image = 'registry.example.com/x';
    expect(policyProblems(bad).join('\n')).toMatch(/has no tag/);
  });

  it('checks CloudNativePG clusters against the vendored schema', () => {
    const cluster: K8sObject = {
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Cluster',
      metadata: { name: 'db' },
      spec: { instances: 3, storage: { size: '1Gi' } },
    };
    expect(schemaProblems(cluster)).toEqual([]);
    expect(schemaProblems({ ...cluster, spec: { instances: 3, storage: { sise: '1Gi' } } }).join('\n')).toMatch(/additional properties/);
    expect(schemaProblems({ ...cluster, spec: { instances: '3' } }).join('\n')).toMatch(/instances: must be integer/);
  });

  it('refuses a kind it has no schema for', () => {
    expect(schemaProblems({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual([
      'Widget/w: no schema for example.com/v1 Widget',
    ]);
  });
});

describe.skipIf(skip !== undefined)(`deploy/kubernetes rendered by kubectl kustomize${skip ? ` (skipped: ${skip})` : ''}`, { timeout: 180_000 }, () => {
  it.each([...OVERLAYS.map((o) => `meridian/overlays/${o}`), 'aggregated', 'cni'])(
    '%s renders, every object valid against its schema',
    async (kustomization) => {
      const objects = await render(kustomization);
      expect(objects.length).toBeGreaterThan(0);
      expect(objects.flatMap(schemaProblems)).toEqual([]);
      // Every namespaced object says where it goes (a component's objects included).
      const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'APIService']);
      expect(objects.filter((o) => !clusterScoped.has(o.kind) && !o.metadata.namespace).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
      // The CNI installer writes into the host's directories as root by design (deploy/kubernetes/cni).
      if (kustomization !== 'cni') expect(objects.flatMap(policyProblems)).toEqual([]);
    },
  );

  it('web: ≥ 2 replicas, probes on /readyz and /healthz, a PodDisruptionBudget and an autoscaler; migrations as a Job; secrets by reference', async () => {
    const objects = await render('meridian/overlays/external-database');
    const web = find(objects, 'Deployment', 'meridian-web');
    expect(web.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(container(web).readinessProbe.httpGet.path).toBe('/readyz');
    expect(container(web).livenessProbe.httpGet.path).toBe('/healthz');
    expect(find(objects, 'PodDisruptionBudget', 'meridian-web').spec.selector.matchLabels).toEqual(web.spec.selector.matchLabels);
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'meridian-web');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'meridian-web' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(container(find(objects, 'Job', 'meridian-migrate')).args).toEqual(['migrate']);
    expect(container(find(objects, 'Deployment', 'meridian-worker')).args).toEqual(['worker']);
    expect(container(web).args).toEqual(['web']);
    for (const o of objects.filter((x) => x.kind === 'Deployment' || x.kind === 'Job')) {
      for (const e of container(o).env ?? []) expect(e.value, `${o.metadata.name} ${e.name} is not written in the manifest`).toBeUndefined();
      expect(container(o).env.find((e: { name: string }) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef).toEqual({
        name: 'meridian-database',
        key: 'url',
      });
    }
    expect(objects.some((o) => o.kind === 'Secret')).toBe(false);
    expect(find(objects, 'ServiceMonitor', 'meridian-web').spec.endpoints[0].path).toBe('/metrics');
    const image = container(web).image as string;
    expect(image).toMatch(/^registry\.example\.com\/meridian\/meridian:\d+\.\d+\.\d+$/);
  });

  it('CloudNativePG: three instances, synchronous replication, DATABASE_URL from the operator Secret of the -rw Service, the database reachable only from Meridian', async () => {
    const objects = await render('meridian/overlays/cloudnativepg');
    const cluster = find(objects, 'Cluster', 'meridian-db');
    expect(cluster.spec.instances).toBe(3);
    expect(cluster.spec.postgresql.synchronous).toMatchObject({ number: 1, dataDurability: 'required' });
    for (const name of ['meridian-web', 'meridian-worker']) {
      expect(container(find(objects, 'Deployment', name)).env.find((e: { name: string }) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef).toEqual({
        name: `${cluster.metadata.name}-app`,
        key: 'uri',
      });
    }
    const policy = find(objects, 'NetworkPolicy', 'meridian-db');
    expect(policy.spec.podSelector.matchLabels).toEqual({ 'cnpg.io/cluster': 'meridian-db' });
    const clients = policy.spec.ingress[0].from[0].podSelector.matchLabels;
    const labelled = objects.filter(
      (o) => o.spec?.template?.metadata?.labels && Object.entries(clients).every(([k, v]) => o.spec.template.metadata.labels[k] === v),
    );
    expect(labelled.map((o) => o.metadata.name).sort()).toEqual(['meridian-migrate', 'meridian-web', 'meridian-worker']);
  });

  it('test environment: the simulator as a StatefulSet with its volume, reachable from web and worker only, over mutual TLS with cert-manager identities', async () => {
    const objects = await render('meridian/overlays/test-environment');
    const sim = find(objects, 'StatefulSet', 'meridian-simulator');
    expect(sim.spec.volumeClaimTemplates[0].metadata.name).toBe(container(sim).volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/data').name);
    const policy = find(objects, 'NetworkPolicy', 'meridian-simulator');
    expect(policy.spec.ingress[0].from.map((f: any) => f.podSelector.matchLabels['app.kubernetes.io/name']).sort()).toEqual([
      'meridian-web',
      'meridian-worker',
    ]);
    expect(container(find(objects, 'Deployment', 'meridian-worker')).env.find((e: { name: string }) => e.name === 'SIMULATOR_URL').value).toBe(
      'https://meridian-simulator:4100',
    );
    // No bearer token on the runtime API: web and worker present SPIFFE workload certificates, the simulator its serving one.
    const envOf = (o: K8sObject) => new Map<string, any>(container(o).env.map((e: { name: string }) => [e.name, e]));
    for (const o of objects.filter((x) => x.spec?.template?.spec?.containers)) expect(envOf(o).has('SIMULATOR_TOKEN'), o.metadata.name).toBe(false);
    /** The Secret mounted at the directory of `file`, and the Certificate that cert-manager renews into it. */
    const certificateBehind = (o: K8sObject, file: string) => {
      const mount = container(o).volumeMounts.find((m: { mountPath: string }) => file.startsWith(`${m.mountPath}/`));
      expect(mount, `${o.metadata.name} mounts ${file}`).toBeDefined();
      const volume = o.spec.template.spec.volumes.find((v: { name: string }) => v.name === mount.name);
      const certificate = objects.find((x) => x.kind === 'Certificate' && x.spec.secretName === volume.secret.secretName);
      expect(certificate, `a Certificate for Secret ${volume.secret.secretName}`).toBeDefined();
      return certificate!;
    };
    for (const role of ['web', 'worker']) {
      const deployment = find(objects, 'Deployment', `meridian-${role}`);
      const env = envOf(deployment);
      for (const name of ['PROVIDER_TLS_CERT_FILE', 'PROVIDER_TLS_KEY_FILE', 'PROVIDER_TLS_CA_FILE'])
        expect(env.get(name)?.value, `${role} ${name}`).toMatch(/^\//);
      const certificate = certificateBehind(deployment, env.get('PROVIDER_TLS_CERT_FILE').value);
      expect(certificate.spec.uris).toEqual([`spiffe://meridian.local/meridian/local/${role}`]);
      expect(certificate.spec.usages).toEqual(['client auth']);
    }
    const simEnv = envOf(sim);
    for (const name of ['SIMULATOR_TLS_CERT_FILE', 'SIMULATOR_TLS_KEY_FILE', 'SIMULATOR_CLIENT_CA_FILE']) expect(simEnv.get(name)?.value, name).toMatch(/^\//);
    expect(certificateBehind(sim, simEnv.get('SIMULATOR_TLS_CERT_FILE').value).spec.dnsNames).toContain('meridian-simulator');
    expect(container(sim).readinessProbe.httpGet.scheme).toBe('HTTPS');
    expect(envOf(find(objects, 'Deployment', 'meridian-web')).get('SIMULATOR_ADMIN_URL').value).toBe('https://meridian-simulator:4101');
  });

  it('aggregated: one APIService per group-version Meridian serves, to the HTTPS listener, with its CA injected; the RBAC an extension API server needs', async () => {
    const objects = await render('aggregated');
    const served = groupsOf(kubeKinds).flatMap((g) => g.versions.map((v) => `${v.version}.${g.name}`));
    const apiServices = objects.filter((o) => o.kind === 'APIService');
    expect(apiServices.map((o) => o.metadata.name).sort()).toEqual(served.sort());
    const service = find(objects, 'Service', 'meridian-aggregated-api');
    for (const a of apiServices) {
      expect(a.spec.service).toEqual({ name: service.metadata.name, namespace: service.metadata.namespace, port: 443 });
      expect(a.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(`${service.metadata.namespace}/meridian-aggregated-api`);
    }
    expect(service.spec.ports[0].targetPort).toBe(3443);
    const cert = find(objects, 'Certificate', 'meridian-aggregated-api');
    expect(cert.spec.dnsNames).toContain(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    const delegator = find(objects, 'ClusterRoleBinding', 'meridian:system:auth-delegator');
    expect((delegator as any).roleRef.name).toBe('system:auth-delegator');
    const reader = find(objects, 'RoleBinding', 'meridian:extension-apiserver-authentication-reader');
    expect(reader.metadata.namespace).toBe('kube-system');
    expect((reader as any).roleRef).toMatchObject({ kind: 'Role', name: 'extension-apiserver-authentication-reader' });

    // The web pods of the aggregated-api overlay serve with the certificate cert-manager writes.
    const web = find(await render('meridian/overlays/aggregated-api'), 'Deployment', 'meridian-web');
    const env = Object.fromEntries(container(web).env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    const tls = web.spec.template.spec.volumes.find((v: any) => v.secret?.secretName === cert.spec.secretName);
    expect(tls).toBeDefined();
    const mount = container(web).volumeMounts.find((m: { name: string }) => m.name === tls.name).mountPath;
    expect(env.TLS_CERT_FILE).toBe(`${mount}/tls.crt`);
    expect(env.TLS_PRIVATE_KEY_FILE).toBe(`${mount}/tls.key`);
    expect(web.spec.template.spec.automountServiceAccountToken).toBe(true);
  });
});
