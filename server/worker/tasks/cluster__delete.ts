import { z } from 'zod';
import { systemActor } from '@/server/audit/events';
import { continueClusterDeletion } from '@/server/cni/clusters';
import { enqueueJob } from '@/server/jobs/enqueue';
import type { TaskContext } from '../types';

const payload = z.object({ clusterId: z.uuid() });

/** How long one run goes on before it hands the rest to its successor (other jobs get the worker meanwhile). */
const SLICE_MS = 10_000;

/**
 * Finishes a cluster's deletion in bounded steps (server/cni/clusters.ts deleteCluster enqueues it
 * in the transaction that marks the cluster). Level-triggered: each run goes on from what is left,
 * and a run that used its slice enqueues the next one under the same key.
 */
export async function clusterDelete(raw: unknown, { db }: TaskContext) {
  const { clusterId } = payload.parse(raw);
  const progress = await continueClusterDeletion(db, clusterId, systemActor('worker'), SLICE_MS);
  if (!progress.done) await enqueueJob(db, 'cluster__delete', { clusterId }, { jobKey: `cluster-delete:${clusterId}` });
}
