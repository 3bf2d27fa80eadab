import { z } from 'zod';
import { auditQuotaBooks, lastAudit } from '@/server/quota/audit';
import { listAllBuckets, listBuckets, listClaimLog } from '@/server/quota/buckets';
import { createGrant, deleteGrant, listGrants, updateGrant } from '@/server/quota/grants';
import { projectIdBySlug } from '@/server/tenancy/projects';
import { approveIncreaseRequest, createIncreaseRequest, listIncreaseRequests, rejectIncreaseRequest } from '@/server/quota/increases';
import {
  createClaimPolicy,
  createGrantPolicy,
  deleteClaimPolicy,
  deleteGrantPolicy,
  listClaimPolicies,
  listGrantPolicies,
  updateClaimPolicy,
  updateGrantPolicy,
} from '@/server/quota/policies';
import { createRegistration, deleteRegistration, listRegistrations, updateRegistration } from '@/server/quota/registrations';
import {
  claimLogInput,
  claimPolicyInput,
  grantInput,
  grantPolicyInput,
  grantUpdateInput,
  increaseCreateInput,
  increaseDecisionInput,
  quotaName,
  registrationInput,
  registrationUpdateInput,
  resourceType,
} from '@/server/quota/schemas';
import { authedProcedure, createTRPCRouter, noInput, platformProcedure, projectProcedure } from '../init';

const page = { limit: z.number().int().min(1).max(200).default(50), offset: z.number().int().min(0).default(0) };
const operator = () => platformProcedure('operator');

export const quotaRouter = createTRPCRouter({
  /** Registered resource types (what a tenant can ask more of); readable by anyone signed in. */
  resourceTypes: authedProcedure
    .input(noInput)
    .query(async ({ ctx }) =>
      (await listRegistrations(ctx.db)).map((r) => ({ resourceType: r.resourceType, type: r.type, displayUnit: r.displayUnit, description: r.description })),
    ),
  buckets: createTRPCRouter({
    list: projectProcedure('viewer').query(({ ctx }) => listBuckets(ctx.db, ctx.project.id)),
  }),
  claims: createTRPCRouter({
    /** The project's claim log: granted, released and denied decisions with their reasons. */
    list: projectProcedure('viewer')
      .input(claimLogInput)
      .query(({ ctx, input }) => listClaimLog(ctx.db, ctx.project.id, input)),
  }),
  grants: createTRPCRouter({
    list: projectProcedure('viewer')
      .input(z.strictObject(page))
      .query(({ ctx, input }) => listGrants(ctx.db, { projectId: ctx.project.id, ...input })),
  }),
  increases: createTRPCRouter({
    create: projectProcedure('editor')
      .input(increaseCreateInput)
      .mutation(({ ctx, input }) => createIncreaseRequest(ctx.db, ctx.project.id, input, ctx.actor)),
    list: projectProcedure('viewer')
      .input(z.strictObject({ status: z.enum(['Pending', 'Approved', 'Rejected']).optional(), ...page }))
      .query(({ ctx, input }) => listIncreaseRequests(ctx.db, { projectId: ctx.project.id, ...input })),
  }),
  admin: createTRPCRouter({
    registrations: createTRPCRouter({
      list: operator()
        .input(noInput)
        .query(({ ctx }) => listRegistrations(ctx.db)),
      create: operator()
        .input(registrationInput)
        .mutation(({ ctx, input }) => createRegistration(ctx.db, input, ctx.actor)),
      update: operator()
        .input(registrationUpdateInput.extend({ resourceType }))
        .mutation(({ ctx, input }) => {
          const { resourceType: type, ...rest } = input;
          return updateRegistration(ctx.db, type, rest, ctx.actor);
        }),
      delete: operator()
        .input(z.strictObject({ resourceType }))
        .mutation(({ ctx, input }) => deleteRegistration(ctx.db, input.resourceType, ctx.actor)),
    }),
    grants: createTRPCRouter({
      list: operator()
        .input(z.strictObject({ project: z.string().max(63).optional(), search: z.string().max(100).optional(), ...page }))
        .query(async ({ ctx, input }) =>
          listGrants(ctx.db, {
            projectId: input.project ? await projectIdBySlug(ctx.db, input.project) : undefined,
            search: input.search,
            limit: input.limit,
            offset: input.offset,
          }),
        ),
      create: operator()
        .input(grantInput)
        .mutation(async ({ ctx, input }) =>
          createGrant(
            ctx.db,
            { projectId: await projectIdBySlug(ctx.db, input.project), name: input.name, allowances: input.allowances, source: 'Operator' },
            ctx.actor,
          ),
        ),
      /** Replaces the allowances; shrinking below what is allocated is allowed (the bucket shows over its limit). */
      update: operator()
        .input(grantUpdateInput)
        .mutation(async ({ ctx, input }) => updateGrant(ctx.db, await projectIdBySlug(ctx.db, input.project), input.name, input.allowances, ctx.actor)),
      delete: operator()
        .input(z.strictObject({ project: z.string().max(63), name: quotaName }))
        .mutation(async ({ ctx, input }) => deleteGrant(ctx.db, await projectIdBySlug(ctx.db, input.project), input.name, ctx.actor)),
    }),
    buckets: createTRPCRouter({
      list: operator()
        .input(z.strictObject({ search: z.string().max(100).optional(), flagged: z.boolean().optional(), ...page }))
        .query(({ ctx, input }) => listAllBuckets(ctx.db, input)),
    }),
    policies: createTRPCRouter({
      grant: createTRPCRouter({
        list: operator()
          .input(noInput)
          .query(({ ctx }) => listGrantPolicies(ctx.db)),
        create: operator()
          .input(grantPolicyInput)
          .mutation(({ ctx, input }) => createGrantPolicy(ctx.db, input, ctx.actor)),
        update: operator()
          .input(grantPolicyInput)
          .mutation(({ ctx, input }) => {
            const { name, ...spec } = input;
            return updateGrantPolicy(ctx.db, name, spec, ctx.actor);
          }),
        delete: operator()
          .input(z.strictObject({ name: quotaName }))
          .mutation(({ ctx, input }) => deleteGrantPolicy(ctx.db, input.name, ctx.actor)),
      }),
      claim: createTRPCRouter({
        list: operator()
          .input(noInput)
          .query(({ ctx }) => listClaimPolicies(ctx.db)),
        create: operator()
          .input(claimPolicyInput)
          .mutation(({ ctx, input }) => createClaimPolicy(ctx.db, input, ctx.actor)),
        update: operator()
          .input(claimPolicyInput)
          .mutation(({ ctx, input }) => {
            const { name, ...spec } = input;
            return updateClaimPolicy(ctx.db, name, spec, ctx.actor);
          }),
        delete: operator()
          .input(z.strictObject({ name: quotaName }))
          .mutation(({ ctx, input }) => deleteClaimPolicy(ctx.db, input.name, ctx.actor)),
      }),
    }),
    increases: createTRPCRouter({
      /** The queue (Pending, oldest first) or the decided history. */
      queue: operator()
        .input(z.strictObject({ status: z.enum(['Pending', 'Approved', 'Rejected']).default('Pending'), ...page }))
        .query(({ ctx, input }) => listIncreaseRequests(ctx.db, input)),
      approve: operator()
        .input(increaseDecisionInput)
        .mutation(({ ctx, input }) => approveIncreaseRequest(ctx.db, input, ctx.actor)),
      reject: operator()
        .input(increaseDecisionInput.omit({ amount: true }).extend({ reason: z.string().trim().min(1, 'say why the request is rejected').max(1000) }))
        .mutation(({ ctx, input }) => rejectIncreaseRequest(ctx.db, input, ctx.actor)),
    }),
    audit: createTRPCRouter({
      last: operator()
        .input(noInput)
        .query(({ ctx }) => lastAudit(ctx.db)),
      /** Runs the audit now (the worker also runs it every 5 minutes). */
      run: operator()
        .input(noInput)
        .mutation(async ({ ctx }) => {
          const r = await auditQuotaBooks(ctx.db, ctx.actor);
          return { at: r.at, bucketsChecked: r.bucketsChecked, overLimit: r.overLimit, drifted: r.drifted };
        }),
    }),
  }),
});
