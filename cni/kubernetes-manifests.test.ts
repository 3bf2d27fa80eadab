/**
 * deploy/kubernetes/cni rendered by `kubectl kustomize` (skipped, with the reason, where kubectl is
 * not installed): the DaemonSet runs the installer on every node with the host's CNI directories
 * and the token Secret mounted where its arguments point, and those arguments — the ConfigMap's
 * values put in — are ones the installer accepts. The meridian-ipam image (bin/build-images.ts) is
 * built from what build:cni writes.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { CNI_TARGETS } from '../bin/build-cni';
import { IPAM_IMAGE } from '../bin/build-images';
import { parseInstallArgs } from './install';

const dir = path.resolve(__dirname, '..', 'deploy', 'kubernetes', 'cni');

function kubectlMissing(): string | undefined {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'kubectl is not installed (Debian: apt-get install kubernetes-client)';
  }
}
const skip = kubectlMissing();
if (skip) process.stderr.write(`[kubernetes-manifests.test] skipped: ${skip}\n`);

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: any;
}

describe.skipIf(skip !== undefined)(`deploy/kubernetes/cni rendered by kubectl kustomize${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const render = async () => {
    const { stdout } = await promisify(execFile)('kubectl', ['kustomize', dir]);
    return yaml.loadAll(stdout) as K8sObject[];
  };

  it('a DaemonSet on every node, on the host network, with the host CNI directories and the token Secret mounted where the installer writes and reads', async () => {
    const objects = await render();
    expect(objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'DaemonSet']);
    const ds = objects.find((o) => o.kind === 'DaemonSet')!;
    const config = objects.find((o) => o.kind === 'ConfigMap')!;
    for (const o of objects) expect(o.metadata.namespace).toBe('kube-system');
    const pod = ds.spec.template.spec;
    expect(ds.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'meridian-ipam' });
    expect(ds.spec.template.metadata.labels).toMatchObject(ds.spec.selector.matchLabels);
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.affinity).toBeUndefined();
    expect(pod.hostNetwork).toBe(true);
    expect(pod.priorityClassName).toBe('system-node-critical');
    expect(pod.automountServiceAccountToken).toBe(false);

    const [container] = pod.containers;
    expect(pod.containers).toHaveLength(1);
    expect(container.image).toBe('registry.example.com/meridian/meridian-ipam:0.1.0');
    const volume = (name: string) => pod.volumes.find((v: { name: string }) => v.name === name);
    const mountOf = (name: string) => container.volumeMounts.find((m: { name: string }) => m.name === name);
    const args: string[] = container.args;
    const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    const root = arg('root')!;
    for (const [flag, hostPath] of [
      ['cni-bin-dir', '/opt/cni/bin'],
      ['cni-conf-dir', '/etc/cni/net.d'],
    ] as const) {
      expect(arg(flag)).toBe(hostPath);
      const v = pod.volumes.find((x: { hostPath?: { path: string } }) => x.hostPath?.path === hostPath);
      expect(v, `a hostPath volume for ${hostPath}`).toBeDefined();
      expect(mountOf(v.name).mountPath).toBe(path.join(root, hostPath));
      expect(mountOf(v.name).readOnly).toBeFalsy();
    }
    const token = volume('token');
    expect(token.secret.secretName).toBe('meridian-cni-token');
    expect(token.secret.defaultMode).toBe(0o400);
    expect(mountOf('token').readOnly).toBe(true);
    expect(path.dirname(arg('token-file')!)).toBe(mountOf('token').mountPath);
    expect(arg('watch')).toBeDefined();

    // The installer's own parser accepts the arguments once the kubelet has put the variables in.
    expect(container.envFrom).toEqual([{ configMapRef: { name: config.metadata.name } }]);
    expect(container.env).toContainEqual({ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } });
    const vars: Record<string, string> = { ...config.data, NODE_NAME: 'node-1' };
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'meridian-manifests-'));
    try {
      const tokenFile = path.join(tmp, 'token');
      await writeFile(tokenFile, 'mrd_tok_MANIFEST_000000\n');
      const expanded = args.map((a) =>
        a.replace(/\$\(([A-Z_]+)\)/g, (_, name: string) => {
          expect(vars, `$(${name}) is defined`).toHaveProperty(name);
          return vars[name];
        }),
      );
      const options = parseInstallArgs(
        expanded.map((a) => (a.startsWith('--token-file=') ? `--token-file=${tokenFile}` : a)),
        {},
      );
      expect(options).toMatchObject({
        root: '/host',
        cniBinDir: '/opt/cni/bin',
        cniConfDir: '/etc/cni/net.d',
        serverUrl: config.data!.MERIDIAN_SERVER_URL,
        cluster: config.data!.MERIDIAN_CLUSTER,
        nodeName: 'node-1',
        watchSeconds: 60,
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it('the meridian-ipam image is built from the executable build:cni writes, run as the installer', () => {
    expect([...CNI_TARGETS]).toContain(IPAM_IMAGE.cniTarget);
    expect(IPAM_IMAGE.entrypoint).toEqual([IPAM_IMAGE.binary, 'install']);
  });
});
