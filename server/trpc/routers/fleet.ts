import { z } from 'zod';
import { listCatalogue } from '@/server/fleet/catalogue';
import { cancelMachine, cancelOperation } from '@/server/fleet/cancellation';
import { approveMachine, deleteMachine, getMachine, listMachines, machineTimeline, rejectMachine, requestMachine } from '@/server/fleet/machines';
import {
  acknowledgeOperation,
  approvalQueue,
  forceReleaseMachine,
  inventory,
  listCapacity,
  liveAllocations,
  releaseMachineAsOperator,
  setCapacityState,
  troubledOperations,
} from '@/server/fleet/operator';
import { machineCreateInput, machineListInput } from '@/server/fleet/schemas';
import { resourceName } from '@/server/ipam/schemas';
import { authedProcedure, createTRPCRouter, noInput, platformProcedure, projectProcedure } from '../init';

const page = z.strictObject({ limit: z.number().int().min(1).max(200).default(50), offset: z.number().int().min(0).default(0) });
const reason = z.string().trim().max(500);

export const fleetRouter = createTRPCRouter({
  /** Classes, profiles and locations with live availability (not tenant data). */
  catalogue: authedProcedure.input(noInput).query(({ ctx }) => listCatalogue(ctx.db)),
  machines: createTRPCRouter({
    list: projectProcedure('viewer')
      .input(machineListInput)
      .query(({ ctx, input }) => listMachines(ctx.db, ctx.project.id, input)),
    get: projectProcedure('viewer')
      .input(z.strictObject({ name: resourceName, id: z.uuid().optional() }))
      .query(async ({ ctx, input }) => {
        const machine = await getMachine(ctx.db, ctx.project.id, input.name, input.id);
        return { machine, timeline: await machineTimeline(ctx.db, machine.id) };
      }),
    create: projectProcedure('editor')
      .input(machineCreateInput)
      .mutation(({ ctx, input }) => requestMachine(ctx.db, ctx.project.id, input, ctx.actor)),
    delete: projectProcedure('editor')
      .input(z.strictObject({ name: resourceName }))
      .mutation(({ ctx, input }) => deleteMachine(ctx.db, ctx.project.id, input.name, ctx.actor)),
    /** Exact before the provider was asked for anything, compensated past it; refused once Ready. */
    cancel: projectProcedure('editor')
      .input(z.strictObject({ name: resourceName, reason: reason.default('') }))
      .mutation(({ ctx, input }) => cancelMachine(ctx.db, ctx.project.id, input.name, ctx.actor, input.reason || 'cancelled by the tenant')),
  }),
  queue: createTRPCRouter({
    list: platformProcedure('operator')
      .input(page)
      .query(({ ctx, input }) => approvalQueue(ctx.db, input)),
    approve: platformProcedure('operator')
      .input(z.strictObject({ id: z.uuid() }))
      .mutation(({ ctx, input }) => approveMachine(ctx.db, input.id, ctx.actor)),
    /** Approves several; each is its own decision, and the result says which succeeded. */
    approveMany: platformProcedure('operator')
      .input(z.strictObject({ ids: z.array(z.uuid()).min(1).max(100) }))
      .mutation(async ({ ctx, input }) => {
        const results = [];
        for (const id of input.ids) {
          try {
            results.push({ id, ok: true as const, name: (await approveMachine(ctx.db, id, ctx.actor)).name });
          } catch (e) {
            results.push({ id, ok: false as const, error: (e as Error).message });
          }
        }
        return results;
      }),
    reject: platformProcedure('operator')
      .input(z.strictObject({ id: z.uuid(), reason: reason.min(1, 'a reason is required') }))
      .mutation(({ ctx, input }) => rejectMachine(ctx.db, input.id, input.reason, ctx.actor)),
  }),
  inventory: platformProcedure('operator')
    .input(noInput)
    .query(({ ctx }) => inventory(ctx.db)),
  capacity: createTRPCRouter({
    list: platformProcedure('operator')
      .input(
        page.extend({
          state: z.enum(['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired']).optional(),
          location: z.string().max(63).optional(),
          search: z.string().max(100).optional(),
        }),
      )
      .query(({ ctx, input }) => listCapacity(ctx.db, input)),
    /** `returnToPool` re-runs the cleanup through the provider (answers Cleaning); `force` (returnToPool only, a reason required) skips it, audited. */
    act: platformProcedure('operator')
      .input(
        z
          .strictObject({
            id: z.uuid(),
            action: z.enum(['quarantine', 'returnToPool', 'retire']),
            reason: reason.default(''),
            force: z.boolean().default(false),
          })
          .refine((b) => !b.force || b.action === 'returnToPool', { path: ['force'], message: 'only a return to the pool can be forced' })
          .refine((b) => !b.force || b.reason.length > 0, { path: ['reason'], message: 'a reason is required to force a return to the pool' }),
      )
      .mutation(({ ctx, input }) => setCapacityState(ctx.db, input.id, input.action, input.reason, ctx.actor, { force: input.force })),
  }),
  allocations: createTRPCRouter({
    list: platformProcedure('operator')
      .input(page)
      .query(({ ctx, input }) => liveAllocations(ctx.db, input)),
    release: platformProcedure('operator')
      .input(z.strictObject({ machineId: z.uuid(), reason: reason.default('') }))
      .mutation(({ ctx, input }) => releaseMachineAsOperator(ctx.db, input.machineId, input.reason, ctx.actor)),
    forceRelease: platformProcedure('operator')
      .input(z.strictObject({ machineId: z.uuid(), reason: reason.min(1, 'a reason is required') }))
      .mutation(({ ctx, input }) => forceReleaseMachine(ctx.db, input.machineId, input.reason, ctx.actor)),
  }),
  operations: createTRPCRouter({
    /** Operations needing attention; resolved and acknowledged ones leave the list. */
    list: platformProcedure('operator')
      .input(z.strictObject({ limit: z.number().int().min(1).max(200).default(50) }))
      .query(({ ctx, input }) => troubledOperations(ctx.db, input)),
    acknowledge: platformProcedure('operator')
      .input(z.strictObject({ id: z.string().min(1).max(200), note: reason.min(1, 'a note is required') }))
      .mutation(({ ctx, input }) => acknowledgeOperation(ctx.db, input.id, input.note, ctx.actor)),
    /** Cancels an in-flight operation (its machine's request) by its kind's boundary; a cleanup is not cancellable. */
    cancel: platformProcedure('operator')
      .input(z.strictObject({ id: z.string().min(1).max(200), reason: reason.min(1, 'a reason is required') }))
      .mutation(({ ctx, input }) => cancelOperation(ctx.db, input.id, input.reason, ctx.actor)),
  }),
});
