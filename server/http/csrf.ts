/**
 * CSRF protection for the console's state-changing calls (tRPC mutations are POSTs): the request
 * must carry the `x-meridian-csrf` header, which a cross-site form or simple request cannot set
 * without a CORS preflight we never grant, and when the browser says where it came from
 * (`Sec-Fetch-Site`/`Origin`), that must be this site. An `Origin` that names no site — `null`
 * (sandboxed frames, some redirects, `file:` pages) or anything that is not a URL — is not this
 * site. Returns a 403 response, or null to proceed.
 */
export function checkCsrf(req: Request): Response | null {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return null;
  const fetchSite = req.headers.get('sec-fetch-site');
  const origin = req.headers.get('origin');
  const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
  const originSite = origin === null ? null : originHost(origin);
  const crossSite =
    (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none') ||
    originSite === undefined ||
    (originSite !== null && host !== null && originSite !== host);
  if (req.headers.get('x-meridian-csrf') !== '1' || crossSite) {
    return Response.json({ error: { code: 'Forbidden', message: 'cross-site request refused (CSRF check)' } }, { status: 403 });
  }
  return null;
}

/** The host an `Origin` header names, or undefined for `null` and anything that does not parse. */
function originHost(origin: string): string | undefined {
  if (!URL.canParse(origin)) return undefined;
  const host = new URL(origin).host;
  return host === '' ? undefined : host;
}
