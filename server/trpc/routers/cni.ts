import { z } from 'zod';
import { createCluster, deleteCluster, listAllClusters, listClusters } from '@/server/cni/clusters';
import { cniEvents, listLeases, podUsage } from '@/server/cni/leases';
import { clusterCreateInput } from '@/server/cni/schemas';
import { findNetwork } from '@/server/ipam/networks';
import { resourceName } from '@/server/ipam/schemas';
import { createTRPCRouter, platformProcedure, projectProcedure } from '../init';

export const cniRouter = createTRPCRouter({
  clusters: createTRPCRouter({
    list: projectProcedure('viewer').query(({ ctx }) => listClusters(ctx.db, ctx.project.id)),
    /** Registers a cluster and returns its nodes' token once. */
    create: projectProcedure('editor')
      .input(clusterCreateInput)
      .mutation(({ ctx, input }) => createCluster(ctx.db, ctx.project.id, { ...input, issueToken: true }, ctx.actor)),
    delete: projectProcedure('editor')
      .input(z.strictObject({ name: resourceName }))
      .mutation(({ ctx, input }) => deleteCluster(ctx.db, ctx.project.id, input.name, ctx.actor)),
  }),
  leases: createTRPCRouter({
    list: projectProcedure('viewer')
      .input(
        z.strictObject({
          cluster: resourceName.optional(),
          search: z.string().max(100).optional(),
          limit: z.number().int().min(1).max(200).default(50),
          offset: z.number().int().min(0).default(0),
        }),
      )
      .query(({ ctx, input }) => listLeases(ctx.db, ctx.project.id, input)),
  }),
  /** Pod address use per cluster, node and namespace (optionally for one network). */
  usage: projectProcedure('viewer')
    .input(z.strictObject({ network: resourceName.optional() }))
    .query(async ({ ctx, input }) => {
      const networkId = input.network ? (await findNetwork(ctx.db, ctx.project.id, input.network)).id : undefined;
      return podUsage(ctx.db, ctx.project.id, { networkId });
    }),
  /** CHECK mismatches and GC runs. */
  events: projectProcedure('viewer').query(({ ctx }) => cniEvents(ctx.db, ctx.project.id)),
  admin: createTRPCRouter({
    clusters: platformProcedure('operator')
      .input(z.strictObject({ limit: z.number().int().min(1).max(200).default(100), offset: z.number().int().min(0).default(0) }))
      .query(({ ctx, input }) => listAllClusters(ctx.db, input)),
  }),
});
