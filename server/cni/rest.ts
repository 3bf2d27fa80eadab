import { DomainError, isDomainError } from '@/server/errors';
import { env } from '@/server/env';
import { readJson, TOKEN_PROJECT } from '@/server/http/rest';
import type { ApiRequest } from '@/server/http/buffered';
import { resourceName } from '@/server/ipam/schemas';
import { roleAtLeast } from '@/server/tenancy/roles';
import type { GoneClusterToken, TokenPrincipal } from '@/server/tenancy/tokens';
import type { DbOrTx } from '@/db/client';
import { findCluster } from './clusters';
import { leaseKey } from './schemas';

/**
 * The cluster a CNI call acts on: it must belong to the token's project, and a cluster-scoped
 * token may act only for its own cluster (any other is NotFound, revealing nothing).
 */
export async function clusterForToken(db: DbOrTx, principal: TokenPrincipal, name: string) {
  // A name no cluster can have (the path segment is untrusted text, e.g. with a NUL that PostgreSQL
  // refuses) is simply not found: checked before any query.
  const valid = resourceName.safeParse(name).success;
  if (!valid || (principal.clusterName && principal.clusterName !== name)) throw new DomainError('NotFound', `cluster "${name}" not found`, 'cluster');
  // A cluster token's cluster came with the token (server/tenancy/tokens.ts).
  return principal.cluster?.name === name ? principal.cluster : findCluster(db, principal.projectId, name);
}

/**
 * The cluster a CNI DEL acts on, as `clusterForToken`, or null when the token may act for a
 * cluster of that name but none exists (deleted, or never registered): the DEL then holds nothing
 * and succeeds. Another cluster's token still gets NotFound.
 */
export async function clusterForDel(db: DbOrTx, principal: TokenPrincipal, name: string) {
  if (!resourceName.safeParse(name).success || (principal.clusterName && principal.clusterName !== name)) return clusterForToken(db, principal, name);
  try {
    return await clusterForToken(db, principal, name);
  } catch (e) {
    if (isDomainError(e) && e.code === 'NotFound' && e.field === 'cluster') return null;
    throw e;
  }
}

/** Seconds a lease is spared by GC after it was created (an ADD may still be in flight). */
export function gcGraceSeconds(): number {
  return env().CNI_GC_GRACE_SECONDS;
}

/**
 * The CNI DEL of a revoked cluster token whose cluster is gone (server/http/rest.ts `goneCluster`):
 * a deleted cluster's leases were all released with it, so the attachment holds nothing and the
 * DEL succeeds (`released: 0`) — the container runtime can tear its pods down instead of retrying
 * forever. It reads only the token and the body and changes nothing. For the token's own project
 * and cluster in the path and an editor token only; anything else keeps the 401.
 */
export async function delOfGoneCluster(token: GoneClusterToken, { req, params }: { req: ApiRequest; params: { project: string; cluster: string } }) {
  const ownPath = (params.project === token.projectSlug || params.project === TOKEN_PROJECT) && params.cluster === token.clusterName;
  if (!ownPath || !roleAtLeast(token.role, 'editor')) return undefined;
  leaseKey.parse(await readJson(req));
  return { released: 0 };
}
