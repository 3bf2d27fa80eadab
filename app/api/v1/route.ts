import { servedGroups, servedRoutes } from '@/server/api/catalog';

export const dynamic = 'force-dynamic';

/** Discovery: only the groups (and their routes) this deployment actually serves. */
export function GET() {
  return Response.json({
    version: 'v1',
    groups: servedGroups().map((g) => ({
      name: g.name,
      description: g.description,
      routes: servedRoutes()
        .filter((r) => r.group === g.name)
        .map((r) => `${r.method} ${r.path}`),
    })),
    openapi: '/api/v1/openapi.json',
  });
}
