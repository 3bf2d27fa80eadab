import { z } from 'zod';
import { listAllPools } from '@/server/ipam/admin';
import {
  createClaim,
  deleteClaim,
  getClaim,
  listClaims,
  listRetainedAllocations,
  releaseRetainedAllocation,
  releaseRetainedByName,
} from '@/server/ipam/claims';
import { availableBlocks } from '@/server/ipam/available';
import { getAddressMap } from '@/server/ipam/map';
import { createChildPool, createNetwork, deleteNetwork, getNetwork, listNetworks } from '@/server/ipam/networks';
import { claimCreateInput, claimListInput, networkCreateInput, poolCreateInput, resourceName, retainedListInput } from '@/server/ipam/schemas';
import { createTRPCRouter, platformProcedure, projectProcedure } from '../init';

const byName = z.strictObject({ name: resourceName });

export const ipamRouter = createTRPCRouter({
  networks: createTRPCRouter({
    list: projectProcedure('viewer')
      .input(
        z.strictObject({
          search: z.string().max(100).optional(),
          limit: z.number().int().min(1).max(200).default(50),
          offset: z.number().int().min(0).default(0),
        }),
      )
      .query(({ ctx, input }) => listNetworks(ctx.db, ctx.project.id, input)),
    get: projectProcedure('viewer')
      .input(byName)
      .query(({ ctx, input }) => getNetwork(ctx.db, ctx.project.id, input.name)),
    create: projectProcedure('editor')
      .input(networkCreateInput)
      .mutation(({ ctx, input }) => createNetwork(ctx.db, ctx.project.id, input, ctx.actor)),
    delete: projectProcedure('editor')
      .input(byName)
      .mutation(({ ctx, input }) => deleteNetwork(ctx.db, ctx.project.id, input.name, ctx.actor)),
    map: projectProcedure('viewer')
      .input(z.strictObject({ network: resourceName, pool: resourceName.optional(), view: z.string().max(64).optional() }))
      .query(({ ctx, input }) => getAddressMap(ctx.db, ctx.project.id, input)),
  }),
  pools: createTRPCRouter({
    create: projectProcedure('editor')
      .input(poolCreateInput)
      .mutation(({ ctx, input }) => createChildPool(ctx.db, ctx.project.id, input, ctx.actor)),
    /** The pool's largest free blocks (or the first of one length): each claimable by naming it as a claim's address. */
    available: projectProcedure('viewer')
      .input(
        z.strictObject({
          network: resourceName,
          pool: resourceName,
          prefixLength: z.number().int().min(0).max(128).optional(),
          limit: z.number().int().min(1).max(100).default(10),
        }),
      )
      .query(({ ctx, input }) => availableBlocks(ctx.db, ctx.project.id, input.network, input.pool, { prefixLength: input.prefixLength, limit: input.limit })),
  }),
  claims: createTRPCRouter({
    list: projectProcedure('viewer')
      .input(claimListInput)
      .query(({ ctx, input }) => listClaims(ctx.db, ctx.project.id, input)),
    get: projectProcedure('viewer')
      .input(byName)
      .query(({ ctx, input }) => getClaim(ctx.db, ctx.project.id, input.name)),
    /** The block a claim would get, computed by the real allocator and rolled back. */
    preview: projectProcedure('editor')
      .input(claimCreateInput)
      .query(({ ctx, input }) => createClaim(ctx.db, ctx.project.id, input, ctx.actor, { dryRun: true })),
    create: projectProcedure('editor')
      .input(claimCreateInput)
      .mutation(({ ctx, input }) => createClaim(ctx.db, ctx.project.id, input, ctx.actor)),
    delete: projectProcedure('editor')
      .input(byName)
      .mutation(({ ctx, input }) => deleteClaim(ctx.db, ctx.project.id, input.name, ctx.actor)),
  }),
  /** The project's own retained allocations: blocks of deleted Retain claims, which its editors may release early. */
  retained: createTRPCRouter({
    list: projectProcedure('viewer')
      .input(retainedListInput)
      .query(({ ctx, input }) => listRetainedAllocations(ctx.db, { projectId: ctx.project.id, ...input })),
    release: projectProcedure('editor')
      .input(byName)
      .mutation(({ ctx, input }) => releaseRetainedByName(ctx.db, ctx.project.id, input.name, ctx.actor)),
  }),
  admin: createTRPCRouter({
    pools: platformProcedure('operator')
      .input(
        z.strictObject({
          search: z.string().max(100).optional(),
          limit: z.number().int().min(1).max(200).default(50),
          offset: z.number().int().min(0).default(0),
        }),
      )
      .query(({ ctx, input }) => listAllPools(ctx.db, input)),
    retained: platformProcedure('operator')
      .input(z.strictObject({ limit: z.number().int().min(1).max(200).default(50), offset: z.number().int().min(0).default(0) }))
      .query(({ ctx, input }) => listRetainedAllocations(ctx.db, input)),
    releaseRetained: platformProcedure('operator')
      .input(z.strictObject({ allocationId: z.uuid() }))
      .mutation(async ({ ctx, input }) => ({ released: await releaseRetainedAllocation(ctx.db, input.allocationId, ctx.actor) })),
  }),
});
