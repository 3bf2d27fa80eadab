/**
 * Query inputs shared by the server pages (prefetch) and the client views (the same object means
 * the same cache entry, so the first render is hydrated, not refetched).
 */

export const NETWORKS_PAGE_SIZE = 20;
export const CLAIMS_PAGE_SIZE = 25;
export const ADMIN_PAGE_SIZE = 25;
export const DASHBOARD_NETWORKS = 5;

export function networksListInput(project: string, offset = 0, search = '') {
  return { project, limit: NETWORKS_PAGE_SIZE, offset, search: search || undefined };
}

export function dashboardNetworksInput(project: string) {
  return { project, limit: DASHBOARD_NETWORKS, offset: 0 };
}

export type ClaimSort = 'name' | 'createdAt' | 'cidr';
export interface ClaimsQueryState {
  search: string;
  family: '' | '4' | '6';
  sort: ClaimSort;
  order: 'asc' | 'desc';
  offset: number;
}
export const initialClaimsState: ClaimsQueryState = { search: '', family: '', sort: 'createdAt', order: 'desc', offset: 0 };

export function claimsListInput(project: string, network: string, s: ClaimsQueryState = initialClaimsState) {
  return {
    project,
    network,
    search: s.search.trim() || undefined,
    family: s.family === '4' ? (4 as const) : s.family === '6' ? (6 as const) : undefined,
    sort: s.sort,
    order: s.order,
    limit: CLAIMS_PAGE_SIZE,
    offset: s.offset,
  };
}

export function adminPoolsInput(offset = 0, search = '') {
  return { limit: ADMIN_PAGE_SIZE, offset, search: search.trim() || undefined };
}

/** One more row than shown: the retained list has no total, the extra row says a next page exists. */
export function adminRetainedInput(offset = 0) {
  return { limit: ADMIN_PAGE_SIZE + 1, offset };
}

/** A network's retained allocations: few by nature (each is a deleted Retain claim), one page. */
export function retainedListInput(project: string, network: string) {
  return { project, network, limit: 200, offset: 0 };
}
