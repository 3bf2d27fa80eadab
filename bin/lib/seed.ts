import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { organizations, settings } from '../../db/schema';
import { systemActor } from '../../server/audit/events';
import { seedFleet } from '../../server/fleet/catalogue';
import { addMembership, createOrganization } from '../../server/tenancy/projects';
import type { MemberRole, PlatformRole } from '../../server/tenancy/roles';
import { createUser } from '../../server/tenancy/users';
import { createProject } from '../../server/workflows/project-creation';

export interface DemoUser {
  email: string;
  name: string;
  platformRoles: PlatformRole[];
  memberships: { org?: string; project?: string; role: MemberRole }[];
}

export const demoUsers: DemoUser[] = [
  { email: 'tenant@example.com', name: 'Tina Tenant', platformRoles: [], memberships: [{ org: 'acme', role: 'owner' }] },
  { email: 'viewer@example.com', name: 'Victor Viewer', platformRoles: [], memberships: [{ project: 'acme-dev', role: 'viewer' }] },
  { email: 'globex@example.com', name: 'Greta Globex', platformRoles: [], memberships: [{ org: 'globex', role: 'owner' }] },
  { email: 'operator@example.com', name: 'Olga Operator', platformRoles: ['operator'], memberships: [] },
  { email: 'qa@example.com', name: 'Quentin QA', platformRoles: ['qa'], memberships: [] },
  { email: 'admin@example.com', name: 'Ada Admin', platformRoles: ['admin'], memberships: [] },
];

/**
 * Seeds the demo organizations, projects and users once per database (marked in `settings`).
 * Returns the sign-in passwords when it seeded (from `MERIDIAN_DEMO_PASSWORD`, else generated
 * per user), or null when the database was seeded before.
 */
export async function seedDemoData(db: Db, options: { password?: string } = {}): Promise<{ email: string; password: string }[] | null> {
  const [marker] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, 'demo_seeded_at'));
  if (marker) return null;
  const actor = systemActor('seed');
  const orgIds: Record<string, string> = {};
  for (const org of [
    { slug: 'acme', name: 'Acme Corporation' },
    { slug: 'globex', name: 'Globex Industries' },
  ]) {
    const [existing] = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.slug, org.slug));
    orgIds[org.slug] = existing?.id ?? (await createOrganization(db, org, actor)).id;
  }
  const projectIds: Record<string, string> = {};
  for (const p of [
    { org: 'acme', slug: 'acme-prod', name: 'Acme production' },
    { org: 'acme', slug: 'acme-dev', name: 'Acme development' },
    { org: 'globex', slug: 'globex-web', name: 'Globex web' },
  ]) {
    projectIds[p.slug] = (await createProject(db, { organizationId: orgIds[p.org], slug: p.slug, name: p.name }, actor)).id;
  }
  const credentials: { email: string; password: string }[] = [];
  for (const u of demoUsers) {
    const password = options.password ?? randomBytes(9).toString('base64url');
    const user = await createUser(
      db,
      { email: u.email, name: u.name, password, platformRoles: u.platformRoles, createdVia: 'seed', emailVerifiedBy: 'seed' },
      actor,
    );
    for (const m of u.memberships) {
      await addMembership(
        db,
        m.org ? { userId: user.id, role: m.role, organizationId: orgIds[m.org] } : { userId: user.id, role: m.role, projectId: projectIds[m.project!] },
        actor,
      );
    }
    credentials.push({ email: u.email, password });
  }
  await seedFleet(db);
  await db.insert(settings).values({ key: 'demo_seeded_at', value: new Date().toISOString() });
  return credentials;
}
