import { z } from 'zod';
import { env } from '@/server/env';
import { providerAdminClient } from '@/server/provider/connection';
import {
  clearSimulatorFaults,
  listSimulatorAssets,
  listSimulatorOperations,
  readSimulatorLog,
  requestSimulatorRestart,
  requireAdminClient,
  setSimulatorFaults,
  simulatorStatus,
} from '@/server/provider/qa';
import { AssetIdSchema, FaultPatchSchema, OperationKindSchema, OperationStateSchema } from '@/lib/provider-wire';
import { createTRPCRouter, noInput, platformProcedure } from '../init';

/** The simulator the web server is configured for (no tokens): shown on the console's status header. */
const simulatorUrl = () => env().SIMULATOR_URL ?? null;

/** The QA console's simulator page: inspection and fault injection (qa role; admin holds every role). */
export const simulatorRouter = createTRPCRouter({
  /** Reachable or not (with the reason), fault switches with their counters, and store figures. */
  status: platformProcedure('qa')
    .input(noInput)
    .query(() => simulatorStatus(providerAdminClient(), simulatorUrl())),

  assets: platformProcedure('qa')
    .input(z.strictObject({ limit: z.int().min(1).max(1000).default(200) }))
    .query(({ input }) => listSimulatorAssets(requireAdminClient(providerAdminClient()), input.limit)),

  /** Newest first. */
  operations: platformProcedure('qa')
    .input(
      z.strictObject({
        state: OperationStateSchema.optional(),
        kind: OperationKindSchema.optional(),
        assetId: AssetIdSchema.optional(),
        limit: z.int().min(1).max(500).default(50),
      }),
    )
    .query(({ input }) => listSimulatorOperations(requireAdminClient(providerAdminClient()), input)),

  /** Log entries after `afterSeq` (ascending), or the newest `limit`: the polling fallback of the live log. */
  log: platformProcedure('qa')
    .input(z.strictObject({ afterSeq: z.int().min(0).optional(), limit: z.int().min(1).max(500).default(100) }))
    .query(({ input }) => readSimulatorLog(requireAdminClient(providerAdminClient()), input)),

  setFaults: platformProcedure('qa')
    .input(FaultPatchSchema.refine((patch) => Object.keys(patch).length > 0, 'name at least one fault to change'))
    .mutation(({ ctx, input }) => setSimulatorFaults(ctx.db, requireAdminClient(providerAdminClient()), input, ctx.actor)),

  clearFaults: platformProcedure('qa')
    .input(noInput)
    .mutation(({ ctx }) => clearSimulatorFaults(ctx.db, requireAdminClient(providerAdminClient()), ctx.actor)),

  /** Asks the supervisor to start a stopped or crashed simulator now; poll `status` for the result. */
  restart: platformProcedure('qa')
    .input(noInput)
    .mutation(({ ctx }) => requestSimulatorRestart(ctx.db, providerAdminClient(), simulatorUrl(), ctx.actor)),
});
