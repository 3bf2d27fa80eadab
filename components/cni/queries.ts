/**
 * Query inputs shared by the pod-address views (the same object means the same cache entry, so a
 * server prefetch, if a page adds one, hydrates the first render instead of refetching).
 */

export const LEASES_PAGE_SIZE = 25;
export const TOP_ROWS = 20;
export const ADMIN_CLUSTERS_PAGE_SIZE = 25;

export function podUsageInput(project: string, network?: string) {
  return network ? { project, network } : { project };
}

export function leasesListInput(project: string, cluster: string | undefined, search: string, offset = 0) {
  return { project, cluster: cluster || undefined, search: search.trim() || undefined, limit: LEASES_PAGE_SIZE, offset };
}

/** One more row than shown: the operator list has no total, the extra row says a next page exists. */
export function adminClustersInput(offset = 0) {
  return { limit: ADMIN_CLUSTERS_PAGE_SIZE + 1, offset };
}
