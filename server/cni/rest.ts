import { DomainError } from '@/server/errors';
import { resourceName } from '@/server/ipam/schemas';
import type { TokenPrincipal } from '@/server/tenancy/tokens';
import type { DbOrTx } from '@/db/client';
import { findCluster } from './clusters';

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

/** Seconds a lease is spared by GC after it was created (an ADD may still be in flight). */
export function gcGraceSeconds(): number {
  const v = Number(process.env.CNI_GC_GRACE_SECONDS ?? 60);
  return Number.isFinite(v) && v >= 0 ? v : 60;
}
