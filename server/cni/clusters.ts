import { and, eq, sql } from 'drizzle-orm';
import { rawTimestamp, type Db, type DbOrTx } from '@/db/client';
import { clusters, networks } from '@/db/schema';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError, pgCode } from '@/server/errors';
import { findNetwork } from '@/server/ipam/networks';
import { createApiToken, tokenCreatorFor } from '@/server/tenancy/tokens';
import { releaseLeasesIn, type ClusterRef } from './leases';
import type { z } from 'zod';
import type { clusterCreateInput } from './schemas';

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
 * nodes' CNI plugin uses (returned once). That token rests on the rights of whoever registered the
 * cluster (for a project token: that token's creator, `tokenCreatorFor`).
 */
export async function createCluster(db: Db, projectId: string, input: z.infer<typeof clusterCreateInput> & { issueToken?: boolean }, actor: Actor) {
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
      await recordEvent(tx, {
        actor,
        projectId,
        action: 'cluster.create',
        objectType: 'cluster',
        objectId: c.id,
        objectName: c.name,
        after: { network: input.network },
      });
      const token = input.issueToken
        ? await createApiToken(
            tx,
            { projectId, name: `cluster-${c.name}`, clusterName: c.name, role: 'editor', createdBy: await tokenCreatorFor(tx, actor) },
            actor,
          )
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
  const rows = (await db.execute(sql`
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
  return rows.map((r) => ({ ...r, createdAt: rawTimestamp(r.createdAt) }));
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

/**
 * Deletes a cluster: revokes its tokens, releases all its leases, returns all its node blocks to
 * their pools and deletes it, in one transaction that holds the cluster's row FOR UPDATE. Every ADD
 * and block carve locks that row first (server/cni/sql/cni_lease_add_confirmed.sql), so each one either finished before (and
 * its lease or block is released here) or runs after and finds the cluster gone (404, or 401 for
 * the cluster's revoked token). Once this returns, the cluster holds nothing.
 */
export async function deleteCluster(db: Db, projectId: string, name: string, actor: Actor) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const cluster = await findCluster(tx, projectId, name);
        const [locked] = await tx.execute(sql`select id from clusters where id = ${cluster.id} for update`);
        if (!locked) throw new DomainError('NotFound', `cluster "${name}" not found`, 'cluster');
        await tx.execute(sql`update api_tokens set revoked_at = coalesce(revoked_at, now()) where project_id = ${projectId} and cluster_name = ${name}`);
        const released = await releaseLeasesIn(tx, cluster, { all: true }, actor, 'cni.del');
        // Blocks that held no lease (within their grace period, or carved ahead of need) go back too.
        await tx.execute(
          sql`select cni_node_block_return(b) from unnest(array(select pool_id from node_blocks where cluster_id = ${cluster.id} order by pool_id)) as b`,
        );
        // No block can hold an address now, and no carve can add one (the row lock); one left would outlive the cluster in its pool.
        const [{ left }] = (await tx.execute(sql`select count(*)::int as left from node_blocks where cluster_id = ${cluster.id}`)) as unknown as {
          left: number;
        }[];
        if (left > 0) throw new Error(`cluster ${cluster.id}: ${left} node block(s) still hold addresses after all its leases were released`);
        await tx.delete(clusters).where(eq(clusters.id, cluster.id));
        await recordEvent(tx, {
          actor,
          projectId,
          action: 'cluster.delete',
          objectType: 'cluster',
          objectId: cluster.id,
          objectName: name,
          reason: `${released.length} lease(s) released`,
        });
        return { name, releasedLeases: released.length };
      });
    } catch (e) {
      // A deadlock victim (its releases met a DEL's or a block return's on the same pool rows) was undone whole: run it again.
      if (pgCode(e) === '40P01' && attempt < 3) continue;
      throw e;
    }
  }
}
