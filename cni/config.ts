/**
 * The network configuration on stdin and the CNI_* environment, validated by hand (the config is
 * small, and a schema library would cost the short-lived plugin process start-up time).
 *
 * Every problem names its field: config problems are code 7 (invalid network config), undecodable
 * stdin is 6, an unsupported `cniVersion` is 1, bad CNI_* variables are 4, as the spec defines.
 */
import { isIP } from './ip';
import { CniError, ERR_DECODE, ERR_INCOMPATIBLE_VERSION, configError, envError } from './errors';
import { SUPPORTED_VERSIONS, isSupportedVersion } from './version';

export const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 300_000;

export interface Route {
  dst: string;
  gw?: string;
  mtu?: number;
  advmss?: number;
  priority?: number;
  table?: number;
  scope?: number;
}

export interface Dns {
  nameservers?: string[];
  domain?: string;
  search?: string[];
  options?: string[];
}

export interface IpamConfig {
  type: string;
  serverUrl: URL;
  tokenFile: string;
  /** The Meridian network the cluster is attached to (informational: the server knows the attachment). */
  network?: string;
  cluster: string;
  /** The project's slug; optional, as the cluster token names its project (the path then says "-"). */
  project?: string;
  timeoutMs: number;
  routes?: Route[];
  dns?: Dns;
  /** Node name as configured (the effective node also considers MERIDIAN_NODE_NAME and the host name). */
  node?: string;
  /** Optional PEM bundle to trust for an https serverUrl (in addition to the system's roots). */
  caFile?: string;
}

export interface NetConf {
  cniVersion: string;
  /** The CNI network name (part of the lease key). */
  name: string;
  type: string;
  ipam: IpamConfig;
  /** The result of the previous ADD (CHECK; DEL from 0.4.0), passed through as received. */
  prevResult?: Record<string, unknown>;
  /** GC (1.1.0): `cni.dev/valid-attachments`, or the earlier spelling `cni.dev/attachments`. */
  validAttachments?: { containerID: string; ifname: string }[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Spec 1.0.0: a network name / container id starts alphanumeric, then alphanumerics, `_`, `.`, `-`. */
export const NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/**
 * The lease API's limit on the names the plugin sends (network, node, pod namespace and name;
 * server/cni/schemas.ts). Checked here so that an over-long value is refused with the field named,
 * before a request the server would refuse as a whole (too large: 413) is even sent.
 */
export const MAX_NAME_LENGTH = 253;

function isCidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const family = isIP(s.slice(0, slash));
  const len = s.slice(slash + 1);
  if (!family || !/^\d{1,3}$/.test(len)) return false;
  return Number(len) <= (family === 4 ? 32 : 128);
}

/** The `cniVersion` given on stdin, supported or not, when it looks like a version (VERSION echoes it). */
export function givenVersion(stdin: string): string | undefined {
  try {
    const v = (JSON.parse(stdin) as Json).cniVersion;
    return typeof v === 'string' && /^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Just the `cniVersion`, for labelling an error result when the rest of the config is bad. */
export function peekVersion(stdin: string): string | undefined {
  try {
    const v = (JSON.parse(stdin) as Json).cniVersion;
    return typeof v === 'string' && isSupportedVersion(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function str(obj: Json, key: string, path: string, required: true): string;
function str(obj: Json, key: string, path: string, required: false): string | undefined;
function str(obj: Json, key: string, path: string, required: boolean): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) {
    if (required) throw configError(path, 'is required');
    return undefined;
  }
  if (typeof v !== 'string') throw configError(path, 'must be a string');
  if (required && v.trim() === '') throw configError(path, 'must not be empty');
  return v;
}

function strList(obj: Json, key: string, path: string): string[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw configError(path, 'must be a list of strings');
  return v as string[];
}

function parseRoutes(v: unknown): Route[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw configError('ipam.routes', 'must be a list of {dst, gw?}');
  return v.map((r, i) => {
    const path = `ipam.routes[${i}]`;
    if (!isObject(r)) throw configError(path, 'must be an object {dst, gw?}');
    const dst = str(r, 'dst', `${path}.dst`, true);
    if (!isCidr(dst)) throw configError(`${path}.dst`, `must be a CIDR (got "${dst}")`);
    const route: Route = { dst };
    const gw = str(r, 'gw', `${path}.gw`, false);
    if (gw !== undefined) {
      if (!isIP(gw)) throw configError(`${path}.gw`, `must be an IP address (got "${gw}")`);
      route.gw = gw;
    }
    for (const k of ['mtu', 'advmss', 'priority', 'table', 'scope'] as const) {
      const n = r[k];
      if (n === undefined || n === null) continue;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw configError(`${path}.${k}`, 'must be a non-negative integer');
      route[k] = n;
    }
    return route;
  });
}

function parseDns(v: unknown): Dns | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw configError('ipam.dns', 'must be an object {nameservers?, domain?, search?, options?}');
  const dns: Dns = {};
  const nameservers = strList(v, 'nameservers', 'ipam.dns.nameservers');
  if (nameservers) {
    const bad = nameservers.find((n) => !isIP(n));
    if (bad !== undefined) throw configError('ipam.dns.nameservers', `must be IP addresses (got "${bad}")`);
    dns.nameservers = nameservers;
  }
  const domain = str(v, 'domain', 'ipam.dns.domain', false);
  if (domain !== undefined) dns.domain = domain;
  const search = strList(v, 'search', 'ipam.dns.search');
  if (search) dns.search = search;
  const options = strList(v, 'options', 'ipam.dns.options');
  if (options) dns.options = options;
  return dns;
}

function parseIpam(v: unknown): IpamConfig {
  if (v === undefined || v === null) throw configError('ipam', 'is required');
  if (!isObject(v)) throw configError('ipam', 'must be an object');
  const type = str(v, 'type', 'ipam.type', true);
  const rawUrl = str(v, 'serverUrl', 'ipam.serverUrl', true);
  let serverUrl: URL;
  try {
    serverUrl = new URL(rawUrl);
  } catch {
    throw configError('ipam.serverUrl', `must be an absolute http(s) URL (got "${rawUrl}")`);
  }
  if (serverUrl.protocol !== 'http:' && serverUrl.protocol !== 'https:') {
    throw configError('ipam.serverUrl', `must use http or https (got "${serverUrl.protocol}")`);
  }
  if (serverUrl.username || serverUrl.password) throw configError('ipam.serverUrl', 'must not carry credentials (use tokenFile)');
  if (serverUrl.search || serverUrl.hash) throw configError('ipam.serverUrl', 'must not have a query or fragment');
  const tokenFile = str(v, 'tokenFile', 'ipam.tokenFile', true);
  const network = str(v, 'network', 'ipam.network', false);
  const cluster = str(v, 'cluster', 'ipam.cluster', true);
  if (!NAME_RE.test(cluster)) throw configError('ipam.cluster', `must be a cluster name (got "${cluster}")`);
  const project = str(v, 'project', 'ipam.project', false);
  if (project !== undefined && !NAME_RE.test(project)) throw configError('ipam.project', `must be a project slug (got "${project}")`);
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (v.timeoutMs !== undefined && v.timeoutMs !== null) {
    const t = v.timeoutMs;
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > MAX_TIMEOUT_MS) {
      throw configError('ipam.timeoutMs', `must be an integer between 1 and ${MAX_TIMEOUT_MS}`);
    }
    timeoutMs = t;
  }
  const node = str(v, 'node', 'ipam.node', false);
  if (node !== undefined && node.length > MAX_NAME_LENGTH) throw configError('ipam.node', `must be at most ${MAX_NAME_LENGTH} characters`);
  if (node !== undefined && !NAME_RE.test(node)) throw configError('ipam.node', `must be a node name (got "${node}")`);
  const caFile = str(v, 'caFile', 'ipam.caFile', false);
  return { type, serverUrl, tokenFile, network, cluster, project, timeoutMs, routes: parseRoutes(v.routes), dns: parseDns(v.dns), node, caFile };
}

function parseAttachments(conf: Json): NetConf['validAttachments'] {
  const key = conf['cni.dev/valid-attachments'] !== undefined ? 'cni.dev/valid-attachments' : 'cni.dev/attachments';
  const v = conf[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw configError(key, 'must be a list of {containerID, ifname}');
  return v.map((a, i) => {
    if (!isObject(a)) throw configError(`${key}[${i}]`, 'must be an object {containerID, ifname}');
    return { containerID: str(a, 'containerID', `${key}[${i}].containerID`, true), ifname: str(a, 'ifname', `${key}[${i}].ifname`, true) };
  });
}

/** Parses and validates the network configuration from stdin. */
export function parseNetConf(stdin: string): NetConf {
  let raw: unknown;
  try {
    raw = JSON.parse(stdin);
  } catch (e) {
    throw new CniError(ERR_DECODE, 'failed to decode network config from stdin', (e as Error).message);
  }
  if (!isObject(raw)) throw new CniError(ERR_DECODE, 'failed to decode network config from stdin', 'expected a JSON object');
  const cniVersion = str(raw, 'cniVersion', 'cniVersion', true);
  if (!isSupportedVersion(cniVersion)) {
    throw new CniError(
      ERR_INCOMPATIBLE_VERSION,
      'incompatible CNI versions',
      `config is "${cniVersion}", plugin supports [${SUPPORTED_VERSIONS.map((v) => `"${v}"`).join(' ')}]`,
    );
  }
  const name = str(raw, 'name', 'name', true);
  if (name.length > MAX_NAME_LENGTH) throw configError('name', `must be at most ${MAX_NAME_LENGTH} characters`);
  if (!NAME_RE.test(name)) throw configError('name', `must be a network name (got "${name}")`);
  const type = str(raw, 'type', 'type', true);
  const ipam = parseIpam(raw.ipam);
  const prev = raw.prevResult;
  if (prev !== undefined && prev !== null && !isObject(prev)) throw configError('prevResult', 'must be an object');
  return {
    cniVersion,
    name,
    type,
    ipam,
    prevResult: isObject(prev) ? prev : undefined,
    validAttachments: parseAttachments(raw),
  };
}

export interface CniEnv {
  command: string;
  containerId: string;
  netns: string;
  ifname: string;
  args: Record<string, string>;
  path: string;
  /** MERIDIAN_NODE_NAME (ADD and GC): the node recorded with the lease and whose leases GC considers, before `ipam.node` and the host name. */
  node?: string;
}

/**
 * The plugin's own variables, besides the CNI_* its runtime sets: listed with the server's in the
 * tables of docs/configuration.md (server/env.test.ts checks that they are). Each is validated by the
 * invocations that read it: MERIDIAN_CNI_QUIET by every command but VERSION, MERIDIAN_NODE_NAME by
 * ADD (which records the node) and GC (which releases that node's stale leases), so a DEL never
 * fails on it.
 */
export const PLUGIN_VARIABLES = ['MERIDIAN_NODE_NAME', 'MERIDIAN_CNI_QUIET'] as const;

/** MERIDIAN_CNI_QUIET: `1` silences the plugin's log lines on stderr; unset or `0` keeps them. */
export function readQuiet(env: NodeJS.ProcessEnv): boolean {
  const value = env.MERIDIAN_CNI_QUIET ?? '';
  if (value === '' || value === '0') return false;
  if (value === '1') return true;
  throw envError('MERIDIAN_CNI_QUIET', `must be 1 (no log lines) or 0 (got ${JSON.stringify(value.slice(0, 40))})`);
}

/** Spec 1.0.0 interface-name rules: non-empty, not "." or "..", < 16 bytes, no "/", ":" or whitespace. */
function validIfname(s: string): boolean {
  return s !== '' && s !== '.' && s !== '..' && Buffer.byteLength(s) < 16 && !/[\s/:]/.test(s);
}

/** CNI_ARGS: `KEY=VALUE` pairs separated by `;`. */
export function parseCniArgs(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!s) return out;
  for (const pair of s.split(';')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw envError('CNI_ARGS', `invalid pair "${pair}" (expected KEY=VALUE)`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/**
 * Reads and checks the CNI_* variables the command needs (spec 1.0.0/1.1.0 "Parameters"): ADD and
 * CHECK need CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME; DEL needs CNI_CONTAINERID and CNI_IFNAME;
 * GC, STATUS and VERSION need none beyond CNI_COMMAND. CNI_PATH is accepted but unused: this
 * plugin delegates to nothing.
 */
export function readEnv(command: string, env: NodeJS.ProcessEnv): CniEnv {
  const get = (k: string) => env[k] ?? '';
  const out: CniEnv = {
    command,
    containerId: get('CNI_CONTAINERID'),
    netns: get('CNI_NETNS'),
    ifname: get('CNI_IFNAME'),
    args: {},
    path: get('CNI_PATH'),
  };
  const attachment = command === 'ADD' || command === 'DEL' || command === 'CHECK';
  if (attachment) {
    const missing: string[] = [];
    if (!out.containerId) missing.push('CNI_CONTAINERID');
    if (!out.netns && command !== 'DEL') missing.push('CNI_NETNS');
    if (!out.ifname) missing.push('CNI_IFNAME');
    if (missing.length) throw envError(missing.join(','), 'required but missing');
    if (!NAME_RE.test(out.containerId)) throw envError('CNI_CONTAINERID', 'must start alphanumeric, then alphanumerics, "_", "." or "-"');
    if (out.containerId.length > 256) throw envError('CNI_CONTAINERID', 'is longer than 256 characters');
    if (!validIfname(out.ifname)) throw envError('CNI_IFNAME', `"${out.ifname}" is not a valid interface name`);
    out.args = parseCniArgs(get('CNI_ARGS'));
    for (const k of ['K8S_POD_NAMESPACE', 'K8S_POD_NAME']) {
      if ((out.args[k]?.length ?? 0) > MAX_NAME_LENGTH) throw envError('CNI_ARGS', `${k} is longer than ${MAX_NAME_LENGTH} characters`);
    }
  }
  if (command === 'ADD' || command === 'GC') {
    const node = env.MERIDIAN_NODE_NAME?.trim();
    if (node) {
      if (node.length > MAX_NAME_LENGTH) throw envError('MERIDIAN_NODE_NAME', `is longer than ${MAX_NAME_LENGTH} characters`);
      if (!NAME_RE.test(node)) throw envError('MERIDIAN_NODE_NAME', `"${node}" is not a node name`);
      out.node = node;
    }
  }
  return out;
}
