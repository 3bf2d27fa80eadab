import { z } from 'zod';
import { invalid } from '@/server/errors';
import { createPasswordReset, previewPasswordReset, usePasswordReset } from '@/server/tenancy/password-resets';
import { platformRoles } from '@/server/tenancy/roles';
import { deleteUser, listUnverifiedInvitationAccounts, listUsers, setPlatformRoles, setUserDisabled, verifyEmailByAdmin } from '@/server/tenancy/users';
import { createTRPCRouter, noInput, platformProcedure, publicProcedure } from '../init';

const userId = z.uuid();
const token = z.string().trim().min(1).max(100);

export const usersRouter = createTRPCRouter({
  /** Every user with their live session count, for administrators. */
  list: platformProcedure('admin')
    .input(noInput)
    .query(({ ctx }) => listUsers(ctx.db)),
  /** Accounts made from an invitation link whose e-mail nobody verified (possible e-mail squatters), for administrators. */
  unverified: platformProcedure('admin')
    .input(noInput)
    .query(({ ctx }) => listUnverifiedInvitationAccounts(ctx.db)),
  /** The administrator vouches for the user's e-mail address (verified by `admin`). */
  verifyEmail: platformProcedure('admin')
    .input(z.strictObject({ userId }))
    .mutation(({ ctx, input }) => ctx.db.transaction((tx) => verifyEmailByAdmin(tx, input.userId, ctx.actor))),
  /** Disables (sessions and tokens stop at once) or enables a user (admins; not oneself). */
  setDisabled: platformProcedure('admin')
    .input(z.strictObject({ userId, disabled: z.boolean() }))
    .mutation(({ ctx, input }) => {
      if (input.userId === ctx.user.id && input.disabled) throw invalid('userId', 'you cannot disable yourself');
      return ctx.db.transaction((tx) => setUserDisabled(tx, input.userId, input.disabled, ctx.actor));
    }),
  /** A one-time password-reset link for the user (admins); shown once. */
  resetPassword: platformProcedure('admin')
    .input(z.strictObject({ userId }))
    .mutation(({ ctx, input }) => createPasswordReset(ctx.db, input.userId, ctx.user.id, ctx.actor)),
  /** Sets the user's platform roles (admins); the last admin keeps the admin role, and no admin takes away their own. */
  setPlatformRoles: platformProcedure('admin')
    .input(z.strictObject({ userId, roles: z.array(z.enum(platformRoles)).max(3) }))
    .mutation(({ ctx, input }) => {
      // Only admins reach this procedure, so a list without admin for oneself would take one's own away.
      if (input.userId === ctx.user.id && !input.roles.includes('admin')) throw invalid('roles', 'you cannot take away your own admin role; another admin can');
      return setPlatformRoles(ctx.db, input.userId, input.roles, ctx.actor);
    }),
  /** Deletes a user (admins; not oneself); the tokens they created are revoked. */
  delete: platformProcedure('admin')
    .input(z.strictObject({ userId }))
    .mutation(({ ctx, input }) => {
      if (input.userId === ctx.user.id) throw invalid('userId', 'you cannot delete yourself');
      return ctx.db.transaction((tx) => deleteUser(tx, input.userId, ctx.actor));
    }),
  /** A password-reset link: whose it is (anyone holding it), and using it once. */
  passwordReset: createTRPCRouter({
    preview: publicProcedure.input(z.strictObject({ token })).query(({ ctx, input }) => previewPasswordReset(ctx.db, input.token)),
    use: publicProcedure
      .input(z.strictObject({ token, newPassword: z.string().min(8, 'must be at least 8 characters').max(1024) }))
      .mutation(({ ctx, input }) => usePasswordReset(ctx.db, input.token, input.newPassword)),
  }),
});
