/** Membership roles from least to most privileged. */
export const memberRoles = ['viewer', 'editor', 'owner'] as const;
export type MemberRole = (typeof memberRoles)[number];

export const platformRoles = ['operator', 'qa', 'admin'] as const;
export type PlatformRole = (typeof platformRoles)[number];

export function roleRank(role: MemberRole): number {
  return memberRoles.indexOf(role);
}

/** True when `held` is at least `needed`. */
export function roleAtLeast(held: MemberRole, needed: MemberRole): boolean {
  return roleRank(held) >= roleRank(needed);
}

/** The higher of two roles (an organization role and a project role combine this way). */
export function maxRole(a: MemberRole | null, b: MemberRole | null): MemberRole | null {
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
