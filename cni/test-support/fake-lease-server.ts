/**
 * TEST DOUBLE of Meridian's CNI lease API — for the plugin's own protocol tests and the plugin
 * bench only. It is a real HTTP server implementing the REST contract in memory (auth, the five
 * verbs, idempotent ADD, error envelopes, 401/404/429/5xx/Exhausted) so the BUILT plugin can be run
 * as a process against it. It is NOT the product: the real server (server/cni, PostgreSQL, node
 * blocks, exclusion constraint) is tested by its own suite, and the end-to-end tests through the
 * real server and the Debian bridge plugin live in cni/cni-bridge.test.ts.
 *
 * Addresses: IPv4 from 10.77.0.0/24 (gateway 10.77.0.1, prefix /24) and, with `dualStack`, IPv6
 * from fd77::/64 (gateway fd77::1).
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface Lease {
  cniNetwork: string;
  containerId: string;
  ifname: string;
  node: string;
  podNamespace?: string;
  podName?: string;
  ips: { address: string; gateway: string; family: 4 | 6 }[];
}

/** How the double misbehaves, for the error-path tests. */
export type FaultMode =
  | 'none'
  | 'hang' // accept the request, never answer
  | 'error500' // 500 Internal
  | 'unavailable503' // 503 Unavailable
  | 'rateLimited429' // 429 with Retry-After
  | 'garbage' // 200 with a body that is not JSON
  | 'noIps' // 200 { ips: [] } for ADD
  | 'echoAuth400'; // 400 whose message echoes the Authorization header (redaction test)

export interface FakeLeaseServerOptions {
  token: string;
  project: string;
  cluster: string;
  dualStack?: boolean;
  /** Number of IPv4 pod addresses available (default 253: .2–.254). */
  capacity?: number;
  /** Serve https with this key/certificate (PEM) instead of http. */
  tls?: { key: string; cert: string };
}

export class FakeLeaseServer {
  readonly requests: RecordedRequest[] = [];
  readonly leases = new Map<string, Lease>();
  fault: FaultMode = 'none';
  /** STATUS answers not-ready/Exhausted and ADD of a new key answers 507 Exhausted. */
  exhausted = false;
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  private nextHost = 2;
  private readonly freeHosts: number[] = [];

  constructor(readonly options: FakeLeaseServerOptions) {}

  get url(): string {
    const a = this.server?.address() as AddressInfo | null;
    if (!a) throw new Error('fake lease server not started');
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${a.port}`;
  }

  async start(port = 0): Promise<string> {
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res);
    this.server = this.options.tls ? createHttpsServer({ key: this.options.tls.key, cert: this.options.tls.cert }, handler) : createServer(handler);
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', () => resolve());
    });
    return this.url;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Requests whose path ends with `/cni/${verb}` (verb without query). */
  requestsFor(verb: 'add' | 'del' | 'check' | 'gc' | 'status'): RecordedRequest[] {
    return this.requests.filter((r) => r.path.split('?')[0].endsWith(`/cni/${verb}`));
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private fail(res: ServerResponse, status: number, code: string, message: string, field?: string) {
    this.send(res, status, { error: { code, message, ...(field ? { field } : {}) } });
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return this.fail(res, 400, 'ValidationFailed', 'body is not JSON');
    }
    const path = req.url ?? '';
    this.requests.push({ method: req.method ?? '', path, headers: req.headers, body });

    switch (this.fault) {
      case 'hang':
        this.hanging.add(res);
        return;
      case 'error500':
        return this.fail(res, 500, 'Internal', 'internal error');
      case 'unavailable503':
        return this.fail(res, 503, 'Unavailable', 'database unavailable');
      case 'rateLimited429':
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
        return res.end(JSON.stringify({ error: { code: 'RateLimited', message: 'slow down' } }));
      case 'garbage':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html>proxy page</html>');
      case 'noIps':
        if (path.split('?')[0].endsWith('/cni/add')) return this.send(res, 200, { ips: [], leases: [] });
        break;
      case 'echoAuth400':
        return this.fail(res, 400, 'ValidationFailed', `bad request with header ${req.headers.authorization}`);
      default:
        break;
    }

    if (req.headers.authorization !== `Bearer ${this.options.token}`) return this.fail(res, 401, 'Unauthenticated', 'invalid or expired token');
    const m = /^\/api\/v1\/projects\/([^/]+)\/clusters\/([^/]+)\/cni\/(add|del|check|gc|status)(\?.*)?$/.exec(path);
    if (!m) return this.fail(res, 404, 'NotFound', `no route ${path}`);
    const [, project, cluster, verb, query] = m;
    // "-" is the token's own project (the plugin without ipam.project).
    if (project !== '-' && decodeURIComponent(project) !== this.options.project)
      return this.fail(res, 404, 'NotFound', `project "${project}" not found`, 'project');
    if (decodeURIComponent(cluster) !== this.options.cluster) return this.fail(res, 404, 'NotFound', `cluster "${cluster}" not found`, 'cluster');
    if (req.headers['content-type'] !== 'application/json' && req.method === 'POST') return this.fail(res, 415, 'ValidationFailed', 'expected JSON');

    const b = (body ?? {}) as Record<string, unknown>;
    const key = `${String(b.cniNetwork)}|${String(b.containerId)}|${String(b.ifname)}`;
    if (verb === 'status' && req.method === 'GET') {
      const cniNetwork = new URLSearchParams(query?.slice(1) ?? '').get('cniNetwork');
      if (!cniNetwork) return this.fail(res, 400, 'ValidationFailed', 'cniNetwork is required', 'cniNetwork');
      return this.send(
        res,
        200,
        this.exhausted || this.available() === 0 ? { ready: false, reason: 'Exhausted', message: 'network pod-net has no free address' } : { ready: true },
      );
    }
    if (req.method !== 'POST') return this.fail(res, 405, 'ValidationFailed', 'method not allowed');
    for (const f of verb === 'gc' ? ['cniNetwork'] : ['cniNetwork', 'containerId', 'ifname']) {
      if (typeof b[f] !== 'string' || !b[f]) return this.fail(res, 400, 'ValidationFailed', `${f} is required`, f);
    }
    switch (verb) {
      case 'add': {
        if (typeof b.node !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(b.node))
          return this.fail(res, 400, 'ValidationFailed', 'node must be a node name', 'node');
        let lease = this.leases.get(key);
        if (!lease) {
          if (this.exhausted || this.available() === 0) return this.fail(res, 507, 'Exhausted', 'no free address in network pod-net');
          const host = this.freeHosts.shift() ?? this.nextHost++;
          const ips: Lease['ips'] = [{ address: `10.77.0.${host}/24`, gateway: '10.77.0.1', family: 4 }];
          if (this.options.dualStack) ips.push({ address: `fd77::${host.toString(16)}/64`, gateway: 'fd77::1', family: 6 });
          lease = {
            cniNetwork: String(b.cniNetwork),
            containerId: String(b.containerId),
            ifname: String(b.ifname),
            node: b.node,
            podNamespace: typeof b.podNamespace === 'string' ? b.podNamespace : undefined,
            podName: typeof b.podName === 'string' ? b.podName : undefined,
            ips,
          };
          this.leases.set(key, lease);
        }
        return this.send(res, 200, { ips: lease.ips, leases: [{ ...lease }] });
      }
      case 'del': {
        const lease = this.leases.get(key);
        if (lease) this.release(key, lease);
        return this.send(res, 200, { released: lease ? lease.ips.length : 0 });
      }
      case 'check': {
        const lease = this.leases.get(key);
        if (!lease) return this.fail(res, 404, 'NotFound', 'no lease for this attachment');
        const prev = b.prevResult as { ips?: { address?: unknown }[] } | undefined;
        if (!prev || !Array.isArray(prev.ips)) return this.fail(res, 400, 'ValidationFailed', 'prevResult.ips is required', 'prevResult.ips');
        const got = new Set(prev.ips.map((i) => String(i.address)));
        const missing = lease.ips.filter((i) => !got.has(i.address));
        if (missing.length)
          return this.fail(res, 409, 'CheckMismatch', `lease holds ${lease.ips.map((i) => i.address).join(', ')}, prevResult has ${[...got].join(', ')}`);
        return this.send(res, 200, { ok: true });
      }
      case 'gc': {
        if (typeof b.node !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(b.node))
          return this.fail(res, 400, 'ValidationFailed', 'node must be a node name', 'node');
        const valid = b.validAttachments;
        if (!Array.isArray(valid)) return this.fail(res, 400, 'ValidationFailed', 'validAttachments is required', 'validAttachments');
        const keep = new Set(
          valid.map((a: { containerID?: unknown; ifname?: unknown }) => `${String(b.cniNetwork)}|${String(a.containerID)}|${String(a.ifname)}`),
        );
        const released: { containerId: string; ifname: string; address: string }[] = [];
        let kept = 0;
        for (const [k, lease] of [...this.leases]) {
          // The sending node's leases only, as the lease API does.
          if (lease.cniNetwork !== b.cniNetwork || lease.node !== b.node) continue;
          if (keep.has(k)) {
            kept++;
            continue;
          }
          this.release(k, lease);
          for (const ip of lease.ips) released.push({ containerId: lease.containerId, ifname: lease.ifname, address: ip.address });
        }
        return this.send(res, 200, { released, kept });
      }
      default:
        return this.fail(res, 404, 'NotFound', 'unknown verb');
    }
  }

  private available(): number {
    const capacity = this.options.capacity ?? 253;
    return capacity - this.leases.size;
  }

  private release(key: string, lease: Lease) {
    this.leases.delete(key);
    const host = Number(lease.ips[0].address.split('/')[0].split('.')[3]);
    this.freeHosts.push(host);
  }
}
