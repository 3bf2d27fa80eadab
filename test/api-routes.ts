import { loadRoutes } from '@/server/http/route-table';

/** Every exported handler of every route file under app/api/v1 (discovery and OpenAPI aside), as `METHOD /path`. */
export async function routeFileHandlers(): Promise<string[]> {
  return (await loadRoutes(process.cwd()))
    .filter((r) => r.openApiPath !== '/api/v1' && r.openApiPath !== '/api/v1/openapi.json')
    .flatMap((r) => Object.keys(r.handlers).map((m) => `${m} ${r.openApiPath}`));
}
