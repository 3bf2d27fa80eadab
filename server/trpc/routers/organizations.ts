import { z } from 'zod';
import { invalid } from '@/server/errors';
import { configuredMail } from '@/server/mail/smtp';
import { addMemberByEmail, createInvitation, listInvitations, revokeInvitation } from '@/server/tenancy/invitations';
import { listMembers, removeMember, setMemberRole } from '@/server/tenancy/members';
import { deleteOrganization, listOrganizationProjects, listOrganizationsForUser, renameOrganization } from '@/server/tenancy/organizations';
import { createOrganization, slugPattern } from '@/server/tenancy/projects';
import { organizationRoles, projectRoles } from '@/server/tenancy/roles';
import { authedProcedure, createTRPCRouter, noInput, organizationProcedure } from '../init';

/** A role on a project. */
export const projectRole = z.enum(projectRoles);
/** A role on an organization. */
export const organizationRole = z.enum(organizationRoles);
export const displayName = z.string().trim().min(1, 'a name is required').max(100);
export const email = z.string().trim().min(3, 'must be an e-mail address').max(254);

export const organizationsRouter = createTRPCRouter({
  /** The user's organizations with their role (platform operators: all). */
  list: authedProcedure.input(noInput).query(({ ctx }) => listOrganizationsForUser(ctx.db, ctx.user)),
  /** Creates an organization; the user becomes its owner. */
  create: authedProcedure
    .input(z.strictObject({ slug: z.string().regex(slugPattern, 'lower-case letters, digits and dashes (1-63)'), name: displayName }))
    .mutation(({ ctx, input }) => createOrganization(ctx.db, { ...input, owner: ctx.user.id }, ctx.actor)),
  /** The organization, the user's role there and its projects. */
  get: organizationProcedure('member').query(async ({ ctx }) => ({
    ...ctx.organization,
    role: ctx.role,
    projects: await listOrganizationProjects(ctx.db, ctx.organization.id),
  })),
  rename: organizationProcedure('owner')
    .input(z.strictObject({ name: displayName }))
    .mutation(({ ctx, input }) => renameOrganization(ctx.db, ctx.organization.id, input.name, ctx.actor)),
  /** Deletes the organization when it holds no projects (owners); `confirm` repeats its slug. */
  delete: organizationProcedure('owner')
    .input(z.strictObject({ confirm: z.string().max(63) }))
    .mutation(({ ctx, input }) => {
      if (input.confirm !== ctx.organization.slug) throw invalid('confirm', `type the organization's slug, "${ctx.organization.slug}", to confirm`);
      return deleteOrganization(ctx.db, ctx.organization.id, ctx.actor);
    }),
  members: createTRPCRouter({
    list: organizationProcedure('member').query(({ ctx }) => listMembers(ctx.db, { organizationId: ctx.organization.id })),
    /** A member gets the role; anyone else is invited (owners): never access without their acceptance. */
    add: organizationProcedure('owner')
      .input(z.strictObject({ email, role: organizationRole }))
      .mutation(({ ctx, input }) =>
        addMemberByEmail(ctx.db, { organizationId: ctx.organization.id }, input.email, input.role, ctx.actor, {
          invitedBy: ctx.user.id,
          mail: configuredMail(),
        }),
      ),
    setRole: organizationProcedure('owner')
      .input(z.strictObject({ userId: z.uuid(), role: organizationRole }))
      .mutation(({ ctx, input }) => setMemberRole(ctx.db, { organizationId: ctx.organization.id }, input.userId, input.role, ctx.actor)),
    remove: organizationProcedure('owner')
      .input(z.strictObject({ userId: z.uuid() }))
      .mutation(({ ctx, input }) => removeMember(ctx.db, { organizationId: ctx.organization.id }, input.userId, ctx.actor)),
    /** The user leaves the organization (not its last owner). */
    leave: organizationProcedure('member').mutation(({ ctx }) =>
      removeMember(ctx.db, { organizationId: ctx.organization.id }, ctx.user.id, ctx.actor, { leaving: true }),
    ),
  }),
  invitations: createTRPCRouter({
    list: organizationProcedure('owner').query(({ ctx }) => listInvitations(ctx.db, { organizationId: ctx.organization.id })),
    /** Returns the inviter's single-use link once; with SMTP configured, a second link is mailed to the address. */
    create: organizationProcedure('owner')
      .input(z.strictObject({ email, role: organizationRole }))
      .mutation(({ ctx, input }) =>
        createInvitation(
          ctx.db,
          { scope: { organizationId: ctx.organization.id }, email: input.email, role: input.role, invitedBy: ctx.user.id },
          ctx.actor,
          configuredMail(),
        ),
      ),
    revoke: organizationProcedure('owner')
      .input(z.strictObject({ id: z.uuid() }))
      .mutation(({ ctx, input }) => revokeInvitation(ctx.db, { organizationId: ctx.organization.id }, input.id, ctx.actor)),
  }),
});
