/**
 * The console's change notifications: what changed, as ids and the owning project only — never
 * names, reasons or any other content (a browser that needs more reads it through the usual,
 * scoped queries). The live-update adapter (server/live) cuts them from the change feed
 * (feed.ts): committed changes only, never a rolled-back one, and nothing written for them.
 */

/**
 * What changed: a machine (phase, reason, deletion), an allocation, a provider operation, a
 * capacity; a network or pool, an IP claim (or retained block), a pod lease or cluster, an
 * allowance bucket, a grant, claim or request of quota, an invitation or membership.
 */
export type ChangeKind = 'machine' | 'allocation' | 'operation' | 'capacity' | 'network' | 'claim' | 'lease' | 'bucket' | 'quota' | 'invitation';

/** One change as it travels: `k` kind, `id` the object, `p` its project (null: fleet-wide, operators only). */
export interface Change {
  k: ChangeKind;
  id: string;
  p: string | null;
}
