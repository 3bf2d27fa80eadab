/**
 * What a system test starts from: a tenant project with an API token (seeded through the
 * database, as the e2e fixtures do), a corner of the fleet for it, and — through the REST API of
 * the web processes — its networks and clusters with their cluster tokens.
 */
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import type { Db } from '@/db/client';
import { systemActor } from '@/server/audit/events';
import { createOrganization } from '@/server/tenancy/projects';
import { createProject } from '@/server/workflows/project-creation';
import { createApiToken } from '@/server/tenancy/tokens';
import type { Api } from './api';

const actor = systemActor('system-test');

export interface World {
  projectId: string;
  slug: string;
  /** The project's editor token (networks, claims, machines, buckets). */
  token: string;
  /** Cluster name → its cluster-scoped token (CNI). */
  clusterTokens: Record<string, string>;
  clusters: string[];
  /** Machine request spec (class, profile, location) for the fleet corner. */
  machineSpec: { class: string; profile: string; location: string };
  devices: string[];
  /** Networks: `vpc` (IPv4 + IPv6, for claims and machine interfaces) and `pods` (IPv4, for the CNI). */
  networks: { vpc: string; pods: string };
}

async function must<T = any>(what: string, p: Promise<{ kind: string; body?: T; reason?: string; message?: string }>): Promise<T> {
  const o = await p;
  if (o.kind !== 'ack') throw new Error(`${what}: ${JSON.stringify(o)}`);
  return o.body as T;
}

/**
 * Seeds the project, its token and `capacity` machines of one class in one location; then creates
 * the networks and `clusters` through the API (alternating web processes).
 */
export async function makeWorld(db: Db, api: Api, options: { slug: string; capacity: number; clusters: string[]; podsCidr?: string }): Promise<World> {
  const org = await createOrganization(db, { slug: `${options.slug}-org`, name: `${options.slug} org` }, actor);
  const project = await createProject(db, { organizationId: org.id, slug: options.slug, name: options.slug }, actor);
  const { secret: token } = await createApiToken(db, { projectId: project.id, name: 'system-test', role: 'editor' }, actor);

  const tag = `${options.slug}-dc`;
  const [loc] = await db.insert(locations).values({ name: tag, displayName: tag }).returning({ id: locations.id });
  await db.insert(serviceAvailability).values({ locationId: loc.id, service: 'machines', status: 'Available' });
  const [cls] = await db
    .insert(machineClasses)
    .values({ name: `${tag}.metal`, cores: 16, memoryGib: 64, arch: 'x86_64', requiresApproval: false })
    .returning({ id: machineClasses.id });
  const digest = 'sha256:' + 'ef'.repeat(32);
  await db.insert(machineProfiles).values({ name: `${tag}-os`, imageRef: `example/os@${digest}`, imageDigest: digest });
  const devices = Array.from({ length: options.capacity }, (_, i) => `dev-${tag}-${i}`);
  for (const deviceRef of devices) await db.insert(machineCapacity).values({ deviceRef, classId: cls.id, locationId: loc.id });

  const base = `/api/v1/projects/${options.slug}`;
  await must(
    'create network vpc',
    api.request('POST', `${base}/networks`, token, { metadata: { name: 'vpc' }, spec: { cidrs: [{ cidr: '10.20.0.0/16' }, { cidr: '2001:db8:20::/48' }] } }),
  );
  await must(
    'create network pods',
    api.request('POST', `${base}/networks`, token, { metadata: { name: 'pods' }, spec: { cidrs: [{ cidr: options.podsCidr ?? '10.64.0.0/16' }] } }),
  );
  const clusterTokens: Record<string, string> = {};
  for (const name of options.clusters) {
    const created = await must<{ token: { secret: string } }>(
      `create cluster ${name}`,
      api.request('POST', `${base}/clusters`, token, { name, network: 'pods' }),
    );
    clusterTokens[name] = created.token.secret;
  }
  return {
    projectId: project.id,
    slug: options.slug,
    token,
    clusterTokens,
    clusters: options.clusters,
    machineSpec: { class: `${tag}.metal`, profile: `${tag}-os`, location: tag },
    devices,
    networks: { vpc: 'vpc', pods: 'pods' },
  };
}
