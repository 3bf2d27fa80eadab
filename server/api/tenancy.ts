import { anyTokenRoute, jsonBody, jsonReply, projectOrOperatorRoute, projectReadRoute, userRoute, type ApiGroup, type RestRoute } from '@/server/http/declare';
import type { Db } from '@/db/client';
import { DomainError } from '@/server/errors';
import { getDeletionStatus, requestProjectDeletion } from '@/server/workflows/project-deletion';
import { createProjectFor } from '@/server/workflows/project-creation';
import { projectOutput, projectResource } from '@/server/workflows/project-resource';
import { configuredMail } from '@/server/mail/smtp';
import { addMemberByEmail, createInvitation, listInvitations, revokeInvitation } from '@/server/tenancy/invitations';
import { listMembers, removeMember, type MemberScope } from '@/server/tenancy/members';
import { deleteOrganization, listOrganizationsForUser, renameOrganization, resolveOrganizationAccess } from '@/server/tenancy/organizations';
import { createOrganization, findProject, listProjectsForUser, resolveProjectAccess, updateProject } from '@/server/tenancy/projects';
import {
  deletedOutput,
  invitationListOutput,
  invitationOutput,
  memberListOutput,
  memberOrInvitationOutput,
  memberRemovedOutput,
  organizationListOutput,
  organizationOutput,
  projectListOutput,
  whoamiOutput,
  invitationCreateBody,
  invitationResource,
  memberPutBody,
  memberResource,
  organizationCreateBody,
  organizationPatchBody,
  organizationResource,
  projectCreateBody,
  projectPatchBody,
} from '@/server/tenancy/resources';
import { hasPlatformRole, roleAtLeast, type OrganizationRole, type ProjectRole, type SessionUser } from '@/server/tenancy/roles';
import { findUserByEmail } from '@/server/tenancy/users';

/** The core group: who a token acts for, organizations, projects and their members. */
export const coreApi: ApiGroup = {
  name: 'core',
  description: 'Identity of the calling token; organizations, projects (create, read, delete) and their members and invitations (user and operator tokens)',
};

/**
 * What `user` may do on an organization or project named in the path, as a membership scope:
 * their role there (NotFound where they have none: another tenant's is never revealed), Forbidden
 * below the role: `owner` for changes, otherwise any role there (an organization's `member`, a
 * project's `viewer`). Platform operators may read any of them.
 */
async function scopeFor(db: Db, user: SessionUser, kind: 'organization' | 'project', slug: string, need: 'owner' | 'any'): Promise<MemberScope> {
  if (kind === 'organization') {
    const minRole: OrganizationRole = need === 'owner' ? 'owner' : 'member';
    const { organization, role } = await resolveOrganizationAccess(db, user, slug);
    if (!(role ? roleAtLeast(role, minRole) : minRole === 'member')) {
      throw new DomainError('Forbidden', `this needs the ${minRole} role in organization "${slug}"`);
    }
    return { organizationId: organization.id };
  }
  const minRole: ProjectRole = need === 'owner' ? 'owner' : 'viewer';
  if (minRole === 'viewer' && hasPlatformRole(user, 'operator')) return { projectId: (await findProject(db, slug)).id };
  const access = await resolveProjectAccess(db, user, slug);
  if (!roleAtLeast(access.role, minRole)) throw new DomainError('Forbidden', `this needs the ${minRole} role in project "${slug}"`);
  return { projectId: access.project.id };
}

/** Members and invitations routes, the same for an organization and for a project. */
function memberRoutes(kind: 'organization' | 'project'): RestRoute[] {
  const base = kind === 'organization' ? '/api/v1/organizations/{organization}' : '/api/v1/projects/{project}';
  const slugOf = (params: { organization?: string; project?: string }) => (kind === 'organization' ? params.organization! : params.project!);
  return [
    userRoute({
      method: 'GET',
      path: `${base}/members`,
      output: memberListOutput,
      group: coreApi,
      summary: `List the ${kind}'s members and their roles (any member; platform operators)`,
      handler: async ({ db, user, params }) => {
        const scope = await scopeFor(db, user, kind, slugOf(params), 'any');
        return { apiVersion: 'v1', kind: 'MemberList', items: (await listMembers(db, scope)).map(memberResource) };
      },
    }),
    userRoute({
      method: 'PUT',
      path: `${base}/members/{user}`,
      output: memberOrInvitationOutput,
      group: coreApi,
      summary: `Change a member's role on the ${kind} (owners): 200 with the Member; demoting the last owner is 409 LastOwner. Anyone else — with an account or without — is invited, never added: 202 with the Invitation (its link in status.link, shown this once; status.mail says whether it was mailed), and they join when they accept it`,
      body: jsonBody(memberPutBody[kind]),
      handler: async ({ db, user, params, body, actor }) => {
        const scope = await scopeFor(db, user, kind, slugOf(params), 'owner');
        const { spec } = body();
        const result = await addMemberByEmail(db, scope, params.user, spec.role, actor, { exact: true, invitedBy: user.id, mail: configuredMail() });
        if (result.outcome === 'invited') {
          return jsonReply(invitationResource(result.invitation, result.invitation.path, result.invitation.mail), { status: 202 });
        }
        const member = (await listMembers(db, scope)).find((m) => m.userId === result.userId)!;
        return memberResource(member);
      },
    }),
    userRoute({
      method: 'DELETE',
      path: `${base}/members/{user}`,
      output: memberRemovedOutput,
      group: coreApi,
      summary: `Remove a member from the ${kind} (owners), or leave it (the member themself). The last owner cannot be removed nor leave: 409 LastOwner`,
      handler: async ({ db, user, params, actor }) => {
        const leaving = params.user.trim().toLowerCase() === user.email.toLowerCase();
        const scope = await scopeFor(db, user, kind, slugOf(params), leaving ? 'any' : 'owner');
        const target = leaving ? { id: user.id } : await findUserByEmail(db, params.user);
        if (!target) throw new DomainError('NotFound', `user "${params.user}" is not a member`, 'user');
        const removed = await removeMember(db, scope, target.id, actor, { leaving });
        return { apiVersion: 'v1', kind: 'Status', status: 'Success', details: { name: params.user, role: removed.role, left: leaving } };
      },
    }),
    userRoute({
      method: 'GET',
      path: `${base}/invitations`,
      output: invitationListOutput,
      group: coreApi,
      summary: `List the ${kind}'s pending invitations (owners); their links are never shown again`,
      handler: async ({ db, user, params }) => {
        const scope = await scopeFor(db, user, kind, slugOf(params), 'owner');
        return { apiVersion: 'v1', kind: 'InvitationList', items: (await listInvitations(db, scope)).map((i) => invitationResource(i)) };
      },
    }),
    userRoute({
      method: 'POST',
      path: `${base}/invitations`,
      output: invitationOutput,
      group: coreApi,
      summary: `Invite an e-mail address to the ${kind} with a role (owners): 201 with the inviter's single-use link in status.link, shown this once; it expires after 7 days. It joins only a user who proves the address (verified account, single sign-on); with SMTP configured a second link, which may create an account, is mailed to the address (status.mail: sent, failed or off)`,
      body: jsonBody(invitationCreateBody[kind]),
      handler: async ({ db, user, params, body, actor }) => {
        const scope = await scopeFor(db, user, kind, slugOf(params), 'owner');
        const { spec } = body();
        const invitation = await createInvitation(db, { scope, email: spec.email, role: spec.role, invitedBy: user.id }, actor, configuredMail());
        return jsonReply(invitationResource(invitation, invitation.path, invitation.mail), { status: 201 });
      },
    }),
    userRoute({
      method: 'DELETE',
      path: `${base}/invitations/{id}`,
      output: deletedOutput,
      group: coreApi,
      summary: `Revoke a pending invitation to the ${kind} (owners): its link stops working at once`,
      handler: async ({ db, user, params, actor }) => {
        const scope = await scopeFor(db, user, kind, slugOf(params), 'owner');
        if (!/^[0-9a-f-]{36}$/i.test(params.id)) throw new DomainError('NotFound', 'no pending invitation with this id', 'id');
        await revokeInvitation(db, scope, params.id, actor);
        return { apiVersion: 'v1', kind: 'Status', status: 'Success', details: { name: params.id } };
      },
    }),
  ];
}

/** The REST v1 routes of tenancy: identity, organizations, projects, members and invitations. */
export const tenancyRoutes: RestRoute[] = [
  anyTokenRoute({
    method: 'GET',
    path: '/api/v1/whoami',
    output: whoamiOutput,
    group: coreApi,
    summary: 'The project (and cluster) a project token acts for, or the user an operator or user token acts for',
    handler: async ({ principal }) =>
      principal.kind === 'project'
        ? {
            project: principal.projectSlug,
            cluster: principal.clusterName,
            token: { id: principal.tokenId, name: principal.tokenName, kind: 'project', role: principal.role },
          }
        : principal.kind === 'operator'
          ? { project: null, cluster: null, operator: principal.userEmail, token: { id: principal.tokenId, name: principal.tokenName, kind: 'operator' } }
          : { project: null, cluster: null, user: principal.userEmail, token: { id: principal.tokenId, name: principal.tokenName, kind: 'user' } },
  }),

  userRoute({
    method: 'GET',
    path: '/api/v1/organizations',
    output: organizationListOutput,
    group: coreApi,
    summary: 'List the organizations the user belongs to, with their role (platform operators: every organization)',
    handler: async ({ db, user }) => ({
      apiVersion: 'v1',
      kind: 'OrganizationList',
      items: (await listOrganizationsForUser(db, user)).map(organizationResource),
    }),
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/organizations',
    output: organizationOutput,
    group: coreApi,
    summary: 'Create an organization (201); the user becomes its owner. Slugs are unique (409) and some are reserved (400)',
    body: jsonBody(organizationCreateBody),
    handler: async ({ db, user, body, actor }) => {
      const { metadata, spec } = body();
      const org = await createOrganization(db, { slug: metadata.name, name: spec.displayName, owner: user.id }, actor);
      return jsonReply(organizationResource({ ...org, projects: 0, role: 'owner' }), { status: 201 });
    },
  }),
  userRoute({
    method: 'GET',
    path: '/api/v1/organizations/{organization}',
    output: organizationOutput,
    group: coreApi,
    summary: 'Read an organization (members; platform operators)',
    handler: async ({ db, user, params }) => {
      const { organization, role } = await resolveOrganizationAccess(db, user, params.organization);
      const listed = (await listOrganizationsForUser(db, user)).find((o) => o.id === organization.id);
      return organizationResource({ ...organization, projects: listed?.projects ?? 0, createdAt: listed?.createdAt, role });
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/organizations/{organization}',
    output: organizationOutput,
    group: coreApi,
    summary: 'Rename an organization (owners): spec.displayName; the slug never changes',
    body: jsonBody(organizationPatchBody),
    handler: async ({ db, user, params, body, actor }) => {
      const scope = (await scopeFor(db, user, 'organization', params.organization, 'owner')) as { organizationId: string };
      return organizationResource(await renameOrganization(db, scope.organizationId, body().spec.displayName, actor));
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/organizations/{organization}',
    output: deletedOutput,
    group: coreApi,
    summary: 'Delete an organization that holds no projects (owners); 409 while it holds any',
    handler: async ({ db, user, params, actor }) => {
      const scope = (await scopeFor(db, user, 'organization', params.organization, 'owner')) as { organizationId: string };
      await deleteOrganization(db, scope.organizationId, actor);
      return { apiVersion: 'v1', kind: 'Status', status: 'Success', details: { name: params.organization } };
    },
  }),
  ...memberRoutes('organization'),

  userRoute({
    method: 'GET',
    path: '/api/v1/projects',
    output: projectListOutput,
    group: coreApi,
    summary: 'List the projects the user can see, with their role',
    handler: async ({ db, user }) => ({
      apiVersion: 'v1',
      kind: 'ProjectList',
      items: (await listProjectsForUser(db, user)).map((p) => ({
        apiVersion: 'v1',
        kind: 'Project',
        metadata: { name: p.slug, uid: p.id, organization: p.organizationSlug },
        spec: { displayName: p.name },
        status: { phase: p.phase, role: p.role },
      })),
    }),
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/projects',
    output: projectOutput,
    group: coreApi,
    summary:
      'Create a project in an organization (its owners and members; platform operators): 201, with its quota grants from the GrantCreationPolicies and the user as owner, in one transaction. Slugs are globally unique (409); some are reserved (400). Project tokens cannot create projects (403)',
    body: jsonBody(projectCreateBody),
    handler: async ({ db, user, body, actor }) => {
      const { metadata, spec } = body();
      const created = await createProjectFor(
        db,
        user,
        { organization: metadata.organization, slug: metadata.name, name: spec.displayName, description: spec.description },
        actor,
      );
      return jsonReply(projectResource(await findProject(db, created.slug), await getDeletionStatus(db, created.id)), { status: 201 });
    },
  }),

  projectReadRoute({
    method: 'GET',
    path: '/api/v1/projects/{project}',
    output: projectOutput,
    group: coreApi,
    summary:
      'Read the project: its phase (Active or Deleting) and, while Deleting, what is left and which objects wait on which dependency (attempts, next attempt, last error). Operator tokens may read any project; user tokens the projects their user is a member of.',
    handler: async ({ db, project }) => projectResource(await findProject(db, project.slug), await getDeletionStatus(db, project.id)),
  }),

  projectOrOperatorRoute({
    method: 'PATCH',
    path: '/api/v1/projects/{project}',
    output: projectOutput,
    group: coreApi,
    summary:
      "Change the project's display name and/or description (spec.displayName, spec.description; the slug never changes): an owner-role project token, a user token of a project owner, or an operator token. 409 ProjectDeleting while it is being deleted",
    minRole: 'owner',
    body: jsonBody(projectPatchBody),
    handler: async ({ db, project, body, actor }) => {
      const { spec } = body();
      await updateProject(db, project.id, { name: spec.displayName, description: spec.description }, actor);
      return projectResource(await findProject(db, project.slug), await getDeletionStatus(db, project.id));
    },
  }),

  projectOrOperatorRoute({
    method: 'DELETE',
    path: '/api/v1/projects/{project}',
    output: projectOutput,
    group: coreApi,
    summary:
      'Delete the project (202): phase Deleting at once (creates in it answer 409 ProjectDeleting, reads still work), every token of the project revoked, then its claims, leases, clusters, machines (verified provider cleanup), quota claims, grants and networks released by the worker; what waits on the provider is retried with capped backoff and shown in status. An owner-role project token, a user token of a project owner, or an operator token for any project. Idempotent.',
    minRole: 'owner',
    // Every token of the project is revoked (this one too, when it is the project's); asking again answers the same 202.
    handler: async ({ db, project, actor }) => {
      const status = await requestProjectDeletion(db, project.id, actor, 'deleted through the API');
      return jsonReply(projectResource(await findProject(db, project.slug), status), { status: 202 });
    },
  }),
  ...memberRoutes('project'),
];
