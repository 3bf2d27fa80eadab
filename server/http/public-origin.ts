/**
 * The origin the console is reached at, for the URLs sign-in and sign-out redirect to. Next builds a
 * route handler's request URL from the address the server is bound to (`HOSTNAME`, by default
 * `0.0.0.0`), which is no address a browser should be sent to. So: `AUTH_URL`'s origin when it is
 * set (behind a proxy that rewrites the host), otherwise the request's own `Host` with the
 * request's scheme; the bound address only when the request names no usable host.
 */
export function publicOrigin(requestUrl: string, host: string | null, authUrl: string | undefined): string {
  if (authUrl) return new URL(authUrl).origin;
  const url = new URL(requestUrl);
  if (host && HOST.test(host) && URL.canParse(`${url.protocol}//${host}`)) return new URL(`${url.protocol}//${host}`).origin;
  return url.origin;
}

/** `name`, `name:port`, `192.0.2.1:3000`, `[2001:db8::1]:3000`: a host and nothing else (no path, user or spaces). */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** `url` with its origin replaced by `origin` (path and query kept). */
export function atOrigin(url: string, origin: string): string {
  const u = new URL(url);
  return `${origin}${u.pathname}${u.search}`;
}
