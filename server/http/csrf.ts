/**
 * CSRF protection for the console's state-changing calls (tRPC mutations are POSTs): the request
 * must carry the `x-meridian-csrf` header, which a cross-site form or simple request cannot set
 * without a CORS preflight we never grant, and when the browser says where it came from
 * (`Sec-Fetch-Site`/`Origin`), that must be this site. Returns a 403 response, or null to proceed.
 */
export function checkCsrf(req: Request): Response | null {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return null;
  const fetchSite = req.headers.get('sec-fetch-site');
  const origin = req.headers.get('origin');
  const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
  const crossSite = (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none') ||
    (origin && host && new URL(origin).host !== host);
  if (req.headers.get('x-meridian-csrf') !== '1' || crossSite) {
    return Response.json({ error: { code: 'Forbidden', message: 'cross-site request refused (CSRF check)' } }, { status: 403 });
  }
  return null;
}
