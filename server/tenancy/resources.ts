import { z } from 'zod';
import { listOutput, resourceOutput, statusOutput, timestamp } from '@/lib/rest-outputs';
import { slugPattern } from './slugs';
import { memberRoles, organizationRoles, projectRoles, type MemberRole } from './roles';

/**
 * REST v1 shapes of tenancy (`{ apiVersion, kind, metadata, spec, status }`): organizations,
 * members and invitations, and the bodies that create or change them (strict: unknown fields are
 * refused by name).
 */
export const TENANCY_API_VERSION = 'v1';

const slug = z.string().regex(slugPattern, 'must be 1-63 lower-case letters, digits or dashes, starting and ending with a letter or digit');
const displayName = z.string().trim().min(1, 'is required').max(100);
const envelope = { apiVersion: z.literal(TENANCY_API_VERSION).optional() };

export const organizationCreateBody = z.strictObject({
  ...envelope,
  kind: z.literal('Organization').optional(),
  metadata: z.strictObject({ name: slug }),
  spec: z.strictObject({ displayName }),
});

export const organizationPatchBody = z.strictObject({ ...envelope, kind: z.literal('Organization').optional(), spec: z.strictObject({ displayName }) });

export const projectCreateBody = z.strictObject({
  ...envelope,
  kind: z.literal('Project').optional(),
  metadata: z.strictObject({ name: slug, organization: slug }),
  spec: z.strictObject({ displayName, description: z.string().max(1000).optional() }),
});

/** A project's new display name and/or description (at least one). */
export const projectPatchBody = z.strictObject({
  ...envelope,
  kind: z.literal('Project').optional(),
  spec: z
    .strictObject({ displayName: displayName.optional(), description: z.string().trim().max(1000).optional() })
    .refine((s) => s.displayName !== undefined || s.description !== undefined, 'give spec.displayName or spec.description'),
});

/** The roles a member of each kind of scope can hold: owner or member on an organization; owner, editor or viewer on a project. */
const roleOf = { organization: z.enum(organizationRoles), project: z.enum(projectRoles) };
const memberPutBodyFor = (kind: 'organization' | 'project') =>
  z.strictObject({ ...envelope, kind: z.literal('Member').optional(), spec: z.strictObject({ role: roleOf[kind] }) });
const invitationCreateBodyFor = (kind: 'organization' | 'project') =>
  z.strictObject({
    ...envelope,
    kind: z.literal('Invitation').optional(),
    spec: z.strictObject({ email: z.string().trim().min(3).max(254), role: roleOf[kind] }),
  });
export const memberPutBody = { organization: memberPutBodyFor('organization'), project: memberPutBodyFor('project') };
export const invitationCreateBody = { organization: invitationCreateBodyFor('organization'), project: invitationCreateBodyFor('project') };

export function organizationResource(o: { id: string; slug: string; name: string; createdAt?: Date; projects?: number; role?: MemberRole | null }) {
  return {
    apiVersion: TENANCY_API_VERSION,
    kind: 'Organization',
    metadata: { name: o.slug, uid: o.id, ...(o.createdAt ? { creationTimestamp: o.createdAt } : {}) },
    spec: { displayName: o.name },
    status: { ...(o.projects !== undefined ? { projects: Number(o.projects) } : {}), ...(o.role !== undefined ? { role: o.role } : {}) },
  };
}

export function memberResource(m: { userId: string; email: string; name: string; role: MemberRole; since: Date; disabled?: boolean }) {
  return {
    apiVersion: TENANCY_API_VERSION,
    kind: 'Member',
    metadata: { name: m.email, uid: m.userId },
    spec: { role: m.role },
    status: { displayName: m.name, since: m.since, disabled: Boolean(m.disabled) },
  };
}

export function invitationResource(
  i: { id: string; email: string; role: MemberRole; expiresAt: Date; createdAt?: Date; invitedBy?: string | null },
  link?: string,
  mail?: 'sent' | 'failed' | 'off',
) {
  return {
    apiVersion: TENANCY_API_VERSION,
    kind: 'Invitation',
    metadata: { name: i.id, uid: i.id, ...(i.createdAt ? { creationTimestamp: i.createdAt } : {}) },
    spec: { email: i.email, role: i.role },
    status: {
      expiresAt: i.expiresAt,
      ...(i.invitedBy !== undefined ? { invitedBy: i.invitedBy } : {}),
      ...(link ? { link } : {}),
      ...(mail ? { mail } : {}),
    },
  };
}

// ---- What the routes answer (the routes' declared outputs) --------------------------------------

const roleOutput = z.enum(memberRoles);

export const organizationOutput = resourceOutput(TENANCY_API_VERSION, 'Organization', {
  metadata: { name: z.string(), uid: z.uuid(), creationTimestamp: timestamp.optional() },
  spec: { displayName: z.string() },
  status: {
    projects: z.number().int().nonnegative().optional(),
    role: roleOutput.nullable().optional().describe("the user's role; null: a platform operator's read"),
  },
});
export const organizationListOutput = listOutput('OrganizationList', organizationOutput);

export const memberOutput = resourceOutput(TENANCY_API_VERSION, 'Member', {
  metadata: { name: z.string().describe('e-mail'), uid: z.uuid() },
  spec: { role: roleOutput },
  status: { displayName: z.string(), since: timestamp, disabled: z.boolean() },
});
export const memberListOutput = listOutput('MemberList', memberOutput);
export const memberRemovedOutput = statusOutput(undefined, { role: roleOutput, left: z.boolean().describe('the member removed themself') });

export const invitationOutput = resourceOutput(TENANCY_API_VERSION, 'Invitation', {
  metadata: { name: z.uuid(), uid: z.uuid(), creationTimestamp: timestamp.optional() },
  spec: { email: z.string(), role: roleOutput },
  status: {
    expiresAt: timestamp,
    invitedBy: z.string().nullable().optional(),
    link: z
      .string()
      .optional()
      .describe("the inviter's single-use link, in the answer that creates it only: it joins only a user who proves the invited address"),
    mail: z
      .enum(['sent', 'failed', 'off'])
      .optional()
      .describe('whether a second link went to the invited address by mail (off: SMTP is not configured), in the answer that creates it only'),
  },
});
export const invitationListOutput = listOutput('InvitationList', invitationOutput);
/** PUT members/{email}: the member whose role changed (200), or the invitation made for anyone else (202). */
export const memberOrInvitationOutput = z.union([memberOutput, invitationOutput]);

export const projectListOutput = listOutput(
  'ProjectList',
  resourceOutput('v1', 'Project', {
    metadata: { name: z.string(), uid: z.uuid(), organization: z.string() },
    spec: { displayName: z.string() },
    status: { phase: z.enum(['Active', 'Deleting']), role: roleOutput.nullable() },
  }),
);

export const deletedOutput = statusOutput();

export const whoamiOutput = z.union([
  z.object({
    project: z.string(),
    cluster: z.string().nullish().describe('the cluster of a cluster-scoped token'),
    token: z.object({ id: z.uuid(), name: z.string(), kind: z.literal('project'), role: roleOutput }),
  }),
  z.object({
    project: z.null(),
    cluster: z.null(),
    operator: z.string(),
    token: z.object({ id: z.uuid(), name: z.string(), kind: z.literal('operator') }),
  }),
  z.object({ project: z.null(), cluster: z.null(), user: z.string(), token: z.object({ id: z.uuid(), name: z.string(), kind: z.literal('user') }) }),
]);
