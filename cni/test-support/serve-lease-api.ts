/**
 * Serves the REAL lease API route handlers (app/api/v1/projects/[project]/clusters/[cluster]/cni/
 * [command]) over node:http on loopback, in-process, on the test database: the plugin talks to the
 * product, without a Next build.
 */
import { type Server, createServer } from 'node:http';
import * as cniRoute from '@/app/api/v1/projects/[project]/clusters/[cluster]/cni/[command]/route';

export function serveLeaseApi(): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  const s = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const m = /^\/api\/v1\/projects\/([^/]+)\/clusters\/([^/]+)\/cni\/([^/]+)$/.exec(url.pathname);
      if (!m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { code: 'NotFound', message: 'no route' } }));
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(url, { method: req.method, headers, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined });
      const params = Promise.resolve({ project: decodeURIComponent(m[1]), cluster: decodeURIComponent(m[2]), command: m[3] });
      const response = await (req.method === 'POST' ? cniRoute.POST : cniRoute.GET)(request, { params });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (e) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'Internal', message: String(e) } }));
    }
  });
  return new Promise((resolve) =>
    s.listen(0, '127.0.0.1', () =>
      resolve({
        server: s,
        url: `http://127.0.0.1:${(s.address() as { port: number }).port}`,
        close: () => {
          s.closeAllConnections();
          return new Promise<void>((done) => s.close(() => done()));
        },
      }),
    ),
  );
}
