import { z } from 'zod';
import { setPassword } from '@/server/tenancy/users';
import { authedProcedure, createTRPCRouter, noInput, publicProcedure } from '../init';

export const meRouter = createTRPCRouter({
  /** The signed-in user (or null), for navigation. */
  get: publicProcedure.input(noInput).query(({ ctx }) => ctx.session?.user ?? null),
  /** Changes one's own password; every other session of the user ends at once, this one stays. */
  changePassword: authedProcedure
    .input(
      z.strictObject({
        currentPassword: z.string().min(1, 'is required').max(1024),
        newPassword: z.string().min(8, 'must be at least 8 characters').max(1024),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      await ctx.db.transaction((tx) => setPassword(tx, { userId: ctx.user.id, ...input, keepSession: ctx.session.id }, ctx.actor));
      return { changed: true };
    }),
});
