import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { eq } from 'drizzle-orm';
import { users } from '@/db/schema';
import { hasPlatformRole } from '@/server/tenancy/roles';
import { listSessions, revokeSession, revokeUserSessions } from '@/server/tenancy/sessions';
import { DomainError } from '@/server/errors';
import { authedProcedure, createTRPCRouter } from '../init';
import type { Context } from '../init';
import type { SessionUser } from '@/server/tenancy/roles';

/** Whose sessions: one's own (no `userId`, or one's own id), or, for an administrator, anyone's. */
async function targetUser(ctx: Context & { user: SessionUser }, userId: string | undefined) {
  if (!userId || userId === ctx.user.id) return { id: ctx.user.id, email: ctx.user.email };
  if (!hasPlatformRole(ctx.user, 'admin')) throw new TRPCError({ code: 'FORBIDDEN', message: "only an admin may see or end another user's sessions" });
  const [user] = await ctx.db.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, userId));
  if (!user) throw new DomainError('NotFound', `user "${userId}" not found`, 'userId');
  return user;
}

const forUser = z.strictObject({ userId: z.uuid().optional() });

export const sessionsRouter = createTRPCRouter({
  /** A user's live sessions; `current` marks the one making this request. */
  list: authedProcedure.input(forUser.optional()).query(async ({ ctx, input }) => {
    const user = await targetUser(ctx, input?.userId);
    const rows = await listSessions(ctx.db, user.id);
    return { user, sessions: rows.map((s) => ({ ...s, current: s.id === ctx.session.id })) };
  }),
  /** Ends one session at once (the browser holding it is signed out on its next request). */
  revoke: authedProcedure.input(forUser.extend({ id: z.uuid() })).mutation(async ({ ctx, input }) => {
    const user = await targetUser(ctx, input.userId);
    await ctx.db.transaction((tx) => revokeSession(tx, user.id, input.id, ctx.actor));
    return { revoked: 1 };
  }),
  /** Sign out everywhere: ends every session of the user, this one included when it is theirs. */
  revokeAll: authedProcedure.input(forUser.optional()).mutation(async ({ ctx, input }) => {
    const user = await targetUser(ctx, input?.userId);
    return { revoked: await ctx.db.transaction((tx) => revokeUserSessions(tx, user.id, ctx.actor, { reason: 'signed out everywhere' })) };
  }),
});
