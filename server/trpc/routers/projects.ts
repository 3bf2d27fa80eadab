import { z } from 'zod';
import { authedProcedure, createTRPCRouter, noInput, platformProcedure, projectOrStaffProcedure, projectProcedure } from '../init';
import { invalid } from '@/server/errors';
import { getDeletionStatus, requestProjectDeletion } from '@/server/workflows/project-deletion';
import { createProjectFor } from '@/server/workflows/project-creation';
import { configuredMail } from '@/server/mail/smtp';
import { addMemberByEmail, createInvitation, listInvitations, revokeInvitation } from '@/server/tenancy/invitations';
import { listMembers, listOrganizationAccess, removeMember, setMemberRole } from '@/server/tenancy/members';
import { listAllProjects, listProjectsForUser, slugPattern, updateProject } from '@/server/tenancy/projects';
import { displayName, email, projectRole } from './organizations';

export const projectsRouter = createTRPCRouter({
  list: authedProcedure.input(noInput).query(({ ctx }) => listProjectsForUser(ctx.db, ctx.user)),
  get: projectProcedure('viewer').query(({ ctx }) => ({ ...ctx.project, role: ctx.role })),
  /**
   * Creates a project in an organization where the user is owner or member (platform operators:
   * any): the user becomes its owner and its quota grants are made in the same transaction.
   */
  create: authedProcedure
    .input(
      z.strictObject({
        organization: z.string().regex(slugPattern, 'must be an organization slug'),
        slug: z.string().regex(slugPattern, 'lower-case letters, digits and dashes (1-63)'),
        name: displayName,
        description: z.string().trim().max(1000).optional(),
      }),
    )
    .mutation(({ ctx, input }) => createProjectFor(ctx.db, ctx.user, input, ctx.actor)),
  /** Changes the project's display name and/or description (owners); the slug never changes. */
  update: projectProcedure('owner')
    .input(z.strictObject({ name: displayName.optional(), description: z.string().trim().max(1000, 'must be at most 1000 characters').optional() }))
    .mutation(({ ctx, input }) => updateProject(ctx.db, ctx.project.id, input, ctx.actor)),
  members: createTRPCRouter({
    list: projectProcedure('viewer').query(({ ctx }) => listMembers(ctx.db, { projectId: ctx.project.id })),
    /** Who owns the project through its organization (the organization's owners). */
    viaOrganization: projectProcedure('viewer').query(({ ctx }) => listOrganizationAccess(ctx.db, ctx.project.id)),
    /** A member gets the role; anyone else is invited (owners): never access without their acceptance. */
    add: projectProcedure('owner')
      .input(z.strictObject({ email, role: projectRole }))
      .mutation(({ ctx, input }) =>
        addMemberByEmail(ctx.db, { projectId: ctx.project.id }, input.email, input.role, ctx.actor, {
          invitedBy: ctx.user.id,
          mail: configuredMail(),
        }),
      ),
    /** Changes a member's role (owners); the last owner cannot be demoted. */
    setRole: projectProcedure('owner')
      .input(z.strictObject({ userId: z.uuid(), role: projectRole }))
      .mutation(({ ctx, input }) => setMemberRole(ctx.db, { projectId: ctx.project.id }, input.userId, input.role, ctx.actor)),
    remove: projectProcedure('owner')
      .input(z.strictObject({ userId: z.uuid() }))
      .mutation(({ ctx, input }) => removeMember(ctx.db, { projectId: ctx.project.id }, input.userId, ctx.actor)),
    /** The user leaves the project (not its last owner). */
    leave: projectProcedure('viewer').mutation(({ ctx }) => removeMember(ctx.db, { projectId: ctx.project.id }, ctx.user.id, ctx.actor, { leaving: true })),
  }),
  invitations: createTRPCRouter({
    list: projectProcedure('owner').query(({ ctx }) => listInvitations(ctx.db, { projectId: ctx.project.id })),
    /** Invites an e-mail address with a role; returns the inviter's single-use link once (and mails a second one with SMTP configured). */
    create: projectProcedure('owner')
      .input(z.strictObject({ email, role: projectRole }))
      .mutation(({ ctx, input }) =>
        createInvitation(
          ctx.db,
          { scope: { projectId: ctx.project.id }, email: input.email, role: input.role, invitedBy: ctx.user.id },
          ctx.actor,
          configuredMail(),
        ),
      ),
    revoke: projectProcedure('owner')
      .input(z.strictObject({ id: z.uuid() }))
      .mutation(({ ctx, input }) => revokeInvitation(ctx.db, { projectId: ctx.project.id }, input.id, ctx.actor)),
  }),
  /** Where the project's deletion stands: what is left, and what waits on which dependency. */
  deletion: projectOrStaffProcedure('viewer', 'operator').query(({ ctx }) => getDeletionStatus(ctx.db, ctx.project.id)),
  /**
   * Deletes the project (owners, platform operators): `confirm` must repeat its slug. Returns at
   * once with phase Deleting; the worker releases everything. Asking again is harmless.
   */
  delete: projectOrStaffProcedure('owner', 'operator')
    .input(z.strictObject({ confirm: z.string().max(63), reason: z.string().trim().max(500).optional() }))
    .mutation(({ ctx, input }) => {
      if (input.confirm !== ctx.project.slug) throw invalid('confirm', `type the project's slug, "${ctx.project.slug}", to confirm`);
      return requestProjectDeletion(ctx.db, ctx.project.id, ctx.actor, input.reason || null);
    }),
  /** Every project with its phase (operators: deletions under way first). */
  admin: createTRPCRouter({
    list: platformProcedure('operator')
      .input(
        z.strictObject({
          search: z.string().trim().max(100).optional(),
          phase: z.enum(['Active', 'Deleting']).optional(),
          limit: z.number().int().min(1).max(200).default(50),
          offset: z.number().int().min(0).default(0),
        }),
      )
      .query(({ ctx, input }) => listAllProjects(ctx.db, input)),
  }),
});
