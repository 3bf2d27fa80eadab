import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { z, ZodError } from 'zod';
import type { Db } from '@/db/client';
import type { Actor } from '@/server/audit/events';
import { withDeadline } from '@/db/deadline';
import { notingDatabaseFailure } from '@/server/http/database-watch';
import { env } from '@/server/env';
import { asDomainError, isDomainError, validationFailed, type FieldIssue } from '@/server/errors';
import { refuseUnstorableText } from '@/server/http/untrusted-text';
import { errorIdOf, internalErrorMessage } from '@/server/observability/log';
import { resolveOrganizationAccess } from '@/server/tenancy/organizations';
import { findProject, resolveProjectAccess, slugPattern } from '@/server/tenancy/projects';
import { hasPlatformRole, roleAtLeast, type OrganizationRole, type PlatformRole, type ProjectRole, type SessionUser } from '@/server/tenancy/roles';
import { errorTable } from '@/server/error-table';

/**
 * The tRPC context: the database and the signed-in user (resolved by the route handler from the
 * next-auth session and re-read from the database, so revoked roles take effect at once).
 */
export interface Context {
  db: Db;
  /** `id`: the console session's id (absent for callers that are not a browser session, e.g. tests). */
  session: { user: SessionUser; id?: string } | null;
}

/** The messages of a validation failure by top-level input field, as the console's forms read them. */
function fieldErrors(issues: FieldIssue[]): Record<string, string[]> {
  const byField: Record<string, string[]> = {};
  for (const { field, message } of issues) if (field) (byField[field.split('.')[0]] ??= []).push(message);
  return byField;
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const issues = isDomainError(cause) && cause.code === 'ValidationFailed' ? (cause.details?.issues as FieldIssue[] | undefined) : undefined;
    // A failure nobody coded (a failed statement, a bug) is logged by the HTTP handler (http.ts)
    // under this id; its message may carry SQL and parameters, so the browser only learns that it
    // happened and the id to quote.
    const errorId = error.code === 'INTERNAL_SERVER_ERROR' ? errorIdOf(error) : null;
    return {
      ...shape,
      message: errorId ? internalErrorMessage(errorId) : shape.message,
      data: {
        ...shape.data,
        // tRPC names no 410 Gone: the error table says which codes answer another status than their tRPC code's.
        httpStatus: (isDomainError(cause) && errorTable[cause.code].trpcHttp) || shape.data.httpStatus,
        stack: undefined,
        errorId,
        domainCode: isDomainError(cause) ? cause.code : null,
        field: isDomainError(cause) ? (cause.field ?? null) : null,
        details: isDomainError(cause) ? (cause.details ?? null) : null,
        fieldErrors: issues ? fieldErrors(issues) : null,
      },
    };
  },
});

/**
 * Turns domain errors into tRPC errors through the one error table; leaves others alone. Input
 * that failed its parser is answered as REST answers it: `ValidationFailed` naming the field.
 */
const mapDomainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok) return result;
  const { error } = result;
  const cause = error.code === 'BAD_REQUEST' && error.cause instanceof ZodError ? validationFailed(error.cause) : asDomainError(error.cause);
  if (cause) throw new TRPCError({ code: errorTable[cause.code].trpc, message: cause.message, cause });
  return result;
});

/**
 * Text PostgreSQL cannot store (NUL, unpaired surrogates) is refused before any parser or handler
 * sees the input, by the same rule as REST bodies: 400 `ValidationFailed` naming the field.
 */
const refuseUnstorableInput = t.middleware(async ({ getRawInput, next }) => {
  refuseUnstorableText(await getRawInput(), 'input');
  return next();
});

/**
 * Queries and mutations run within the request budget (db/deadline.ts): past it the caller gets
 * 503 DatabaseUnavailable, and the procedure's transaction does not commit. A page that prefetched
 * through the procedure learns of it (server/http/database-watch.ts: its render is answered 503).
 * Subscriptions (live updates) are long-lived by design and have none.
 */
const withRequestDeadline = t.middleware(({ type, next }) =>
  type === 'subscription' ? next() : notingDatabaseFailure(() => withDeadline(env().DB_REQUEST_TIMEOUT_MS, () => next())),
);

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Anyone, signed in or not. */
export const publicProcedure = t.procedure.use(mapDomainErrors).use(refuseUnstorableInput).use(withRequestDeadline);

/**
 * The input of a procedure that takes none: nothing, or an empty object. Like every input schema
 * here it is strict, so that a field sent to it is refused by name instead of ignored.
 */
export const noInput = z.strictObject({}).optional();

/** Any signed-in user. */
export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.session) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in first' });
  const user = ctx.session.user;
  const actor: Actor = { type: 'user', id: user.id, label: user.email };
  return next({ ctx: { ...ctx, session: ctx.session, user, actor } });
});

export const projectSlug = z.string().regex(slugPattern, 'must be a project slug');

/** What `authedProcedure` adds to the context. */
type AuthedContext = Context & { user: SessionUser; actor: Actor };

/**
 * A procedure scoped to the project named by `input.project`, with ONE input parser. tRPC hands
 * the whole input to each parser of a chain and merges what they return, so a strict `{ project }`
 * parser would refuse the procedure's own fields and the procedure's strict parser would refuse
 * `project`. Here the builder's `input(schema)` replaces `{ project }` by `schema` extended with
 * `project`: every field is known to the one strict parser, and anything else is refused by name.
 * `scope` resolves the project for the caller (refusing as it sees fit) into context additions.
 */
function projectScoped<Extra extends object>(scope: (ctx: AuthedContext, project: string) => Promise<Extra>) {
  return scopedBy('project', projectSlug, scope);
}

/** `projectScoped` for any one scoping field of the input (`project`, `organization`). */
function scopedBy<Key extends string, Extra extends object>(key: Key, slug: z.ZodString, scope: (ctx: AuthedContext, value: string) => Promise<Extra>) {
  const withInput = <S extends z.ZodObject>(schema: S) =>
    authedProcedure.input(schema).use(async ({ ctx, input, next }) => next({ ctx: { ...ctx, ...(await scope(ctx, (input as Record<Key, string>)[key])) } }));
  return {
    ...withInput(z.strictObject({ [key]: slug } as Record<Key, z.ZodString>)),
    /** The procedure's own input; the scoping field is added to it. */
    input: <Shape extends z.ZodRawShape, Config extends z.core.$ZodObjectConfig>(schema: z.ZodObject<Shape, Config>) =>
      withInput(schema.extend({ [key]: slug } as Record<Key, z.ZodString>)),
  };
}

export const organizationSlug = z.string().regex(slugPattern, 'must be an organization slug');

/**
 * A member of the organization named by `input.organization` holding at least `minRole` (platform
 * admins: owner). Platform operators may read any organization (`minRole` member). Others get
 * NOT_FOUND (its existence is not revealed); members below the role get FORBIDDEN.
 */
export function organizationProcedure(minRole: OrganizationRole) {
  return scopedBy('organization', organizationSlug, async (ctx, slug) => {
    const access = await resolveOrganizationAccess(ctx.db, ctx.user, slug);
    if (!(access.role ? roleAtLeast(access.role, minRole) : minRole === 'member')) {
      throw new TRPCError({ code: 'FORBIDDEN', message: `this needs the ${minRole} role in organization "${slug}"` });
    }
    return { organization: access.organization, role: access.role };
  });
}

/**
 * A member of the project named by `input.project` holding at least `minRole`. Non-members get
 * NOT_FOUND (the project's existence is not revealed); members below the role get FORBIDDEN.
 */
export function projectProcedure(minRole: ProjectRole) {
  return projectScoped(async (ctx, project) => {
    const access = await resolveProjectAccess(ctx.db, ctx.user, project);
    if (!roleAtLeast(access.role, minRole)) {
      throw new TRPCError({ code: 'FORBIDDEN', message: `this needs the ${minRole} role in project "${project}"` });
    }
    return { project: access.project, role: access.role };
  });
}

/**
 * Like `projectProcedure(minRole)`, but platform staff holding one of `staffRoles` may act on any
 * project, member or not (an operator deleting a project). Everyone else is refused exactly as
 * `projectProcedure` refuses them: NOT_FOUND for non-members, FORBIDDEN below `minRole`.
 */
export function projectOrStaffProcedure(minRole: ProjectRole, ...staffRoles: PlatformRole[]) {
  return projectScoped(async (ctx, project) => {
    if (hasPlatformRole(ctx.user, ...staffRoles)) return { project: await findProject(ctx.db, project) };
    const access = await resolveProjectAccess(ctx.db, ctx.user, project);
    if (!roleAtLeast(access.role, minRole)) {
      throw new TRPCError({ code: 'FORBIDDEN', message: `this needs the ${minRole} role in project "${project}"` });
    }
    return { project: access.project };
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
