/**
 * A REST v1 client for the system tests that spreads requests over several web processes and
 * classifies every answer the way a careful client must:
 *
 * - `ack`: a 2xx — the server committed what it answered.
 * - `refused`: a 4xx with an error code — definitely nothing done.
 * - `unsent`: the connection was refused — the request never reached a server, nothing done.
 * - `unknown`: anything else (reset, timeout, 5xx) — it may or may not have happened (a 503
 *   `DatabaseUnavailable` too: its COMMIT may have been sent before the deadline and answered after).
 */
import http from 'node:http';

export type Outcome =
  | { kind: 'ack'; status: number; body: any; web: number }
  | { kind: 'refused'; status: number; code: string; message: string; web: number }
  | { kind: 'unsent'; reason: string; web: number }
  | { kind: 'unknown'; reason: string; web: number };

export class Api {
  private next = 0;
  private readonly agents: http.Agent[];
  /** Requests sent to each web process (by index), whatever their outcome. */
  readonly sent: number[];
  /** Every request's duration, for the report. */
  readonly timings: { what: string; ms: number; kind: Outcome['kind']; status?: number; at: number; reason?: string }[] = [];
  /**
   * Every 5xx answer except 507 (`Exhausted`, documented). The database never goes away in these
   * tests, so a 5xx is a server bug even when the client can retry it.
   */
  readonly serverErrors: string[] = [];
  /**
   * 503 `DatabaseUnavailable` answers (with `Retry-After`), and how long each took: expected only in
   * the tests that take the database away (`tolerateUnavailable`); a server error anywhere else.
   */
  readonly unavailable: { what: string; ms: number; retryAfter: string | undefined }[] = [];
  tolerateUnavailable = false;

  constructor(
    readonly bases: string[],
    private readonly timeoutMs = 20_000,
  ) {
    this.agents = bases.map(() => new http.Agent({ keepAlive: true, maxSockets: 64 }));
    this.sent = bases.map(() => 0);
  }

  /** The web process for the next request: round robin, unless `web` pins one. */
  pick(web?: number): number {
    return web ?? this.next++ % this.bases.length;
  }

  request(method: string, path: string, token: string, body?: unknown, options: { web?: number } = {}): Promise<Outcome> {
    const web = this.pick(options.web);
    this.sent[web]++;
    const url = new URL(path, this.bases[web]);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = performance.now();
    const what = `${method} ${path.replace(/^\/api\/v1\/projects\/[^/]+/, '')}`;
    return new Promise<Outcome>((done) => {
      const resolve = (o: Outcome) => {
        this.timings.push({
          what,
          ms: performance.now() - started,
          kind: o.kind,
          status: 'status' in o ? o.status : undefined,
          at: Date.now(),
          reason: 'reason' in o ? o.reason : undefined,
        });
        done(o);
      };
      const req = http.request(
        {
          agent: this.agents[web],
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method,
          timeout: this.timeoutMs,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('error', (e) => resolve({ kind: 'unknown', reason: `response: ${e.message}`, web }));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            let json: any = null;
            try {
              json = text ? JSON.parse(text) : null;
            } catch {
              // not JSON: classified by status below
            }
            if (status >= 200 && status < 300) resolve({ kind: 'ack', status, body: json, web });
            else if (status >= 400 && status < 500 && json?.error?.code)
              resolve({ kind: 'refused', status, code: json.error.code, message: json.error.message, web });
            else if (status === 503 && json?.error?.code === 'DatabaseUnavailable' && this.tolerateUnavailable) {
              const retryAfter = res.headers['retry-after'];
              this.unavailable.push({ what, ms: performance.now() - started, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
              resolve({ kind: 'unknown', reason: `HTTP 503 DatabaseUnavailable: ${json.error.message}`, web });
            } else {
              if (status >= 500 && status !== 507) this.serverErrors.push(`${what} on web ${web + 1}: HTTP ${status} ${text.slice(0, 200)}`);
              resolve({ kind: 'unknown', reason: `HTTP ${status}: ${text.slice(0, 200)}`, web });
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (e: NodeJS.ErrnoException) =>
        resolve(e.code === 'ECONNREFUSED' ? { kind: 'unsent', reason: e.code, web } : { kind: 'unknown', reason: e.code ?? e.message, web }),
      );
      req.end(payload);
    });
  }

  /**
   * For idempotent requests: retries what may not have happened (`unsent`, `unknown`) on the next
   * web process, up to `attempts` times with a short pause. Returns the first definite outcome, or
   * else `unknown` if any attempt may have reached a server (else `unsent`) — with `uncertain` set
   * when an earlier attempt may have reached a server (and may still commit after a refusal).
   */
  async idempotent(
    method: string,
    path: string,
    token: string,
    body?: unknown,
    options: { attempts?: number; pauseMs?: number } = {},
  ): Promise<Outcome & { uncertain: boolean }> {
    const attempts = options.attempts ?? 1;
    let uncertain: Outcome | undefined;
    let last: Outcome | undefined;
    for (let i = 0; i < attempts; i++) {
      last = await this.request(method, path, token, body, last ? { web: (last.web + 1) % this.bases.length } : {});
      if (last.kind === 'ack' || last.kind === 'refused') return { ...last, uncertain: uncertain !== undefined };
      if (last.kind === 'unknown') uncertain = last;
      if (i + 1 < attempts) await new Promise((r) => setTimeout(r, options.pauseMs ?? 250));
    }
    return { ...(uncertain ?? last!), uncertain: uncertain !== undefined };
  }

  /** p50 / p99 / max of the request durations, and the slowest requests. */
  summary(): string {
    const ms = this.timings.map((t) => t.ms).sort((a, b) => a - b);
    const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))] ?? 0;
    const slowest = [...this.timings]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map((t) => `${t.what} ${t.ms.toFixed(0)} ms`);
    const kinds: Record<string, number> = {};
    for (const t of this.timings) kinds[t.kind] = (kinds[t.kind] ?? 0) + 1;
    return `${ms.length} requests (${Object.entries(kinds)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}), p50 ${at(50).toFixed(0)} ms, p99 ${at(99).toFixed(0)} ms, slowest: ${slowest.join('; ')}`;
  }

  close(): void {
    for (const a of this.agents) a.destroy();
  }
}
