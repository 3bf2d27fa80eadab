import { z } from 'zod';
import { acceptInvitation, acceptInvitationAsNewUser, previewInvitation } from '@/server/tenancy/invitations';
import { authedProcedure, createTRPCRouter, publicProcedure } from '../init';

const token = z.string().trim().min(1).max(100);

/** Invitation links: anyone holding one may read it and accept it (a new user sets a password; an existing one signs in first). */
export const invitationsRouter = createTRPCRouter({
  preview: publicProcedure.input(z.strictObject({ token })).query(({ ctx, input }) => previewInvitation(ctx.db, input.token)),
  /** The signed-in user accepts an invitation addressed to them. */
  accept: authedProcedure.input(z.strictObject({ token })).mutation(({ ctx, input }) => acceptInvitation(ctx.db, input.token, ctx.user)),
  /** Someone without an account accepts: the account is created with this password, then they sign in. */
  acceptNew: publicProcedure
    .input(
      z.strictObject({
        token,
        name: z.string().trim().min(1, 'a name is required').max(100),
        password: z.string().min(8, 'must be at least 8 characters').max(1024),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const joined = await acceptInvitationAsNewUser(ctx.db, input.token, { name: input.name, password: input.password });
      return { email: joined.email, organization: joined.organization, project: joined.project, role: joined.role };
    }),
});
