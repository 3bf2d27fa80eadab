import { z } from 'zod';
import { env } from '@/server/env';
import { controlPlanePath } from '@/server/kube/server';
import { publishedKubeApi } from '@/server/kube/endpoint';
import { authedProcedure, createTRPCRouter, noInput, platformProcedure, projectProcedure } from '../init';
import {
  createApiToken,
  createOperatorToken,
  createUserToken,
  listApiTokens,
  listOperatorTokens,
  listUserTokens,
  revokeApiToken,
  revokeOperatorToken,
  revokeUserToken,
} from '@/server/tenancy/tokens';

const tokenName = z.string().trim().min(1, 'a name is required').max(100);

export const tokensRouter = createTRPCRouter({
  list: projectProcedure('viewer').query(({ ctx }) => listApiTokens(ctx.db, ctx.project.id)),
  /**
   * Where the project's Kubernetes API is and the CA it is served with, for the console's "Download
   * kubeconfig" (the browser adds the token just created). `origin` null: the console's host name
   * with `httpsPort`. Null where this web process serves no Kubernetes API.
   */
  kubeApi: projectProcedure('viewer').query(({ ctx }) => {
    const served = publishedKubeApi();
    if (!served) return null;
    return { origin: env().KUBE_API_URL ?? null, httpsPort: served.httpsPort, path: controlPlanePath(ctx.project.slug), caPem: served.caPem };
  }),
  create: projectProcedure('owner')
    .input(
      z.strictObject({
        name: tokenName,
        cluster: z.string().trim().max(63).optional(),
        /** `owner` tokens may also delete the project (DELETE /api/v1/projects/{project}); cluster tokens never can. */
        role: z.enum(['viewer', 'editor', 'owner']).default('editor'),
      }),
    )
    .mutation(({ ctx, input }) =>
      ctx.db.transaction((tx) =>
        createApiToken(
          tx,
          { projectId: ctx.project.id, name: input.name, clusterName: input.cluster || null, role: input.role, createdBy: ctx.user.id },
          ctx.actor,
        ),
      ),
    ),
  revoke: projectProcedure('owner')
    .input(z.strictObject({ id: z.uuid() }))
    .mutation(({ ctx, input }) => ctx.db.transaction((tx) => revokeApiToken(tx, ctx.project.id, input.id, ctx.actor))),
  /** Operator tokens: act for the operator who creates them (on the operator REST routes), not for a project. */
  operator: createTRPCRouter({
    list: platformProcedure('operator')
      .input(noInput)
      .query(({ ctx }) => listOperatorTokens(ctx.db)),
    create: platformProcedure('operator')
      .input(z.strictObject({ name: tokenName }))
      .mutation(({ ctx, input }) =>
        ctx.db.transaction((tx) => createOperatorToken(tx, { userId: ctx.user.id, name: input.name, createdBy: ctx.user.id }, ctx.actor)),
      ),
    revoke: platformProcedure('operator')
      .input(z.strictObject({ id: z.uuid() }))
      .mutation(({ ctx, input }) => ctx.db.transaction((tx) => revokeOperatorToken(tx, input.id, ctx.actor))),
  }),
  /** User tokens: act for the signed-in user on the tenancy REST routes (organizations, projects, members), with their current rights. */
  user: createTRPCRouter({
    list: authedProcedure.input(noInput).query(({ ctx }) => listUserTokens(ctx.db, ctx.user.id)),
    create: authedProcedure
      .input(z.strictObject({ name: tokenName }))
      .mutation(({ ctx, input }) => ctx.db.transaction((tx) => createUserToken(tx, { userId: ctx.user.id, name: input.name }, ctx.actor))),
    revoke: authedProcedure
      .input(z.strictObject({ id: z.uuid() }))
      .mutation(({ ctx, input }) => ctx.db.transaction((tx) => revokeUserToken(tx, ctx.user.id, input.id, ctx.actor))),
  }),
});
