/**
 * Checks of rendered Kubernetes objects, used by deploy/kubernetes/manifests.test.ts:
 *
 * - schema: each object against its kind's OpenAPI schema — the built-in kinds with the validators
 *   `kubernetes-models` generates from Kubernetes' OpenAPI document (types, formats, required
 *   fields) plus an unknown-field check against the field lists `@kubernetes/client-node` generates
 *   from the same document (what `kubectl apply --validate=strict` refuses); the Prometheus
 *   Operator's and cert-manager's kinds with their CRD schemas (`@kubernetes-models/*`);
 *   CloudNativePG's Cluster with the JSON schema vendored in schemas/ (ajv, strict).
 * - policy: no privileged or privilege-escalating container, non-root with a read-only root and
 *   every capability dropped, seccomp RuntimeDefault, an image with a tag that is not `latest`,
 *   CPU and memory limits, and readiness and liveness probes on every long-running container.
 *
 * Each function returns the problems found (empty when none), each naming the object and the path.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import Ajv from 'ajv';
import { z } from 'zod';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered YAML, read by the checks below
  spec?: any;
  [key: string]: unknown;
}

const nameOf = (o: K8sObject) => `${o.kind}/${o.metadata?.name}`;

/** kubernetes-models' module and class for a built-in kind, e.g. apps/v1 Deployment. */
function builtinModel(apiVersion: string, kind: string): { new (data: unknown): { validate(): void } } | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const modulePath = group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/v1`;
  try {
    return (require(modulePath) as Record<string, { new (data: unknown): { validate(): void } }>)[kind];
  } catch {
    return undefined;
  }
}

const CRD_MODELS: Record<string, string> = {
  'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
  'cert-manager.io/v1': '@kubernetes-models/cert-manager/cert-manager.io/v1',
};

/** client-node's generated model name for a kind: V1Deployment, V2HorizontalPodAutoscaler, … */
function clientNodeType(apiVersion: string, kind: string): string {
  const version = apiVersion.split('/').pop()!;
  return `${version[0].toUpperCase()}${version.slice(1)}${kind}`;
}

type AttributeMap = { name: string; baseName: string; type: string }[];
const models: Record<string, unknown> = { ...k8s };

/** The attribute map of client-node's model class named `type`, when it has one. */
function attributesOf(type: string): AttributeMap | undefined {
  const model = models[type];
  if (typeof model !== 'function' || !('getAttributeTypeMap' in model) || typeof model.getAttributeTypeMap !== 'function') return undefined;
  return z.array(z.object({ name: z.string(), baseName: z.string(), type: z.string() })).parse(model.getAttributeTypeMap());
}
const PRIMITIVES = new Set(['string', 'number', 'boolean', 'Date', 'object', 'any', 'IntOrString']);

/** Fields the schema of `type` does not have, anywhere below `value`. */
function unknownFields(value: unknown, type: string, at: string, out: string[]): void {
  if (value === null || value === undefined || PRIMITIVES.has(type)) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((v, i) => unknownFields(v, array[1], `${at}[${i}]`, out));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value === 'object') for (const [k, v] of Object.entries(value)) unknownFields(v, map[1], `${at}.${k}`, out);
    return;
  }
  const attributes = attributesOf(type);
  if (!attributes) {
    out.push(`${at}: no schema for type ${type}`);
    return;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return; // the type check reports it
  for (const [key, v] of Object.entries(value)) {
    const attribute = attributes.find((a) => a.baseName === key);
    if (!attribute) out.push(`${at}.${key}: unknown field (not in ${type})`);
    else unknownFields(v, attribute.type, `${at}.${key}`, out);
  }
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const VENDORED: Record<string, ReturnType<typeof ajv.compile>> = {
  'postgresql.cnpg.io/v1/Cluster': ajv.compile(JSON.parse(readFileSync(path.join(here, 'schemas', 'cloudnativepg-cluster.schema.json'), 'utf8'))),
};

export function schemaProblems(o: K8sObject): string[] {
  const problems: string[] = [];
  const id = nameOf(o);
  const vendored = VENDORED[`${o.apiVersion}/${o.kind}`];
  if (vendored) {
    if (!vendored(o))
      for (const e of vendored.errors ?? []) problems.push(`${id}${e.instancePath}: ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
    return problems;
  }
  const crd = CRD_MODELS[o.apiVersion];
  const Model = crd ? (require(crd) as Record<string, { new (data: unknown): { validate(): void } }>)[o.kind] : builtinModel(o.apiVersion, o.kind);
  if (!Model) return [`${id}: no schema for ${o.apiVersion} ${o.kind}`];
  try {
    new Model(o).validate();
  } catch (e) {
    problems.push(`${id}: ${(e as Error).message}`);
  }
  if (!crd) unknownFields(o, clientNodeType(o.apiVersion, o.kind), id, problems);
  return problems;
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job']);

/** The policy every Meridian workload meets (see the file's comment). */
export function policyProblems(o: K8sObject): string[] {
  if (!WORKLOADS.has(o.kind)) return [];
  const id = nameOf(o);
  const problems: string[] = [];
  const pod = o.spec?.template?.spec ?? {};
  const podSecurity = pod.securityContext ?? {};
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problems.push(`${id}: shares the host's namespaces`);
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    const at = `${id} container ${c.name}`;
    const sc = c.securityContext ?? {};
    if (sc.privileged) problems.push(`${at}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) problems.push(`${at}: allowPrivilegeEscalation is not false`);
    if (!(sc.runAsNonRoot ?? podSecurity.runAsNonRoot)) problems.push(`${at}: runAsNonRoot is not set`);
    if ((sc.runAsUser ?? podSecurity.runAsUser) === 0) problems.push(`${at}: runs as root`);
    if (sc.readOnlyRootFilesystem !== true) problems.push(`${at}: root file system not read-only`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) problems.push(`${at}: capabilities not all dropped`);
    if ((sc.capabilities?.add ?? []).length > 0) problems.push(`${at}: adds capabilities ${sc.capabilities.add.join(', ')}`);
    if ((sc.seccompProfile ?? podSecurity.seccompProfile)?.type !== 'RuntimeDefault') problems.push(`${at}: seccomp profile is not RuntimeDefault`);
    const image: string = c.image ?? '';
    const tag = /^(?:.*\/)?[^/:@]+(?::([^@/]+))?(?:@sha256:[0-9a-f]{64})?$/.exec(image);
    if (!tag || (!tag[1] && !image.includes('@sha256:'))) problems.push(`${at}: image ${image} has no tag`);
    else if (tag[1] === 'latest') problems.push(`${at}: image ${image} uses the latest tag`);
    for (const r of ['cpu', 'memory']) if (!c.resources?.limits?.[r]) problems.push(`${at}: no ${r} limit`);
    if (o.kind !== 'Job') for (const p of ['readinessProbe', 'livenessProbe']) if (!c[p]) problems.push(`${at}: no ${p}`);
  }
  return problems;
}
