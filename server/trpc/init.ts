import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { z, ZodError } from 'zod';
import type { Db } from '@/db/client';
import type { Actor } from '@/server/audit/events';
import { withDeadline } from '@/db/deadline';
import { env } from '@/server/env';
import { asDomainError, isDomainError } from '@/server/errors';
import { findProject, resolveProjectAccess, slugPattern } from '@/server/tenancy/projects';
import { hasPlatformRole, roleAtLeast, type MemberRole, type PlatformRole, type SessionUser } from '@/server/tenancy/roles';
import { errorTable } from './errors';

/**
 * The tRPC context: the database and the signed-in user (resolved by the route handler from the
 * next-auth session and re-read from the database, so revoked roles take effect at once).
 */
export interface Context {
  db: Db;
  session: { user: SessionUser } | null;
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    return {
      ...shape,
      data: {
        ...shape.data,
        stack: undefined,
        domainCode: isDomainError(cause) ? cause.code : null,
        field: isDomainError(cause) ? (cause.field ?? null) : null,
        details: isDomainError(cause) ? (cause.details ?? null) : null,
        fieldErrors: cause instanceof ZodError ? z.flattenError(cause).fieldErrors : null,
      },
    };
  },
});

/** Turns domain errors into tRPC errors through the one error table; leaves others alone. */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  const cause = result.ok ? undefined : asDomainError(result.error.cause);
  if (cause) throw new TRPCError({ code: errorTable[cause.code].trpc, message: cause.message, cause });
  return result;
});

/**
 * Queries and mutations run within the request budget (db/deadline.ts): past it the caller gets
 * 503 DatabaseUnavailable, and the procedure's transaction does not commit. Subscriptions (live
 * updates) are long-lived by design and have none.
 */
const withRequestDeadline = t.middleware(({ type, next }) => (type === 'subscription' ? next() : withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => next())));

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Anyone, signed in or not. */
export const publicProcedure = t.procedure.use(mapDomainErrors).use(withRequestDeadline);

/** Any signed-in user. */
export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.session) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in first' });
  const user = ctx.session.user;
  const actor: Actor = { type: 'user', id: user.id, label: user.email };
  return next({ ctx: { ...ctx, session: ctx.session, user, actor } });
});

export const projectSlug = z.string().regex(slugPattern, 'must be a project slug');

/**
 * A member of the project named by `input.project` holding at least `minRole`. Non-members get
 * NOT_FOUND (the project's existence is not revealed); members below the role get FORBIDDEN.
 */
export function projectProcedure(minRole: MemberRole) {
  return authedProcedure.input(z.object({ project: projectSlug })).use(async ({ ctx, input, next }) => {
    const access = await resolveProjectAccess(ctx.db, ctx.user, input.project);
    if (!roleAtLeast(access.role, minRole)) {
      throw new TRPCError({ code: 'FORBIDDEN', message: `this needs the ${minRole} role in project "${input.project}"` });
    }
    return next({ ctx: { ...ctx, project: access.project, role: access.role } });
  });
}

/**
 * Like `projectProcedure(minRole)`, but platform staff holding one of `staffRoles` may act on any
 * project, member or not (an operator deleting a project). Everyone else is refused exactly as
 * `projectProcedure` refuses them: NOT_FOUND for non-members, FORBIDDEN below `minRole`.
 */
export function projectOrStaffProcedure(minRole: MemberRole, ...staffRoles: PlatformRole[]) {
  return authedProcedure.input(z.object({ project: projectSlug })).use(async ({ ctx, input, next }) => {
    if (hasPlatformRole(ctx.user, ...staffRoles)) return next({ ctx: { ...ctx, project: await findProject(ctx.db, input.project) } });
    const access = await resolveProjectAccess(ctx.db, ctx.user, input.project);
    if (!roleAtLeast(access.role, minRole)) {
      throw new TRPCError({ code: 'FORBIDDEN', message: `this needs the ${minRole} role in project "${input.project}"` });
    }
    return next({ ctx: { ...ctx, project: access.project } });
  });
}

/** A user holding one of the platform roles (admin holds them all). */
export function platformProcedure(...roles: PlatformRole[]) {
  return authedProcedure.use(({ ctx, next }) => {
    if (!hasPlatformRole(ctx.user, ...roles)) {
      throw new TRPCError({ code: 'FORBIDDEN', message: `this needs the ${roles.join(' or ')} role` });
    }
    return next();
  });
}
