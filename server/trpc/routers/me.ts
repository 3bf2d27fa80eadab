import { createTRPCRouter, publicProcedure } from '../init';

export const meRouter = createTRPCRouter({
  /** The signed-in user (or null), for navigation. */
  get: publicProcedure.query(({ ctx }) => ctx.session?.user ?? null),
});
