import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { DomainError } from '@/server/errors';
import { configuredMail } from '@/server/mail/smtp';
import { createInvitation, listInvitations, revokeInvitation } from '@/server/tenancy/invitations';
import { listMembers, removeMember, setMemberRole } from '@/server/tenancy/members';
import { listAllOrganizations } from '@/server/tenancy/organizations';
import { listAllProjects } from '@/server/tenancy/projects';
import { invitationResource, memberResource } from '@/server/tenancy/resources';
import { memberRoles } from '@/server/tenancy/roles';
import { declareKind, type KindContext, type StoredObject } from '../declare';
import { inRolledBackTransaction } from '../dry-run';

/**
 * The tenancy kinds of the Kubernetes API, over the domain functions REST v1 calls: a project's
 * members and invitations (iam.miloapis.com/v1alpha1, in its control plane; owners write them),
 * and the platform's projects (resourcemanager.miloapis.com/v1alpha1, in the platform control
 * plane, read by operators). Cluster-scoped: membership is the project's as a whole.
 */

const IAM = { group: 'iam.miloapis.com', version: 'v1alpha1', categories: ['meridian', 'iam'], namespaced: false };

const write = <T>(ctx: KindContext, dryRun: boolean, fn: (db: DbOrTx) => Promise<T>) => (dryRun ? inRolledBackTransaction(ctx.db, fn) : fn(ctx.db));
const invitedBy = (ctx: KindContext) => (ctx.actor.type === 'user' ? ctx.actor.id : null);

function stored(
  r: { metadata: { name: string; uid?: string; creationTimestamp?: Date | string | null }; spec: object; status: object },
  createdAt?: Date | null,
): StoredObject {
  return {
    uid: r.metadata.uid ?? r.metadata.name,
    name: r.metadata.name,
    createdAt: createdAt ?? (r.metadata.creationTimestamp ? new Date(r.metadata.creationTimestamp) : null),
    spec: { ...r.spec } as Record<string, unknown>,
    status: JSON.parse(JSON.stringify(r.status)) as Record<string, unknown>,
  };
}

// ---- Member -------------------------------------------------------------------------------------

async function members({ db, projectId }: KindContext) {
  return (await listMembers(db, { projectId })).map((m) => ({ userId: m.userId, object: stored(memberResource(m), m.since) }));
}

export const memberKind = declareKind({
  ...IAM,
  kind: 'Member',
  plural: 'members',
  singular: 'member',
  shortNames: [],
  description:
    'A member of the project and their role, named by e-mail address. Members join by accepting an Invitation (no create); an owner changes a role or removes a member; the last owner stays.',
  spec: z.strictObject({ role: z.enum(memberRoles).describe('member, viewer, editor or owner') }),
  status: z.object({ displayName: z.string(), since: z.string(), disabled: z.boolean() }),
  immutable: [],
  printerColumns: [
    { name: 'Role', type: 'string', description: 'Their role in the project', value: (o) => o.spec.role },
    { name: 'Display Name', type: 'string', description: 'Their name', value: (o) => o.status.displayName, priority: 1 },
  ],
  fieldSelectors: { 'spec.role': (o) => String(o.spec.role) },
  writeRole: 'owner',
  storage: {
    get: async (ctx, name) => (await members(ctx)).find((m) => m.object.name === name)?.object,
    list: async (ctx) => (await members(ctx)).map((m) => m.object),
    async update(ctx, current, next, { dryRun }) {
      if (next.role === current.spec.role) return { changed: false };
      await write(ctx, dryRun, (db) => setMemberRole(db, { projectId: ctx.projectId }, current.uid, next.role, ctx.actor));
      return { changed: true };
    },
    async delete(ctx, name, { dryRun }) {
      const member = (await members(ctx)).find((m) => m.object.name === name);
      if (!member) throw new DomainError('NotFound', `member "${name}" not found`, 'name');
      await write(ctx, dryRun, (db) => removeMember(db, { projectId: ctx.projectId }, member.userId, ctx.actor));
    },
  },
});

// ---- Invitation ---------------------------------------------------------------------------------

async function invitations({ db, projectId }: KindContext) {
  return (await listInvitations(db, { projectId })).map((i) => stored(invitationResource(i), i.createdAt));
}

export const invitationKind = declareKind({
  ...IAM,
  kind: 'Invitation',
  plural: 'invitations',
  singular: 'invitation',
  shortNames: ['inv'],
  description:
    "A pending invitation of an e-mail address to the project with a role (owners). Its single-use link is in status.link of the create's answer only; delete revokes it.",
  spec: z.strictObject({
    email: z.string().max(254).describe('The address invited. Immutable.'),
    role: z.enum(memberRoles).describe('The role it joins with. Immutable.'),
  }),
  status: z.object({ expiresAt: z.string(), invitedBy: z.string().nullable().optional(), link: z.string().optional(), mail: z.string().optional() }),
  immutable: [
    { path: 'spec.email', value: (s) => s.email },
    { path: 'spec.role', value: (s) => s.role },
  ],
  printerColumns: [
    { name: 'Email', type: 'string', description: 'The address invited', value: (o) => o.spec.email },
    { name: 'Role', type: 'string', description: 'The role it joins with', value: (o) => o.spec.role },
    { name: 'Expires', type: 'string', description: 'When the link stops working', value: (o) => o.status.expiresAt },
  ],
  fieldSelectors: { 'spec.email': (o) => String(o.spec.email) },
  readRole: 'owner',
  writeRole: 'owner',
  generatedName: true,
  storage: {
    get: async (ctx, name) => (await invitations(ctx)).find((i) => i.name === name),
    list: (ctx) => invitations(ctx),
    async create(ctx, { spec }, { dryRun }) {
      const input = { scope: { projectId: ctx.projectId }, email: spec.email, role: spec.role, invitedBy: invitedBy(ctx) };
      // A dry run mails nothing: the mail goes out only once the invitation is committed.
      const created = await write(ctx, dryRun, (db) => createInvitation(db, input, ctx.actor, dryRun ? null : configuredMail()));
      return stored(invitationResource(created, created.path, created.mail));
    },
    async delete(ctx, name, { dryRun }) {
      if (!/^[0-9a-f-]{36}$/i.test(name)) throw new DomainError('NotFound', `invitation "${name}" not found`, 'name');
      await write(ctx, dryRun, (db) => revokeInvitation(db, { projectId: ctx.projectId }, name, ctx.actor));
    },
  },
});

// ---- Platform: Project --------------------------------------------------------------------------

async function everyProject({ db }: KindContext): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  for (let offset = 0; ; offset += 500) {
    const { items } = await listAllProjects(db, { limit: 500, offset });
    for (const p of items) {
      out.push({
        uid: p.id,
        name: p.slug,
        createdAt: new Date(p.createdAt),
        spec: { displayName: p.name, organizationRef: { name: p.organizationSlug } },
        status: {
          phase: p.phase,
          ...(p.deletionRequestedAt ? { deletionRequestedAt: new Date(p.deletionRequestedAt).toISOString(), waitingOn: p.waitingOn } : {}),
        },
      });
    }
    if (items.length < 500) return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

export const platformProjectKind = declareKind({
  group: 'resourcemanager.miloapis.com',
  version: 'v1alpha1',
  categories: ['meridian'],
  namespaced: false,
  plane: 'platform',
  kind: 'Project',
  plural: 'projects',
  singular: 'project',
  shortNames: ['proj'],
  description: "Every project of the platform with its organization and phase (each project's own API is its control plane).",
  spec: z.strictObject({
    displayName: z.string().optional().describe("The project's name"),
    organizationRef: z.strictObject({ name: z.string() }).optional().describe('Its organization. Immutable.'),
  }),
  status: z.object({ phase: z.string().describe('Active or Deleting') }),
  immutable: [{ path: 'spec.organizationRef', value: (s) => (s.organizationRef as { name?: string } | undefined)?.name }],
  printerColumns: [
    { name: 'Organization', type: 'string', description: 'Its organization', value: (o) => (o.spec.organizationRef as { name?: string } | undefined)?.name },
    { name: 'Phase', type: 'string', description: 'Active or Deleting', value: (o) => o.status.phase },
  ],
  fieldSelectors: {
    'status.phase': (o) => String(o.status.phase),
    'spec.organizationRef.name': (o) => (o.spec.organizationRef as { name?: string } | undefined)?.name,
  },
  readRole: 'operator',
  writeRole: 'operator',
  storage: {
    get: async (ctx, name) => (await everyProject(ctx)).find((p) => p.name === name),
    list: everyProject,
  },
});

// ---- Platform: Organization ---------------------------------------------------------------------

async function everyOrganization({ db }: KindContext): Promise<StoredObject[]> {
  return (await listAllOrganizations(db)).map((o) => ({
    uid: o.id,
    name: o.slug,
    createdAt: o.createdAt,
    spec: { displayName: o.name },
    status: { projects: o.projects },
  }));
}

export const platformOrganizationKind = declareKind({
  group: 'resourcemanager.miloapis.com',
  version: 'v1alpha1',
  categories: ['meridian'],
  namespaced: false,
  plane: 'platform',
  kind: 'Organization',
  plural: 'organizations',
  singular: 'organization',
  shortNames: ['org'],
  description:
    'Every organization of the platform, named by its slug, with how many projects it holds (`kubectl get projects --field-selector spec.organizationRef.name=…` lists them).',
  spec: z.strictObject({ displayName: z.string().optional().describe("The organization's name") }),
  status: z.object({ projects: z.number().describe('How many projects it holds') }),
  immutable: [],
  printerColumns: [
    { name: 'Display Name', type: 'string', description: "The organization's name", value: (o) => o.spec.displayName },
    { name: 'Projects', type: 'integer', description: 'How many projects it holds', value: (o) => o.status.projects },
  ],
  fieldSelectors: {},
  readOnly: true,
  readRole: 'operator',
  writeRole: 'operator',
  storage: {
    get: async (ctx, name) => (await everyOrganization(ctx)).find((o) => o.name === name),
    list: everyOrganization,
  },
});
