/**
 * Query inputs shared by the server pages (prefetch) and the client views: the same object is the
 * same cache entry, so the first render is hydrated, not refetched.
 */
export const CLAIM_LOG_PAGE_SIZE = 25;
export const INCREASES_PAGE_SIZE = 20;
export const ADMIN_PAGE_SIZE = 25;

export type ClaimLogStatus = '' | 'Granted' | 'Released' | 'Denied';

export function claimLogInput(project: string, offset = 0, status: ClaimLogStatus = '') {
  return { project, limit: CLAIM_LOG_PAGE_SIZE, offset, status: status || undefined };
}

export function increasesInput(project: string) {
  return { project, limit: INCREASES_PAGE_SIZE, offset: 0 };
}

export function queueInput(status: 'Pending' | 'Approved' | 'Rejected' = 'Pending', offset = 0) {
  return { status, limit: ADMIN_PAGE_SIZE, offset };
}

export function adminGrantsInput(project = '', offset = 0) {
  return { project: project || undefined, limit: ADMIN_PAGE_SIZE, offset };
}

export function adminBucketsInput(flagged = true, search = '', offset = 0) {
  return { flagged, search: search || undefined, limit: ADMIN_PAGE_SIZE, offset };
}
