import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import path from 'node:path';
import yaml from 'js-yaml';
import { z } from 'zod';
import type { UserInfo } from './front-proxy';

/**
 * Delegated authorization and authentication, as kube-apiserver's webhook modes and
 * k8s.io/apiserver's delegating options do them:
 *
 * - {@link createSubjectAccessReviewer}: every front-proxied request (and every token a TokenReview
 *   authenticated) is decided by a `SubjectAccessReview` (`authorization.k8s.io/v1`) sent to the
 *   server a kubeconfig names (AUTHORIZATION_WEBHOOK_CONFIG_FILE). Answers are cached — allowed
 *   ones for AUTHORIZATION_WEBHOOK_CACHE_AUTHORIZED_TTL (5 min), denied ones for
 *   AUTHORIZATION_WEBHOOK_CACHE_UNAUTHORIZED_TTL (30 s) — and identical reviews in flight share one
 *   call. A server that cannot be reached, times out or answers anything but a review is an
 *   {@link WebhookUnavailable}: the request is refused, never allowed, and nothing is cached.
 * - {@link createTokenReviewer}: bearer tokens Meridian did not issue are sent as a `TokenReview`
 *   (`authentication.k8s.io/v1`) to AUTHENTICATION_WEBHOOK_CONFIG_FILE's server, answers cached for
 *   AUTHENTICATION_WEBHOOK_CACHE_TTL.
 */

/** The attributes of one request, as a SubjectAccessReview's spec carries them. */
export type RequestAttributes =
  | {
      kind: 'resource';
      verb: string;
      group: string;
      version: string;
      resource: string;
      subresource: string;
      namespace: string;
      name: string;
    }
  | { kind: 'nonResource'; verb: string; path: string };

export interface Decision {
  allowed: boolean;
  /** The authorizer's reason, when it gave one. */
  reason: string;
}

/** The webhook did not answer a review (unreachable, timed out, an error status, a body that is not a review). */
export class WebhookUnavailable extends Error {
  constructor(
    readonly server: string,
    why: string,
  ) {
    super(`the webhook at ${server} did not answer: ${why}`);
    this.name = 'WebhookUnavailable';
  }
}

// ---- The webhook's kubeconfig -------------------------------------------------------------------

const KubeconfigSchema = z.object({
  clusters: z.array(
    z.object({
      name: z.string(),
      cluster: z.object({
        server: z.string().url(),
        'certificate-authority': z.string().optional(),
        'certificate-authority-data': z.string().optional(),
        'insecure-skip-tls-verify': z.boolean().optional(),
        'tls-server-name': z.string().optional(),
      }),
    }),
  ),
  users: z
    .array(
      z.object({
        name: z.string(),
        user: z.object({
          'client-certificate': z.string().optional(),
          'client-certificate-data': z.string().optional(),
          'client-key': z.string().optional(),
          'client-key-data': z.string().optional(),
          token: z.string().optional(),
          tokenFile: z.string().optional(),
        }),
      }),
    )
    .default([]),
  contexts: z.array(z.object({ name: z.string(), context: z.object({ cluster: z.string(), user: z.string().optional() }) })).default([]),
  'current-context': z.string().optional(),
});

/** Where and how a webhook is called: its URL, TLS material and credentials. */
export interface WebhookTarget {
  url: URL;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  /** A file holding the token, read at every call (a projected service-account token is rotated in place). */
  tokenFile?: string;
  insecure: boolean;
  servername?: string;
}

/**
 * The webhook a kubeconfig file names (its current context's cluster and user, else the first
 * ones), as kube-apiserver reads `--authorization-webhook-config-file`: file paths in it are relative
 * to the file. Throws naming the file and what is wrong.
 */
export function readWebhookKubeconfig(file: string): WebhookTarget {
  let parsed: z.infer<typeof KubeconfigSchema>;
  try {
    parsed = KubeconfigSchema.parse(yaml.load(readFileSync(file, 'utf8')));
  } catch (e) {
    throw new Error(`${file}: not a kubeconfig naming a webhook server: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, { cause: e });
  }
  const context = parsed.contexts.find((c) => c.name === parsed['current-context'])?.context;
  const cluster = (context ? parsed.clusters.find((c) => c.name === context.cluster) : parsed.clusters[0])?.cluster;
  if (!cluster) throw new Error(`${file}: no cluster${context ? ` named ${JSON.stringify(context.cluster)}` : ''}`);
  const user = (context?.user ? parsed.users.find((u) => u.name === context.user) : parsed.users[0])?.user;
  const dir = path.dirname(file);
  const fileOrData = (fileName: string | undefined, data: string | undefined) =>
    data ? Buffer.from(data, 'base64') : fileName ? readFileSync(path.resolve(dir, fileName)) : undefined;
  return {
    url: new URL(cluster.server),
    ca: fileOrData(cluster['certificate-authority'], cluster['certificate-authority-data']),
    cert: fileOrData(user?.['client-certificate'], user?.['client-certificate-data']),
    key: fileOrData(user?.['client-key'], user?.['client-key-data']),
    token: user?.token,
    tokenFile: user?.tokenFile ? path.resolve(dir, user.tokenFile) : undefined,
    insecure: cluster['insecure-skip-tls-verify'] ?? false,
    servername: cluster['tls-server-name'],
  };
}

/** POSTs `body` to the webhook and answers its JSON; anything else is {@link WebhookUnavailable}. */
function post(target: WebhookTarget, agent: http.Agent, body: unknown, timeoutMs: number): Promise<unknown> {
  const payload = Buffer.from(JSON.stringify(body));
  const secure = target.url.protocol === 'https:';
  const where = target.url.origin + target.url.pathname;
  let token = target.token;
  try {
    if (target.tokenFile) token = readFileSync(target.tokenFile, 'utf8').trim();
  } catch (e) {
    return Promise.reject(new WebhookUnavailable(where, `its token file cannot be read: ${e instanceof Error ? e.message : String(e)}`));
  }
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      target.url,
      {
        method: 'POST',
        agent,
        timeout: timeoutMs,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(payload.length),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(new WebhookUnavailable(where, e.message)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
            reject(new WebhookUnavailable(where, `HTTP ${res.statusCode}`));
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new WebhookUnavailable(where, 'the answer is not JSON'));
          }
        });
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => reject(e instanceof WebhookUnavailable ? e : new WebhookUnavailable(where, e.message)));
    req.end(payload);
  });
}

function agentFor(target: WebhookTarget): http.Agent {
  if (target.url.protocol !== 'https:') return new http.Agent({ keepAlive: true, maxSockets: 16 });
  return new https.Agent({
    keepAlive: true,
    maxSockets: 16,
    ca: target.ca,
    cert: target.cert,
    key: target.key,
    rejectUnauthorized: !target.insecure,
    servername: target.servername,
  });
}

// ---- A cache with a lifetime per answer -----------------------------------------------------------

/** Answers by key, each until its own expiry; identical lookups in flight share one call. */
class AnswerCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();
  private readonly inFlight = new Map<string, Promise<T>>();

  constructor(
    private readonly ttlOf: (value: T) => number,
    private readonly maxEntries = 10_000,
  ) {}

  async get(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && hit.until > Date.now()) return hit.value;
    if (hit) this.entries.delete(key);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const call = load()
      .then((value) => {
        const ttl = this.ttlOf(value);
        if (ttl > 0) {
          if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
          this.entries.set(key, { value, until: Date.now() + ttl });
        }
        return value;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, call);
    return call;
  }
}

// ---- SubjectAccessReview --------------------------------------------------------------------------

const ReviewAnswer = z.object({
  status: z.object({ allowed: z.boolean(), denied: z.boolean().optional(), reason: z.string().optional(), evaluationError: z.string().optional() }),
});

export interface SubjectAccessReviewer {
  /** Whether `user` may do what `attributes` say; {@link WebhookUnavailable} when the server did not answer. */
  authorize(user: UserInfo, attributes: RequestAttributes): Promise<Decision>;
  close(): void;
}

/** The spec of a review: the user, groups, extras and the request's attributes, as kube-apiserver sends them. */
export function subjectAccessReview(user: UserInfo, a: RequestAttributes) {
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      ...(a.kind === 'resource'
        ? {
            resourceAttributes: {
              namespace: a.namespace,
              verb: a.verb,
              group: a.group,
              version: a.version,
              resource: a.resource,
              subresource: a.subresource,
              name: a.name,
            },
          }
        : { nonResourceAttributes: { path: a.path, verb: a.verb } }),
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups,
      extra: user.extra,
    },
  };
}

export function createSubjectAccessReviewer(
  target: WebhookTarget,
  options: { authorizedTtlMs: number; unauthorizedTtlMs: number; timeoutMs: number },
): SubjectAccessReviewer {
  const agent = agentFor(target);
  const cache = new AnswerCache<Decision>((d) => (d.allowed ? options.authorizedTtlMs : options.unauthorizedTtlMs));
  return {
    authorize(user, attributes) {
      const review = subjectAccessReview(user, attributes);
      const key = JSON.stringify([review.spec.user, review.spec.uid ?? '', [...user.groups].sort(), sortedExtra(user.extra), attributes]);
      return cache.get(key, async () => {
        const answer = ReviewAnswer.safeParse(await post(target, agent, review, options.timeoutMs));
        if (!answer.success) throw new WebhookUnavailable(target.url.origin + target.url.pathname, 'the answer is not a SubjectAccessReview');
        const { allowed, reason, evaluationError } = answer.data.status;
        return { allowed, reason: reason || evaluationError || '' };
      });
    },
    close: () => agent.destroy(),
  };
}

const sortedExtra = (extra: Record<string, string[]>) =>
  Object.keys(extra)
    .sort()
    .map((k) => [k, extra[k]]);

// ---- TokenReview ------------------------------------------------------------------------------------

const TokenReviewAnswer = z.object({
  status: z.object({
    authenticated: z.boolean().optional(),
    user: z
      .object({
        username: z.string().optional(),
        uid: z.string().optional(),
        groups: z.array(z.string()).optional(),
        extra: z.record(z.string(), z.array(z.string())).optional(),
      })
      .optional(),
    error: z.string().optional(),
  }),
});

export interface TokenReviewer {
  /** The token's user, or undefined when the server says it does not authenticate; {@link WebhookUnavailable} when it did not answer. */
  authenticate(token: string): Promise<UserInfo | undefined>;
  close(): void;
}

export function createTokenReviewer(target: WebhookTarget, options: { ttlMs: number; timeoutMs: number }): TokenReviewer {
  const agent = agentFor(target);
  const cache = new AnswerCache<UserInfo | undefined>(() => options.ttlMs);
  return {
    authenticate(token) {
      // Keyed by the token's digest: the cache holds no secret.
      return cache.get(createHash('sha256').update(token).digest('hex'), async () => {
        const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } };
        const answer = TokenReviewAnswer.safeParse(await post(target, agent, body, options.timeoutMs));
        if (!answer.success) throw new WebhookUnavailable(target.url.origin + target.url.pathname, 'the answer is not a TokenReview');
        const { authenticated, user } = answer.data.status;
        if (!authenticated || !user?.username) return undefined;
        const extra = Object.fromEntries(Object.entries(user.extra ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
        return { username: user.username, uid: user.uid, groups: user.groups ?? [], extra };
      });
    },
    close: () => agent.destroy(),
  };
}
