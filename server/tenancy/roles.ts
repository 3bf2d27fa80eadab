/**
 * Every membership role as the database orders them, least privileged first: `member` (an
 * organization's member: it sees the organization and creates projects in it, and holds no role on
 * its projects from that alone), then the project roles.
 */
export const memberRoles = ['member', 'viewer', 'editor', 'owner'] as const;
export type MemberRole = (typeof memberRoles)[number];

/** Roles on a project, from least to most privileged. */
export const projectRoles = ['viewer', 'editor', 'owner'] as const;
export type ProjectRole = (typeof projectRoles)[number];

/**
 * Roles on an organization: `owner` (owns every project of the organization, renames it, manages
 * its members, deletes it) and `member` (creates projects in it).
 */
export const organizationRoles = ['member', 'owner'] as const;
export type OrganizationRole = (typeof organizationRoles)[number];

/** The role on its projects that an organization role gives: owners own them, members hold none. */
export function projectRoleFromOrganization(role: MemberRole | null): ProjectRole | null {
  return role === 'owner' ? 'owner' : null;
}

export const platformRoles = ['operator', 'qa', 'admin'] as const;
export type PlatformRole = (typeof platformRoles)[number];

export function roleRank(role: MemberRole): number {
  return memberRoles.indexOf(role);
}

/** True when `held` is at least `needed`. */
export function roleAtLeast(held: MemberRole, needed: MemberRole): boolean {
  return roleRank(held) >= roleRank(needed);
}

/** The higher of two roles. */
export function maxRole<R extends MemberRole>(a: R | null, b: R | null): R | null {
  if (!a) return b;
  if (!b) return a;
  return roleRank(a) >= roleRank(b) ? a : b;
}

/** The signed-in principal as the domain sees it (no next-auth types here). */
export interface SessionUser {
  id: string;
  email: string;
  name: string;
  platformRoles: PlatformRole[];
}

export function hasPlatformRole(user: Pick<SessionUser, 'platformRoles'>, ...roles: PlatformRole[]): boolean {
  // admin holds every platform role.
  return user.platformRoles.includes('admin') || roles.some((r) => user.platformRoles.includes(r));
}
