import { listUsers } from '@/server/tenancy/users';
import { createTRPCRouter, noInput, platformProcedure } from '../init';

export const usersRouter = createTRPCRouter({
  /** Every user with their live session count, for administrators. */
  list: platformProcedure('admin')
    .input(noInput)
    .query(({ ctx }) => listUsers(ctx.db)),
});
