/**
 * The REST v1 surface in one table: every route, its group and its contract. `GET /api/v1`
 * advertises the groups served, `GET /api/v1/openapi.json` is generated from this table, and the
 * isolation tests enumerate it (and check every route file under app/api/v1 appears here).
 */
export interface ApiRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path, e.g. `/api/v1/projects/{project}/networks/{name}`. */
  path: string;
  group: string;
  summary: string;
  /** Minimum token role. */
  minRole: 'viewer' | 'editor';
  /** JSON schema of the request body, where there is one. */
  requestBody?: Record<string, unknown>;
  query?: { name: string; description: string; schema: Record<string, unknown> }[];
}

export interface ApiGroup {
  name: string;
  description: string;
  /** Whether this deployment serves the group (a module switched off by configuration is absent). */
  enabled: () => boolean;
}

export const apiGroups: ApiGroup[] = [{ name: 'core', description: 'Identity of the calling token', enabled: () => true }];

export const apiRoutes: ApiRoute[] = [
  { method: 'GET', path: '/api/v1/whoami', group: 'core', summary: 'The project (and cluster) the presented token acts for', minRole: 'viewer' },
];

export function servedGroups(): ApiGroup[] {
  return apiGroups.filter((g) => g.enabled());
}

export function servedRoutes(): ApiRoute[] {
  const served = new Set(servedGroups().map((g) => g.name));
  return apiRoutes.filter((r) => served.has(r.group));
}
