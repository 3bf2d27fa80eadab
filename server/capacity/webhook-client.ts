import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type BlockList, type LookupFunction, type Socket } from 'node:net';
import tls from 'node:tls';
import { checkAddress } from '@/lib/address-policy';

/**
 * The webhook worker's HTTP client: one POST to a tenant's URL under the address policy
 * (lib/address-policy.ts), so that a tenant cannot aim it at the worker's own network.
 *
 * - The URL's name is resolved once per attempt, every address it resolves to is checked (one
 *   refused address refuses the target), and the connection is made to those checked addresses
 *   only: the socket's `lookup` answers with them, so nothing resolves the name again between the
 *   check and the connection (no DNS rebinding). TLS still verifies the certificate for the name.
 * - Plain `http://` only with `allowHttp` (public targets) or to addresses on the allow list.
 * - Redirects are not followed: a 3xx answer is a failed delivery like any other non-2xx.
 * - Through a proxy (`proxy`), the target is reached with CONNECT by name and the proxy resolves it:
 *   literal addresses and loopback names are checked here, the rest is the proxy's to refuse.
 *
 * The outcome says what a tenant may learn (delivered, the HTTP status, refused by policy,
 * unreachable); `detail` says why for the server's log only: it may name internal addresses,
 * certificate names or another service's error text.
 */

/** A name's addresses, as `dns.lookup(name, { all: true })` answers. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS). */
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface WebhookTargetPolicy {
  /** Plain http:// to public addresses (WEBHOOK_ALLOW_HTTP=1). */
  allowHttp: boolean;
  /** Non-public addresses the operator allows (WEBHOOK_ALLOWED_CIDRS), over http:// or https://. */
  allowList: BlockList | null;
  /** WEBHOOK_PROXY_URL. */
  proxy?: URL;
  resolve?: Resolver;
}

export type WebhookOutcome =
  { kind: 'delivered'; status: number } | { kind: 'http'; status: number } | { kind: 'refused'; detail: string } | { kind: 'unreachable'; detail: string };

/** The text a tenant sees for an outcome (the delivery log's `lastError`; null when delivered). */
export function outcomeText(outcome: WebhookOutcome): string | null {
  switch (outcome.kind) {
    case 'delivered':
      return null;
    case 'http':
      return `HTTP ${outcome.status}`;
    case 'refused':
      return 'refused by policy';
    case 'unreachable':
      return 'unreachable';
  }
}

/** The texts {@link outcomeText} writes; anything else in a stored row is shown as `unreachable`. */
export function tenantSafeError(stored: string | null): string | null {
  if (stored === null) return null;
  return /^HTTP \d{3}$/.test(stored) || stored === 'refused by policy' ? stored : 'unreachable';
}

const LOOPBACK_NAME = /(^|\.)localhost\.?$/i;

/** A URL's host as an address (IPv6 without its brackets), or null when it is a name. */
function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

export type TargetCheck = { ok: true; addresses: { address: string; family: number }[] } | { ok: false; refused: boolean; detail: string };

/**
 * Checks a webhook URL against the policy: its scheme, and the addresses its host is or (with
 * `resolve`) resolves to. Without `resolve`, a name passes the address rule (it is checked when
 * resolved); `addresses` is then empty.
 */
export async function checkTarget(url: URL, policy: Pick<WebhookTargetPolicy, 'allowHttp' | 'allowList'>, resolve?: Resolver): Promise<TargetCheck> {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, refused: true, detail: `scheme ${url.protocol} is not https:` };
  if (url.username || url.password) return { ok: false, refused: true, detail: 'the URL carries credentials' };
  const literal = literalAddress(url.hostname);
  let addresses: { address: string; family: number }[];
  if (literal) addresses = [{ address: literal, family: isIP(literal) }];
  else if (!resolve) {
    if (LOOPBACK_NAME.test(url.hostname)) return { ok: false, refused: true, detail: `${url.hostname} names the loopback interface` };
    return url.protocol === 'https:' || policy.allowHttp
      ? { ok: true, addresses: [] }
      : { ok: false, refused: true, detail: 'plain http:// needs WEBHOOK_ALLOW_HTTP=1 or an address in WEBHOOK_ALLOWED_CIDRS' };
  } else {
    try {
      addresses = await resolve(url.hostname);
    } catch (e) {
      return { ok: false, refused: false, detail: `${url.hostname} does not resolve: ${(e as Error).message}` };
    }
    if (addresses.length === 0) return { ok: false, refused: false, detail: `${url.hostname} resolves to no address` };
  }
  let allListed = true;
  for (const { address } of addresses) {
    const verdict = checkAddress(address, policy.allowList);
    if (!verdict.allowed) return { ok: false, refused: true, detail: `${url.hostname} is ${address}: ${verdict.reason}` };
    allListed &&= verdict.listed;
  }
  if (url.protocol === 'http:' && !policy.allowHttp && !allListed) {
    return { ok: false, refused: true, detail: 'plain http:// needs WEBHOOK_ALLOW_HTTP=1 or an address in WEBHOOK_ALLOWED_CIDRS' };
  }
  return { ok: true, addresses };
}

/** A socket `lookup` that answers with the checked addresses and nothing else. */
function pinnedLookup(addresses: { address: string; family: number }[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as LookupFunction;
}

const defaultPort = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80));

/** Opens a CONNECT tunnel through `proxy` to `host:port`; resolves with the raw socket. */
function tunnel(proxy: URL, host: string, port: number, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const authority = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    const headers: Record<string, string> = { host: authority };
    if (proxy.username) {
      const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
      headers['proxy-authorization'] = `Basic ${Buffer.from(credentials).toString('base64')}`;
    }
    const req = http.request({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: defaultPort(proxy),
      method: 'CONNECT',
      path: authority,
      headers,
      signal,
      agent: false,
    });
    req.once('socket', (socket) => signal.addEventListener('abort', () => socket.destroy(), { once: true }));
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) resolve(socket);
      else {
        socket.destroy();
        reject(new Error(`the proxy answered CONNECT with ${res.statusCode}`));
      }
    });
    req.once('error', reject);
    req.end();
  });
}

/**
 * POSTs `body` to `target` under `policy` within `timeoutMs`. Never throws: every failure is an
 * outcome (refused by policy, unreachable, or the HTTP status of a non-2xx answer).
 */
export async function postWebhook(
  target: string,
  request: { headers: Record<string, string>; body: string; timeoutMs: number },
  policy: WebhookTargetPolicy,
): Promise<WebhookOutcome> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { kind: 'refused', detail: 'not a URL' };
  }
  // Through a proxy the proxy resolves the name; without one, it is resolved here, once.
  const checked = await checkTarget(url, policy, policy.proxy ? undefined : (policy.resolve ?? systemResolver));
  if (!checked.ok) return checked.refused ? { kind: 'refused', detail: checked.detail } : { kind: 'unreachable', detail: checked.detail };

  const signal = AbortSignal.timeout(request.timeoutMs);
  const host = literalAddress(url.hostname) ?? url.hostname;
  const port = defaultPort(url);
  const secure = url.protocol === 'https:';
  // Every socket this attempt opens is closed when it ends, whatever happened on it.
  const sockets: Socket[] = [];
  try {
    let createConnection: (() => Socket) | undefined;
    if (policy.proxy) {
      const raw = await tunnel(policy.proxy, host, port, signal);
      sockets.push(raw);
      createConnection = secure ? () => tls.connect({ socket: raw, servername: isIP(host) ? undefined : host }) : () => raw;
    }
    const status = await new Promise<number>((resolve, reject) => {
      const options: https.RequestOptions = {
        host,
        port,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        signal,
        agent: false,
        ...(createConnection ? { createConnection } : { lookup: pinnedLookup(checked.addresses) }),
      };
      const req = (secure ? https : http).request(options, (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        req.destroy();
      });
      req.once('socket', (socket) => sockets.push(socket));
      req.once('error', reject);
      req.end(request.body);
    });
    return status >= 200 && status < 300 ? { kind: 'delivered', status } : { kind: 'http', status };
  } catch (e) {
    const err = e as Error & { code?: string };
    return { kind: 'unreachable', detail: signal.aborted ? `no answer within ${request.timeoutMs} ms` : `${err.code ?? err.name}: ${err.message}` };
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}
