import { and, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '@/db/client';
import { clusters, networks } from '@/db/schema';
import { eventActor, recordEvent, type Actor } from '@/server/audit/events';
import { currentDeadline } from '@/db/deadline';
import { query, timestampColumn } from '@/db/query';
import { DomainError, pgCode } from '@/server/errors';
import { enqueueJob } from '@/server/jobs/enqueue';
import { findNetwork } from '@/server/ipam/networks';
import { createApiToken, tokenCreatorFor } from '@/server/tenancy/tokens';
import { z } from 'zod';
import type { ClusterRef } from './leases';
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
export async function createCluster(db: DbOrTx, projectId: string, input: z.infer<typeof clusterCreateInput> & { issueToken?: boolean }, actor: Actor) {
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

const clusterCounts = { leases: z.number(), nodes: z.number(), blocks: z.number() };
const projectClusterRow = z.object({
  id: z.string(),
  name: z.string(),
  network: z.string(),
  description: z.string(),
  createdAt: timestampColumn,
  deletionTimestamp: timestampColumn.nullable(),
  nodeBlockPrefixV4: z.number(),
  nodeBlockPrefixV6: z.number(),
  ...clusterCounts,
});
const operatorClusterRow = z.object({
  id: z.string(),
  name: z.string(),
  project: z.string(),
  network: z.string(),
  createdAt: timestampColumn,
  ...clusterCounts,
});

/** Clusters of a project with lease counts per family and node count, and when a deletion was asked for. */
export async function listClusters(db: DbOrTx, projectId: string) {
  return query(
    db,
    sql`
    select c.id, c.name, n.name as network, c.description, c.created_at as "createdAt", c.deletion_timestamp as "deletionTimestamp",
           c.node_block_prefix_v4 as "nodeBlockPrefixV4", c.node_block_prefix_v6 as "nodeBlockPrefixV6",
           (select count(*)::int from pod_leases l where l.cluster_id = c.id) as leases,
           (select count(distinct l.node)::int from pod_leases l where l.cluster_id = c.id) as nodes,
           (select count(*)::int from node_blocks b where b.cluster_id = c.id) as blocks
    from clusters c join networks n on n.id = c.network_id
    where c.project_id = ${projectId} order by c.name`,
    projectClusterRow,
  );
}

/** Every cluster across projects with lease counts (operator view). */
export async function listAllClusters(db: DbOrTx, options: { limit: number; offset: number }) {
  return query(
    db,
    sql`
    select c.id, c.name, p.slug as project, n.name as network, c.created_at as "createdAt",
           (select count(*)::int from pod_leases l where l.cluster_id = c.id) as leases,
           (select count(distinct l.node)::int from pod_leases l where l.cluster_id = c.id) as nodes,
           (select count(*)::int from node_blocks b where b.cluster_id = c.id) as blocks
    from clusters c join networks n on n.id = c.network_id join projects p on p.id = c.project_id
    order by p.slug, c.name limit ${options.limit} offset ${options.offset}`,
    operatorClusterRow,
  );
}

/** Leases a step of a cluster's deletion releases at most (whole blocks; one transaction each). */
const DELETION_STEP_LEASES = 2_000;

/** What deleting a cluster answered: deleted, or accepted with what is left for the worker. */
export type ClusterDeletion =
  { done: true; name: string; releasedLeases: number } | { done: false; name: string; deletionTimestamp: Date; remaining: { leases: number; blocks: number } };

const stepResult = z.union([
  z.object({ gone: z.literal(true) }),
  z.object({ deleted: z.literal(true), released: z.number().int() }),
  z.object({ released: z.number().int(), leasesLeft: z.number().int(), blocksLeft: z.number().int() }),
]);

/**
 * Deletes a cluster of any size. In one transaction that holds the cluster's row FOR UPDATE it sets
 * the cluster's deletionTimestamp, revokes its tokens and enqueues the `cluster__delete` job (keyed
 * per cluster). Every ADD and block carve locks that row first and refuses a cluster being deleted
 * (server/cni/sql/cni_lease_add_confirmed.sql), so each one either finished before (its lease or
 * block is released here) or changes nothing. Its node blocks then go back, with their leases, in
 * bounded steps of one transaction each (server/cni/sql/cni_cluster_delete_step.sql), and the row
 * goes last. Until the row is gone its network cannot be deleted (409).
 *
 * Steps run here while the request has time left (half of its budget: db/deadline.ts; without a
 * request deadline, until done): a deletion that finishes answers `done` with the leases this call
 * released; one that does not answers `done: false`, with what is left, and the worker's job
 * finishes it (continueClusterDeletion). Asking again for a cluster being deleted does the same.
 */
export async function deleteCluster(db: DbOrTx, projectId: string, name: string, actor: Actor): Promise<ClusterDeletion> {
  const marked = await db.transaction(async (tx) => {
    const cluster = await findCluster(tx, projectId, name);
    const [row] = await query(
      tx,
      sql`select deletion_timestamp is not null as requested from clusters where id = ${cluster.id} for update`,
      z.object({ requested: z.boolean() }),
    );
    if (!row) throw new DomainError('NotFound', `cluster "${name}" not found`, 'cluster');
    const [{ deletionTimestamp }] = await query(
      tx,
      sql`update clusters set deletion_timestamp = coalesce(deletion_timestamp, now()) where id = ${cluster.id}
          returning deletion_timestamp as "deletionTimestamp"`,
      z.object({ deletionTimestamp: z.coerce.date() }),
    );
    await tx.execute(sql`update api_tokens set revoked_at = coalesce(revoked_at, now()) where project_id = ${projectId} and cluster_name = ${name}`);
    await enqueueJob(tx, 'cluster__delete', { clusterId: cluster.id }, { jobKey: `cluster-delete:${cluster.id}` });
    if (!row.requested) {
      await recordEvent(tx, {
        actor,
        projectId,
        action: 'cluster.delete.requested',
        objectType: 'cluster',
        objectId: cluster.id,
        objectName: name,
      });
    }
    return { id: cluster.id, deletionTimestamp };
  });
  const deadline = currentDeadline();
  const until = deadline ? deadline.at - deadline.budgetMs / 2 : Infinity;
  const progress = await runDeletionSteps(db, marked.id, actor, until);
  if (progress.done) return { done: true, name, releasedLeases: progress.released };
  return { done: false, name, deletionTimestamp: marked.deletionTimestamp, remaining: progress.remaining };
}

/**
 * Goes on with the deletion of cluster `clusterId` (the `cluster__delete` job) for up to `sliceMs`:
 * `done` once the cluster is gone (or was never being deleted), else what is left.
 */
export async function continueClusterDeletion(db: Db, clusterId: string, actor: Actor, sliceMs: number) {
  return runDeletionSteps(db, clusterId, actor, Date.now() + sliceMs);
}

/** Steps of a cluster's deletion until it is gone or `until` (epoch ms) has passed; at least one. */
async function runDeletionSteps(
  db: DbOrTx,
  clusterId: string,
  actor: Actor,
  until: number,
): Promise<{ done: true; released: number } | { done: false; released: number; remaining: { leases: number; blocks: number } }> {
  let released = 0;
  for (;;) {
    const args = { cluster: clusterId, maxLeases: DELETION_STEP_LEASES, actor: eventActor(actor) };
    const [{ step }] = await query(db, sql`select cni_cluster_delete_step(${JSON.stringify(args)}::jsonb) as step`, z.object({ step: stepResult }));
    if ('gone' in step) return { done: true, released };
    released += step.released;
    if ('deleted' in step) return { done: true, released };
    if (Date.now() >= until) return { done: false, released, remaining: { leases: step.leasesLeft, blocks: step.blocksLeft } };
  }
}
