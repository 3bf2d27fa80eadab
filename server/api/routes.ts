import { capacityRoutes } from '@/server/capacity/rest';
import { cniRoutes } from '@/server/cni/rest';
import { fleetRoutes, metalApi } from '@/server/fleet/rest';
import { ipamApi, ipamRoutes } from '@/server/ipam/rest';
import { quotaApi, quotaRoutes } from '@/server/quota/rest';
import { coreApi, tenancyRoutes } from './tenancy';
import type { RestRoute } from '@/server/http/declare';
import { routeTable } from '@/server/http/route-table';

/**
 * REST v1: every domain's routes (server/<domain>/rest.ts, each route declared there once; tenancy's,
 * whose project creation and deletion are workflows, in ./tenancy.ts) in one
 * table, checked when this module loads (route-table.ts). The REST server serves it, `GET /api/v1`
 * and `GET /api/v1/openapi.json` describe it, the request metrics label by its patterns, and the
 * isolation and fuzz suites enumerate it.
 */
export const apiTable = routeTable(
  [coreApi, ipamApi, quotaApi, metalApi],
  [...tenancyRoutes, ...ipamRoutes, ...cniRoutes, ...quotaRoutes, ...fleetRoutes, ...capacityRoutes],
);

/** Every declared route. */
export const apiRoutes: readonly RestRoute[] = apiTable.routes;
