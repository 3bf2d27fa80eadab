import { type BlockList, isIP } from 'node:net';

/**
 * The header through which the web process hands the client address it resolved to next-auth
 * (sign-in throttling, the session's recorded address). The web process overwrites it on every
 * auth request, so a value a client sends is never believed.
 */
export const CLIENT_ADDRESS_HEADER = 'x-meridian-client-address';

/** `::ffff:192.0.2.1` (an IPv4 client on a dual-stack socket) is `192.0.2.1`. */
function normalize(address: string): string {
  const a = address.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped ? mapped[1] : a;
}

function isTrusted(trusted: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The client a request comes from: the socket's peer, unless that peer is a trusted proxy, in
 * which case `X-Forwarded-For` is read from the right (each proxy appends the address it received
 * from), skipping trusted proxies, and the first address not trusted is the client. Entries an
 * untrusted party wrote (left of the first untrusted address) are never believed; a malformed entry
 * stops the walk at the last trusted hop.
 */
export function clientAddress(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, trusted: BlockList): string {
  let client = normalize(remoteAddress ?? 'unknown');
  if (!isTrusted(trusted, client) || !forwardedFor) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map(normalize).filter(Boolean);
  for (let i = hops.length - 1; i >= 0 && isTrusted(trusted, client); i--) {
    if (!isIP(hops[i])) break;
    client = hops[i];
  }
  return client;
}

/**
 * Whether the client reached us over https: the connection itself is TLS, or its peer is a trusted
 * proxy whose `X-Forwarded-Proto` says `https` (the first entry: the scheme the proxy facing the
 * client received). The header from anyone else is ignored, as is a value that is not a scheme.
 */
export function arrivedOverHttps(
  encrypted: boolean,
  remoteAddress: string | undefined,
  forwardedProto: string | string[] | undefined,
  trusted: BlockList,
): boolean {
  if (encrypted) return true;
  if (!forwardedProto || !isTrusted(trusted, normalize(remoteAddress ?? ''))) return false;
  const first = (Array.isArray(forwardedProto) ? forwardedProto[0] : forwardedProto).split(',')[0];
  return first.trim().toLowerCase() === 'https';
}
