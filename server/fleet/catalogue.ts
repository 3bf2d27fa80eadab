import { asc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Db, DbOrTx } from '@/db/client';
import { query } from '@/db/query';
import { locations, machineCapacity, machineClasses, machineProfiles, serviceAvailability } from '@/db/schema/fleet';
import { env } from '@/server/env';
import { DomainError } from '@/server/errors';

/** Capacity whose availability evidence is older than this is not offered (stale evidence fails closed): FLEET_EVIDENCE_MAX_AGE_SECONDS. */
export function evidenceMaxAgeSeconds(): number {
  return env().FLEET_EVIDENCE_MAX_AGE_SECONDS;
}
export const MACHINE_SERVICE = 'machines';

/**
 * Whether machines may be placed in a location: it must be Ready and have exactly one availability
 * record for the machine service, saying Available. Anything else — missing, deleting, unavailable,
 * or more than one record — fails closed with the reason.
 */
export async function locationUsability(db: DbOrTx, locationId: string): Promise<{ usable: boolean; reason: string | null }> {
  const [loc] = await query(
    db,
    sql`
    select l.name, l.ready,
      coalesce((select json_agg(json_build_object('status', s.status, 'reason', s.reason)) from ${serviceAvailability} s
                where s.location_id = l.id and s.service = ${MACHINE_SERVICE}), '[]') as records
    from ${locations} l where l.id = ${locationId}`,
    z.object({ name: z.string(), ready: z.boolean(), records: z.array(z.object({ status: z.string(), reason: z.string().nullable() })) }),
  );
  if (!loc) return { usable: false, reason: 'location not found' };
  if (!loc.ready) return { usable: false, reason: `location ${loc.name} is not Ready` };
  const records = loc.records;
  if (records.length === 0) return { usable: false, reason: `location ${loc.name} publishes no availability for the machine service` };
  if (records.length > 1)
    return { usable: false, reason: `location ${loc.name} has ${records.length} conflicting availability records for the machine service` };
  if (records[0].status !== 'Available') {
    return { usable: false, reason: `the machine service is ${records[0].status} in ${loc.name}${records[0].reason ? `: ${records[0].reason}` : ''}` };
  }
  return { usable: true, reason: null };
}

/** The class, profile and location a request names (looked up concurrently), or NotFound for the first missing one. */
export async function findCatalogueIds(db: DbOrTx, input: { class: string; profile: string; location: string }) {
  const [[cls], [profile], [location]] = await Promise.all([
    db.select().from(machineClasses).where(eq(machineClasses.name, input.class)),
    db.select().from(machineProfiles).where(eq(machineProfiles.name, input.profile)),
    db.select().from(locations).where(eq(locations.name, input.location)),
  ]);
  if (!cls) throw new DomainError('NotFound', `machine class "${input.class}" not found`, 'class');
  if (!profile) throw new DomainError('NotFound', `machine profile "${input.profile}" not found`, 'profile');
  if (!location) throw new DomainError('NotFound', `location "${input.location}" not found`, 'location');
  return { cls, profile, location };
}

/** Locations × classes with free, healthy, fresh capacity counts and whether the location is usable. */
export async function availabilityMatrix(db: DbOrTx) {
  const locs = await db.select({ id: locations.id, name: locations.name, displayName: locations.displayName }).from(locations).orderBy(asc(locations.name));
  const counts = await query(
    db,
    sql`
    select c.location_id, k.name as class,
      count(*) filter (where c.state = 'Available' and c.health = 'Healthy' and c.available and c.observed_at > now() - ${`${evidenceMaxAgeSeconds()} seconds`}::interval)::int as free,
      count(*)::int as total
    from machine_capacity c join machine_classes k on k.id = c.class_id
    where c.state <> 'Retired' group by 1, 2`,
    z.object({ location_id: z.string(), class: z.string(), free: z.number(), total: z.number() }),
  );
  const out = [];
  for (const loc of locs) {
    const usability = await locationUsability(db, loc.id);
    out.push({
      location: loc.name,
      displayName: loc.displayName,
      usable: usability.usable,
      reason: usability.reason,
      classes: counts.filter((c) => c.location_id === loc.id).map((c) => ({ class: c.class, free: usability.usable ? c.free : 0, total: c.total })),
    });
  }
  return out;
}

export async function listCatalogue(db: DbOrTx) {
  const classes = await db.select().from(machineClasses).orderBy(asc(machineClasses.name));
  const profiles = await db
    .select({ name: machineProfiles.name, imageRef: machineProfiles.imageRef, imageDigest: machineProfiles.imageDigest })
    .from(machineProfiles)
    .orderBy(asc(machineProfiles.name));
  return { classes, profiles, locations: await availabilityMatrix(db) };
}

/**
 * The demo fleet: 3 locations (one whose machine service is Unavailable), 3 classes (the arm64
 * class needs operator approval), 2 profiles pinned by digest, 30 machines. Idempotent.
 */
export async function seedFleet(db: Db) {
  const [existing] = await db.select({ id: locations.id }).from(locations).limit(1);
  if (existing) return;
  const locs = [
    { name: 'ams1', displayName: 'Amsterdam 1', status: 'Available', reason: null },
    { name: 'fra1', displayName: 'Frankfurt 1', status: 'Available', reason: null },
    { name: 'lon1', displayName: 'London 1', status: 'Unavailable', reason: 'power maintenance' },
  ];
  const locIds: Record<string, string> = {};
  for (const l of locs) {
    const [row] = await db.insert(locations).values({ name: l.name, displayName: l.displayName }).returning({ id: locations.id });
    locIds[l.name] = row.id;
    await db.insert(serviceAvailability).values({ locationId: row.id, service: MACHINE_SERVICE, status: l.status, reason: l.reason });
  }
  const classes = [
    { name: 'c1.small', cores: 8, memoryGib: 32, arch: 'x86_64', requiresApproval: false },
    { name: 'c1.large', cores: 32, memoryGib: 256, arch: 'x86_64', requiresApproval: false },
    { name: 'a1.medium', cores: 64, memoryGib: 128, arch: 'arm64', requiresApproval: true },
  ];
  const classIds: Record<string, string> = {};
  for (const c of classes) classIds[c.name] = (await db.insert(machineClasses).values(c).returning({ id: machineClasses.id }))[0].id;
  await db.insert(machineProfiles).values([
    { name: 'ubuntu-24.04', imageRef: 'registry.example.com/os/ubuntu@sha256:' + 'a1'.repeat(32), imageDigest: 'sha256:' + 'a1'.repeat(32) },
    { name: 'debian-12', imageRef: 'registry.example.com/os/debian@sha256:' + 'd3'.repeat(32), imageDigest: 'sha256:' + 'd3'.repeat(32) },
  ]);
  const layout: [string, string, number][] = [
    ['ams1', 'c1.small', 6],
    ['ams1', 'c1.large', 3],
    ['ams1', 'a1.medium', 3],
    ['fra1', 'c1.small', 6],
    ['fra1', 'c1.large', 3],
    ['fra1', 'a1.medium', 3],
    ['lon1', 'c1.small', 4],
    ['lon1', 'c1.large', 2],
  ];
  for (const [loc, cls, count] of layout) {
    for (let i = 1; i <= count; i++) {
      await db
        .insert(machineCapacity)
        .values({ deviceRef: `dev-${loc}-${cls.replace('.', '')}-${String(i).padStart(2, '0')}`, classId: classIds[cls], locationId: locIds[loc] });
    }
  }
}
