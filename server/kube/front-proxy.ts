import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/**
 * Front-proxy (request header) authentication, as k8s.io/apiserver's `requestheader` authenticator
 * does it: a request whose TLS client certificate chains to REQUESTHEADER_CLIENT_CA_FILE (the HTTPS
 * listener asks for client certificates and verifies them against that CA only) and, when
 * REQUESTHEADER_ALLOWED_NAMES is set, whose subject CN is one of those names, comes from the
 * aggregator (Milo's or kube-apiserver's): the user, groups and extras it names in its headers are
 * who acts. The same headers from any other client are ignored: a header alone never authenticates.
 */

export interface FrontProxyConfig {
  /** Names allowed as the client certificate's CN; empty: any certificate of the CA. */
  allowedNames: string[];
  /** Lower-case header names, the first one present naming the user. */
  usernameHeaders: string[];
  groupHeaders: string[];
  extraPrefixes: string[];
}

/** Who acts, as an authenticator tells it (front proxy or TokenReview). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  /** Keys lower-cased (`iam.miloapis.com/parent-name`), each with its values. */
  extra: Record<string, string[]>;
}

/** The extras Milo puts on a request made in a project's or an organization's control plane. */
export const PARENT_TYPE = 'iam.miloapis.com/parent-type';
export const PARENT_NAME = 'iam.miloapis.com/parent-name';

/** Why a client certificate was not taken as the front proxy's (for logs and the 401's message). */
export type FrontProxyRefusal = 'no-certificate' | 'untrusted' | 'name-not-allowed' | 'no-user';

/**
 * The front proxy's user when `req` came from it; a refusal when it did not (no client
 * certificate, one that does not chain to the requestheader CA, a CN not allowed, no user header).
 * The listener verified the chain (`socket.authorized`); this checks the name and reads the headers.
 */
export function frontProxyUser(req: IncomingMessage, config: FrontProxyConfig): UserInfo | FrontProxyRefusal {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return 'no-certificate';
  const peer = socket.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) return 'no-certificate';
  if (!socket.authorized) return 'untrusted';
  if (config.allowedNames.length > 0) {
    const cn = peer.subject?.CN;
    const names = Array.isArray(cn) ? cn : cn ? [cn] : [];
    if (!names.some((n) => config.allowedNames.includes(n))) return 'name-not-allowed';
  }
  const headers = req.headersDistinct;
  const username = config.usernameHeaders.map((h) => headers[h]?.find((v) => v.length > 0)).find((v) => v !== undefined);
  if (!username) return 'no-user';
  const groups = config.groupHeaders.flatMap((h) => headers[h] ?? []).filter((g) => g.length > 0);
  const extra: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(headers)) {
    const prefix = config.extraPrefixes.find((p) => name.startsWith(p));
    if (!prefix || !values) continue;
    const key = unescapeExtraKey(name.slice(prefix.length));
    if (!key) continue;
    (extra[key] ??= []).push(...values);
  }
  return { username, groups, extra };
}

/** An extra's key as the header carries it: percent-encoded (`iam.miloapis.com%2fparent-name`), compared lower-case. */
function unescapeExtraKey(raw: string): string {
  try {
    return decodeURIComponent(raw).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/** What a request acts on, from its caller's extras: a project, an organization, or neither (platform-wide kinds only). */
export type Parent = { type: 'Project'; name: string } | { type: 'Organization'; name: string } | { type: 'none' };

/**
 * The parent named by Milo's extras. Types are matched as Milo spells them (`Project`,
 * `Organization`, case-insensitive); two different values, or a type Meridian does not know, is
 * an error naming the extra.
 */
export function parentOf(user: UserInfo): Parent | { error: string } {
  const types = [...new Set(user.extra[PARENT_TYPE] ?? [])];
  const names = [...new Set(user.extra[PARENT_NAME] ?? [])];
  if (types.length === 0 && names.length === 0) return { type: 'none' };
  if (types.length !== 1 || names.length !== 1 || !names[0]) {
    return { error: `the extras ${PARENT_TYPE} and ${PARENT_NAME} must carry one value each (got ${types.length} and ${names.length})` };
  }
  const type = types[0].toLowerCase();
  if (type === 'project') return { type: 'Project', name: names[0] };
  if (type === 'organization') return { type: 'Organization', name: names[0] };
  return { error: `${PARENT_TYPE}: unsupported parent type ${JSON.stringify(types[0])} (Project or Organization)` };
}
