import { createTRPCRouter, noInput, publicProcedure } from '../init';

export const meRouter = createTRPCRouter({
  /** The signed-in user (or null), for navigation. */
  get: publicProcedure.input(noInput).query(({ ctx }) => ctx.session?.user ?? null),
});
