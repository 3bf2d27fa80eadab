/**
 * Serves the REAL REST v1 API — the web process's own dispatcher (server/http/api-server.ts) over
 * the declared route table (server/api/routes.ts) — over node:http on loopback, in-process, on the test database:
 * the plugin talks to the product, without a Next build.
 */
import { apiTable } from '@/server/api/routes';
import { type Server, createServer } from 'node:http';
import { createApiServer } from '@/server/http/api-server';

export async function serveLeaseApi(): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  const api = createApiServer(apiTable);
  const s = createServer((req, res) => void api.handle(req, res));
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
