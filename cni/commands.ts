/**
 * The CNI verbs. Every verb is one call to Meridian's lease API; the plugin keeps no state and
 * never produces an address the server did not return (no fallback, no cache).
 */
import { readFileSync } from 'node:fs';
import { isIP } from './ip';
import { type CallOptions, ServerError, callServer, readToken, toCniError } from './client';
import type { CniEnv, Dns, NetConf, Route } from './config';
import {
  CniError,
  ERR_CHECK_MISMATCH,
  ERR_DECODE,
  ERR_INCOMPATIBLE_VERSION,
  ERR_INVALID_CONFIG,
  ERR_INVALID_ENV,
  ERR_NO_LEASE,
  ERR_SERVER_RESPONSE,
  ERR_UNAVAILABLE,
  configError,
} from './errors';
import { log } from './log';
import { atLeast } from './version';

export interface IpamResultIp {
  /** Only for results of spec < 1.0.0. */
  version?: '4' | '6';
  address: string;
  gateway?: string;
}

/** The abbreviated result an IPAM plugin returns (spec: no `interfaces`, no `interface` index). */
export interface IpamResult {
  cniVersion: string;
  ips: IpamResultIp[];
  routes: Route[];
  dns: Dns;
}

/**
 * The host name: the kernel's (the UTS namespace's, as `uname -n` and `os.hostname()` say), read
 * from /proc instead of through `node:os`, which the compiled plugin would otherwise load for it.
 */
async function hostName(): Promise<string> {
  try {
    const name = readFileSync('/proc/sys/kernel/hostname', 'utf8').trim();
    if (name) return name;
  } catch {
    // no /proc: ask the runtime
  }
  return (await import('node:os')).hostname();
}

/** The effective node name: MERIDIAN_NODE_NAME, else `ipam.node`, else the host name. */
export async function nodeName(conf: NetConf, env: CniEnv): Promise<string> {
  return env.node ?? conf.ipam.node ?? hostName();
}

function call(conf: NetConf, method: CallOptions['method'], path: string, body?: unknown): Promise<unknown> {
  const token = readToken(conf.ipam.tokenFile);
  return callServer({ method, path, body, token, ipam: conf.ipam });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the server's `ips` strictly: a malformed answer is an error, never "repaired". */
function resultIps(answer: unknown, cniVersion: string): IpamResultIp[] {
  const ips = isRecord(answer) ? answer.ips : undefined;
  const bad = (why: string) => new CniError(ERR_SERVER_RESPONSE, 'unexpected ADD response from Meridian server', why);
  if (!Array.isArray(ips) || ips.length === 0) throw bad('no "ips" in the answer');
  return ips.map((ip: unknown, i) => {
    if (!isRecord(ip) || typeof ip.address !== 'string') throw bad(`ips[${i}].address missing`);
    const [addr, len, extra] = ip.address.split('/');
    const family = isIP(addr);
    if (!family || len === undefined || extra !== undefined || !/^\d{1,3}$/.test(len) || Number(len) > (family === 4 ? 32 : 128)) {
      throw bad(`ips[${i}].address "${ip.address}" is not an address in CIDR notation`);
    }
    // Key order as in the spec's examples; `version` only exists before 1.0.0.
    const out: IpamResultIp = atLeast(cniVersion, '1.0.0') ? { address: ip.address } : { version: family === 4 ? '4' : '6', address: ip.address };
    if (ip.gateway !== undefined && ip.gateway !== null) {
      if (typeof ip.gateway !== 'string' || isIP(ip.gateway) !== family) throw bad(`ips[${i}].gateway "${String(ip.gateway)}" is not an IPv${family} address`);
      out.gateway = ip.gateway;
    }
    return out;
  });
}

/** Routes as the requested spec version defines them (mtu/advmss/priority/table/scope are 1.1.0). */
function resultRoutes(routes: Route[] | undefined, cniVersion: string): Route[] {
  if (!routes) return [];
  if (atLeast(cniVersion, '1.1.0')) return routes.map((r) => ({ ...r }));
  return routes.map((r) => (r.gw === undefined ? { dst: r.dst } : { dst: r.dst, gw: r.gw }));
}

export async function cmdAdd(conf: NetConf, env: CniEnv): Promise<IpamResult> {
  const node = await nodeName(conf, env);
  const body: Record<string, string> = { cniNetwork: conf.name, containerId: env.containerId, ifname: env.ifname, node };
  if (env.args.K8S_POD_NAMESPACE) body.podNamespace = env.args.K8S_POD_NAMESPACE;
  if (env.args.K8S_POD_NAME) body.podName = env.args.K8S_POD_NAME;
  let answer: unknown;
  try {
    answer = await call(conf, 'POST', '/add', body);
  } catch (e) {
    throw e instanceof ServerError ? toCniError(e) : e;
  }
  const ips = resultIps(answer, conf.cniVersion);
  log(`ADD network=${conf.name} container=${env.containerId} ifname=${env.ifname} node=${node} → ${ips.map((i) => i.address).join(', ')}`);
  return { cniVersion: conf.cniVersion, ips, routes: resultRoutes(conf.ipam.routes, conf.cniVersion), dns: { ...(conf.ipam.dns ?? {}) } };
}

/**
 * DEL releases the lease synchronously. An already-released lease is success (the server answers
 * `released: 0`); an unreachable server is code 11 so the runtime retries: never a fake success.
 */
export async function cmdDel(conf: NetConf, env: CniEnv): Promise<void> {
  let answer: unknown;
  try {
    answer = await call(conf, 'POST', '/del', { cniNetwork: conf.name, containerId: env.containerId, ifname: env.ifname });
  } catch (e) {
    throw e instanceof ServerError ? toCniError(e) : e;
  }
  const released = isRecord(answer) && typeof answer.released === 'number' ? answer.released : undefined;
  if (released === undefined) throw new CniError(ERR_SERVER_RESPONSE, 'unexpected DEL response from Meridian server', 'no numeric "released" in the answer');
  log(`DEL network=${conf.name} container=${env.containerId} ifname=${env.ifname} released=${released}`);
}

const leaseMissing = (e: ServerError) => e.status === 404 && e.error.code === 'NotFound' && e.error.field !== 'project' && e.error.field !== 'cluster';

/** CHECK: the server compares `prevResult` with its lease; a mismatch is an error (and a tenant event there). */
export async function cmdCheck(conf: NetConf, env: CniEnv): Promise<void> {
  if (!atLeast(conf.cniVersion, '0.4.0'))
    throw new CniError(ERR_INCOMPATIBLE_VERSION, 'config version does not allow CHECK', `cniVersion ${conf.cniVersion} < 0.4.0`);
  if (!conf.prevResult) throw configError('prevResult', 'is required for CHECK');
  if (!Array.isArray(conf.prevResult.ips)) throw configError('prevResult.ips', 'must be a list');
  let answer: unknown;
  try {
    answer = await call(conf, 'POST', '/check', { cniNetwork: conf.name, containerId: env.containerId, ifname: env.ifname, prevResult: conf.prevResult });
  } catch (e) {
    if (e instanceof ServerError && e.status === 409 && e.error.code === 'CheckMismatch') {
      throw new CniError(ERR_CHECK_MISMATCH, 'CHECK failed: prevResult does not match the address lease', e.error.message ?? 'CheckMismatch');
    }
    if (e instanceof ServerError && leaseMissing(e)) {
      throw new CniError(ERR_NO_LEASE, 'CHECK failed: no address lease recorded for this attachment', e.error.message ?? 'NotFound');
    }
    throw e instanceof ServerError ? toCniError(e) : e;
  }
  if (!isRecord(answer) || answer.ok !== true) {
    throw new CniError(ERR_CHECK_MISMATCH, 'CHECK failed: prevResult does not match the address lease', JSON.stringify(answer).slice(0, 500));
  }
  log(`CHECK network=${conf.name} container=${env.containerId} ifname=${env.ifname} ok`);
}

/**
 * GC (1.1.0): the server releases this node's leases of this network not in the valid list. The
 * runtime lists its own node's attachments only, so the plugin names the node (as ADD records it).
 */
export async function cmdGc(conf: NetConf, env: CniEnv): Promise<void> {
  if (!atLeast(conf.cniVersion, '1.1.0'))
    throw new CniError(ERR_INCOMPATIBLE_VERSION, 'config version does not allow GC', `cniVersion ${conf.cniVersion} < 1.1.0`);
  // Without the list every lease would look stale: refuse rather than release everything.
  if (!conf.validAttachments) throw configError('cni.dev/valid-attachments', 'is required for GC');
  let answer: unknown;
  try {
    answer = await call(conf, 'POST', '/gc', { cniNetwork: conf.name, node: await nodeName(conf, env), validAttachments: conf.validAttachments });
  } catch (e) {
    throw e instanceof ServerError ? toCniError(e) : e;
  }
  const released = isRecord(answer) && Array.isArray(answer.released) ? answer.released : undefined;
  if (!released) throw new CniError(ERR_SERVER_RESPONSE, 'unexpected GC response from Meridian server', 'no "released" list in the answer');
  const kept = isRecord(answer) && typeof answer.kept === 'number' ? answer.kept : '?';
  log(`GC network=${conf.name} valid=${conf.validAttachments.length} released=${released.length} kept=${kept}`);
  for (const r of released.slice(0, 50)) {
    if (isRecord(r)) log(`GC released container=${String(r.containerId)} ifname=${String(r.ifname)} address=${String(r.address)}`);
  }
}

/**
 * STATUS (1.1.0): ready → success; the server says not ready (e.g. Exhausted) → 50; the server
 * unreachable, failing or refusing the token also means "cannot service ADD" → 50 with the cause.
 * Errors in the request itself (config, versions) keep their own codes.
 */
export async function cmdStatus(conf: NetConf): Promise<void> {
  if (!atLeast(conf.cniVersion, '1.1.0'))
    throw new CniError(ERR_INCOMPATIBLE_VERSION, 'config version does not allow STATUS', `cniVersion ${conf.cniVersion} < 1.1.0`);
  let answer: unknown;
  try {
    answer = await call(conf, 'GET', `/status?cniNetwork=${encodeURIComponent(conf.name)}`);
  } catch (e) {
    const err = e instanceof ServerError ? toCniError(e) : e;
    if (err instanceof CniError && (err.code === ERR_INVALID_CONFIG || err.code === ERR_INVALID_ENV || err.code === ERR_DECODE)) throw err;
    const cause = err instanceof CniError ? `${err.msg}${err.details ? ` (${err.details})` : ''}` : String(err);
    throw new CniError(ERR_UNAVAILABLE, 'meridian-ipam cannot service ADD: Meridian server unavailable', cause);
  }
  if (!isRecord(answer) || typeof answer.ready !== 'boolean') {
    throw new CniError(ERR_UNAVAILABLE, 'meridian-ipam cannot service ADD: unexpected STATUS response', JSON.stringify(answer).slice(0, 500));
  }
  if (!answer.ready) {
    const reason = typeof answer.reason === 'string' ? answer.reason : 'NotReady';
    const message = typeof answer.message === 'string' ? answer.message : '';
    throw new CniError(ERR_UNAVAILABLE, `meridian-ipam cannot service ADD: ${reason}`, message || reason);
  }
}
