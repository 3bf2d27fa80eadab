/**
 * The client's side of the story: what each request was told. An acknowledged (2xx) claim, lease
 * or machine must exist afterwards exactly as acknowledged; a refused one must have left nothing;
 * an uncertain one may go either way, but nothing may exist that no request could have created.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import type { Outcome } from './api';

/** `present`/`absent` are what the client was told for certain; `maybe` is honest uncertainty. */
type Belief = 'present' | 'absent' | 'maybe';

interface ClaimEntry {
  belief: Belief;
  cidr?: string;
}
interface LeaseEntry {
  cluster: string;
  containerId: string;
  belief: Belief;
  address?: string;
}
interface MachineEntry {
  belief: Belief;
  /** Whether a release was acknowledged (then it must end Released), or may have happened. */
  release: 'none' | 'acked' | 'maybe';
}

type Uncertain = Outcome & { uncertain?: boolean };

/** Whether a change may have happened without a 2xx: an unanswered attempt, or a refusal after one. */
const changedMaybe = (o: Uncertain) => o.kind === 'unknown' || (o.kind === 'refused' && Boolean(o.uncertain));

export class Ledger {
  readonly claims = new Map<string, ClaimEntry>();
  readonly leases = new Map<string, LeaseEntry>();
  readonly machines = new Map<string, MachineEntry>();
  /** Outcome counts per operation, for the report. */
  readonly counts: Record<string, Record<string, number>> = {};

  private count(op: string, o: Outcome) {
    const key = o.kind === 'refused' ? `refused:${o.code}` : o.kind;
    (this.counts[op] ??= {})[key] = (this.counts[op][key] ?? 0) + 1;
  }

  claimCreated(name: string, o: Uncertain) {
    this.count('claim.create', o);
    if (o.kind === 'ack') this.claims.set(name, { belief: 'present', cidr: o.body.status.allocatedCIDR });
    else if (o.kind === 'unsent' || (o.kind === 'refused' && !o.uncertain)) this.claims.set(name, { belief: 'absent' });
    else this.claims.set(name, { belief: 'maybe' });
  }

  claimDeleted(name: string, o: Uncertain) {
    this.count('claim.delete', o);
    const entry = this.claims.get(name)!;
    // Deleted now, or already gone (an unanswered earlier attempt can only have deleted it).
    if (o.kind === 'ack' || (o.kind === 'refused' && o.code === 'NotFound')) this.claims.set(name, { belief: 'absent' });
    else if (changedMaybe(o)) this.claims.set(name, { ...entry, belief: 'maybe' });
  }

  leaseAdded(cluster: string, containerId: string, o: Uncertain) {
    this.count('lease.add', o);
    const key = `${cluster}/${containerId}`;
    if (o.kind === 'ack') this.leases.set(key, { cluster, containerId, belief: 'present', address: o.body.ips[0]?.address?.split('/')[0] });
    else if (o.kind === 'unsent' || (o.kind === 'refused' && !o.uncertain)) this.leases.set(key, { cluster, containerId, belief: 'absent' });
    else this.leases.set(key, { cluster, containerId, belief: 'maybe' });
  }

  leaseDeleted(cluster: string, containerId: string, o: Uncertain) {
    this.count('lease.del', o);
    const key = `${cluster}/${containerId}`;
    const entry = this.leases.get(key)!;
    if (o.kind === 'ack') this.leases.set(key, { ...entry, belief: 'absent' });
    else if (changedMaybe(o)) this.leases.set(key, { ...entry, belief: 'maybe' });
  }

  machineRequested(name: string, o: Uncertain) {
    this.count('machine.create', o);
    // 409 after an unanswered attempt: that attempt created it (names are never reused here).
    if (o.kind === 'ack' || (o.kind === 'refused' && o.code === 'Conflict' && o.uncertain)) this.machines.set(name, { belief: 'present', release: 'none' });
    else if (o.kind === 'unsent' || (o.kind === 'refused' && !o.uncertain)) this.machines.set(name, { belief: 'absent', release: 'none' });
    else this.machines.set(name, { belief: 'maybe', release: 'none' });
  }

  machineReleased(name: string, o: Uncertain) {
    this.count('machine.release.requested', o);
    const entry = this.machines.get(name)!;
    if (o.kind === 'ack') this.machines.set(name, { belief: 'present', release: 'acked' });
    else if (changedMaybe(o)) this.machines.set(name, { ...entry, release: entry.release === 'acked' ? 'acked' : 'maybe' });
  }

  /** Claims, leases and machines the client believes exist, for picking what to delete next. */
  live<T>(map: Map<string, T & { belief: Belief }>): string[] {
    return [...map.entries()].filter(([, e]) => e.belief === 'present').map(([k]) => k);
  }
}

/**
 * Compares the ledger with the project's rows: everything acknowledged is there as acknowledged,
 * everything refused or deleted is gone, and nothing exists that the ledger does not know of.
 * `steadyPhases`: the phases a machine may be in once everything has settled.
 */
export async function checkLedger(db: Db, projectId: string, ledger: Ledger, steadyPhases: string[]): Promise<string[]> {
  const out: string[] = [];
  const claims = new Map(
    (
      (await db.execute(sql`select name, allocated_cidr::text as cidr from ip_claims where project_id = ${projectId} and owner_ref is null`)) as unknown as {
        name: string;
        cidr: string;
      }[]
    ).map((c) => [c.name, c.cidr]),
  );
  for (const [name, e] of ledger.claims) {
    const cidr = claims.get(name);
    if (e.belief === 'present' && cidr !== e.cidr) out.push(`acknowledged claim ${name} (${e.cidr}) is ${cidr ? `bound to ${cidr}` : 'missing'}`);
    if (e.belief === 'absent' && cidr) out.push(`claim ${name} was refused or deleted, but exists (${cidr})`);
  }
  for (const name of claims.keys()) if (!ledger.claims.has(name)) out.push(`claim ${name} exists, but no request created it`);

  const leases = new Map(
    (
      (await db.execute(sql`
        select c.name || '/' || l.container_id as key, host(l.address) as address from pod_leases l join clusters c on c.id = l.cluster_id
        where l.project_id = ${projectId}`)) as unknown as { key: string; address: string }[]
    ).map((l) => [l.key, l.address]),
  );
  for (const [key, e] of ledger.leases) {
    const address = leases.get(key);
    if (e.belief === 'present' && address !== e.address) out.push(`acknowledged lease ${key} (${e.address}) is ${address ? `at ${address}` : 'missing'}`);
    if (e.belief === 'absent' && address) out.push(`lease ${key} was refused or deleted, but exists (${address})`);
  }
  for (const key of leases.keys()) if (!ledger.leases.has(key)) out.push(`lease ${key} exists, but no request created it`);

  const machines = new Map(
    (
      (await db.execute(sql`select name, phase, phase_reason from machines where project_id = ${projectId}`)) as unknown as {
        name: string;
        phase: string;
        phase_reason: string | null;
      }[]
    ).map((m) => [m.name, m]),
  );
  for (const [name, e] of ledger.machines) {
    const m = machines.get(name);
    if (e.belief === 'present' && !m) out.push(`acknowledged machine ${name} is missing`);
    if (e.belief === 'absent' && m) out.push(`machine ${name} was refused, but exists (${m.phase})`);
    if (m && e.release === 'acked' && m.phase !== 'Released') out.push(`machine ${name} was released (202), but is ${m.phase}: ${m.phase_reason}`);
    if (m && !steadyPhases.includes(m.phase)) out.push(`machine ${name} did not settle: ${m.phase} (${m.phase_reason})`);
  }
  for (const name of machines.keys()) if (!ledger.machines.has(name)) out.push(`machine ${name} exists, but no request created it`);
  return out;
}
