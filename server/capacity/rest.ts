import { z } from 'zod';
import { DomainError } from '@/server/errors';
import { projectReadRoute, type RestRoute } from '@/server/http/declare';
import { ipamApi } from '@/server/ipam/rest';
import { resourceName } from '@/server/ipam/schemas';
import { quotaApi } from '@/server/quota/rest';
import { objectHistory, objectIdByName, resolveRange, type SeriesHistory } from './history';

const rangeQuery = z.object({
  from: z.string().max(40).optional().describe('start: RFC 3339, epoch seconds or -<duration> (e.g. -7d); default a day before `to`'),
  to: z.string().max(40).optional().describe('end: as `from`; default now'),
  step: z.string().max(12).optional().describe('seconds between points, or 5m, 1h, 1d; default: at most 500 points'),
});

const historyDoc = (kind: string, name: string, range: ReturnType<typeof resolveRange>, series: SeriesHistory[]) => ({
  apiVersion: 'v1',
  kind: 'UtilizationHistory',
  metadata: { name, object: kind },
  spec: { from: range.from.toISOString(), to: range.to.toISOString(), step: range.step, sourceStep: range.source },
  items: series,
});

/**
 * Utilization history over REST: the series the worker samples (server/capacity), with their
 * current value and forecast. Read by the project's tokens (viewer and up) or an operator token.
 */
export const capacityRoutes: RestRoute[] = [
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/networks/{name}/utilization',
    group: ipamApi,
    summary:
      "A network's utilization over time, per family (points: peak used and capacity per step), its current counters and the time to exhaustion forecast from the last 7 days",
    query: rangeQuery,
    handler: async ({ db, project, params, query }) => {
      const range = resolveRange(query());
      const name = resourceName.parse(params.name);
      const id = await objectIdByName(db, project.id, 'network', name);
      return historyDoc('Network', name, range, await objectHistory(db, project.id, id, ['network'], range));
    },
  }),
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/clusters/{cluster}/utilization',
    group: ipamApi,
    summary: "A cluster's pod addresses (of its node blocks) and node blocks (of its network) over time, per family, with forecasts",
    query: rangeQuery,
    handler: async ({ db, project, params, query, principal }) => {
      const range = resolveRange(query());
      const name = params.cluster;
      // A cluster token reads its own cluster only (any other is NotFound, as on the CNI routes).
      const valid = resourceName.safeParse(name).success;
      if (!valid || (principal.kind === 'project' && principal.clusterName && principal.clusterName !== name))
        throw new DomainError('NotFound', `cluster "${name}" not found`, 'cluster');
      const id = await objectIdByName(db, project.id, 'cluster', name);
      return historyDoc('Cluster', name, range, await objectHistory(db, project.id, id, ['cluster-pods', 'cluster-blocks'], range));
    },
  }),
  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}/allowancebuckets/utilization',
    group: quotaApi,
    summary: "The project's allowance buckets over time (allocated against limit), with forecasts; ?resourceType= picks one",
    query: rangeQuery.extend({ resourceType: z.string().max(200).optional().describe('one resource type, e.g. ipam.miloapis.com/ipclaims') }),
    handler: async ({ db, project, query }) => {
      const q = query();
      const range = resolveRange(q);
      const series = await objectHistory(db, project.id, project.id, ['bucket'], range);
      return historyDoc('Project', project.slug, range, q.resourceType ? series.filter((s) => s.resourceType === q.resourceType) : series);
    },
  }),
];
