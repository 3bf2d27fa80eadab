import { and, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { clusters, networks } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgCode } from '@/server/errors';
import { findNetwork } from '@/server/ipam/networks';
import { createApiToken } from '@/server/tenancy/tokens';
import { releaseLeases } from './leases';
import type { z } from 'zod';
import type { clusterCreateInput } from './schemas';

export interface ClusterRef {
  id: string;
  projectId: string;
  name: string;
  networkId: string;
  networkName: string;
  nodeBlockPrefixV4: number;
  nodeBlockPrefixV6: number;
}

/** A cluster of the project by name, or NotFound. */
export async function findCluster(db: DbOrTx, projectId: string, name: string): Promise<ClusterRef> {
  const [c] = await db
    .select({
      id: clusters.id,
      projectId: clusters.projectId,
      name: clusters.name,
      networkId: clusters.networkId,
      networkName: networks.name,
      nodeBlockPrefixV4: clusters.nodeBlockPrefixV4,
      nodeBlockPrefixV6: clusters.nodeBlockPrefixV6,
    })
    .from(clusters)
    .innerJoin(networks, eq(networks.id, clusters.networkId))
    .where(and(eq(clusters.projectId, projectId), eq(clusters.name, name)));
  if (!c) throw new DomainError('NotFound', `cluster "${name}" not found`, 'cluster');
  return c;
}

/**
 * Registers a cluster attached to a network and, when asked, issues the cluster-scoped token its
 * nodes' CNI plugin uses (returned once).
 */
export async function createCluster(
  db: Db,
  projectId: string,
  input: z.infer<typeof clusterCreateInput> & { issueToken?: boolean },
  actor: Actor,
) {
  try {
    return await db.transaction(async (tx) => {
      const network = await findNetwork(tx, projectId, input.network);
      const [c] = await tx
        .insert(clusters)
        .values({
          projectId,
          name: input.name,
          networkId: network.id,
          description: input.description ?? '',
          nodeBlockPrefixV4: input.nodeBlockPrefixV4 ?? 26,
          nodeBlockPrefixV6: input.nodeBlockPrefixV6 ?? 120,
        })
        .returning({ id: clusters.id, name: clusters.name });
      await recordEvent(tx, { actor, projectId, action: 'cluster.create', objectType: 'cluster', objectId: c.id, objectName: c.name, after: { network: input.network } });
      const token = input.issueToken
        ? await createApiToken(tx, { projectId, name: `cluster-${c.name}`, clusterName: c.name, role: 'editor', createdBy: actor.type === 'user' ? actor.id : null }, actor)
        : null;
      return { id: c.id, name: c.name, network: network.name, token: token ? { id: token.id, secret: token.secret, prefix: token.prefix } : null };
    });
  } catch (e) {
    if (pgCode(e) === '23505') throw new DomainError('Conflict', `cluster "${input.name}" already exists`, 'name');
    throw e;
  }
}

/** Clusters of a project with lease counts per family and node count. */
export async function listClusters(db: DbOrTx, projectId: string) {
  return (await db.execute(sql`
    select c.id, c.name, n.name as network, c.description, c.created_at as "createdAt",
           c.node_block_prefix_v4 as "nodeBlockPrefixV4", c.node_block_prefix_v6 as "nodeBlockPrefixV6",
           (select count(*)::int from pod_leases l where l.cluster_id = c.id) as leases,
           (select count(distinct l.node)::int from pod_leases l where l.cluster_id = c.id) as nodes,
           (select count(*)::int from node_blocks b where b.cluster_id = c.id) as blocks
    from clusters c join networks n on n.id = c.network_id
    where c.project_id = ${projectId} order by c.name`)) as unknown as {
    id: string;
    name: string;
    network: string;
    description: string;
    createdAt: Date;
    nodeBlockPrefixV4: number;
    nodeBlockPrefixV6: number;
    leases: number;
    nodes: number;
    blocks: number;
  }[];
}

/** Every cluster across projects with lease counts (operator view). */
export async function listAllClusters(db: DbOrTx, options: { limit: number; offset: number }) {
  return (await db.execute(sql`
    select c.id, c.name, p.slug as project, n.name as network, c.created_at as "createdAt",
           (select count(*)::int from pod_leases l where l.cluster_id = c.id) as leases,
           (select count(distinct l.node)::int from pod_leases l where l.cluster_id = c.id) as nodes,
           (select count(*)::int from node_blocks b where b.cluster_id = c.id) as blocks
    from clusters c join networks n on n.id = c.network_id join projects p on p.id = c.project_id
    order by p.slug, c.name limit ${options.limit} offset ${options.offset}`)) as unknown as {
    id: string;
    name: string;
    project: string;
    network: string;
    createdAt: Date;
    leases: number;
    nodes: number;
    blocks: number;
  }[];
}

/** Deletes a cluster: releases all its leases and node blocks, revokes its tokens. */
export async function deleteCluster(db: Db, projectId: string, name: string, actor: Actor) {
  const cluster = await findCluster(db, projectId, name);
  const released = await releaseLeases(db, cluster, { all: true }, actor);
  await db.transaction(async (tx) => {
    await tx.execute(sql`update api_tokens set revoked_at = coalesce(revoked_at, now()) where project_id = ${projectId} and cluster_name = ${name}`);
    await tx.delete(clusters).where(eq(clusters.id, cluster.id));
    await recordEvent(tx, { actor, projectId, action: 'cluster.delete', objectType: 'cluster', objectId: cluster.id, objectName: name, reason: `${released.length} lease(s) released` });
  });
  return { name, releasedLeases: released.length };
}

