import { statusOf, statusTable, type Tone } from '@/components/ui/status';
import type { inferRouterOutputs } from '@trpc/server';
import type { CapacityState } from '@/server/fleet/operator';
import type { MachinePhase } from '@/server/fleet/phases';
import type { AppRouter } from '@/server/trpc/root';

type Outputs = inferRouterOutputs<AppRouter>['fleet'];
export type Catalogue = Outputs['catalogue'];
export type CatalogueLocation = Catalogue['locations'][number];
export type CatalogueClass = Catalogue['classes'][number];
export type MachineDetail = Outputs['machines']['get'];
export type TimelineEntry = MachineDetail['timeline'][number];
export type QueueItem = Outputs['queue']['list'][number];
export type InventoryRow = Outputs['inventory'][number];
export type CapacityRow = Outputs['capacity']['list']['items'][number];
export type { CapacityState };

/*
 * The operator procedures below return raw rows (`Record<string, unknown>`); these are the columns
 * their SQL selects (server/fleet/operator.ts). Timestamps arrive as PostgreSQL text and bigints as
 * strings from raw queries, hence the loose types.
 */
export type AllocationRow = {
  id: string;
  status: string;
  epoch: number | string;
  createdAt: string | Date;
  deviceRef: string;
  machineId: string;
  machine: string;
  phase: MachinePhase;
  project: string;
};
export type OperationRow = {
  id: string;
  kind: string;
  state: string;
  attempts: number;
  lastError: string | null;
  epoch: number | string;
  fencingToken: number | string;
  deviceRef: string;
  updatedAt: string | Date;
  machine: string | null;
  project: string | null;
  /** The SPIFFE ID the provider says drove the operation (null when it never accepted it: the refusal names the identity). */
  caller?: string | null;
};
export type LastOperation = { id: string; kind: string; state: string; attempts: number; lastError: string | null; updatedAt?: string };

export const phaseOrder: MachinePhase[] = ['Pending', 'AwaitingApproval', 'Allocating', 'Bound', 'Installing', 'Ready', 'Releasing', 'Released', 'Failed'];

export type { Tone };
/** Colours of phases, capacity states and operations: from the console's one status table (components/ui/status.ts). */
export const phaseTone = Object.fromEntries(Object.entries(statusTable.machine).map(([k, v]) => [k, v.tone])) as Record<MachinePhase, Tone>;

/** Bar colours for phase and capacity-state segments (charts need solid fills, badges pastel ones). */
export const phaseFill: Record<MachinePhase, string> = {
  Pending: 'bg-amber-300',
  AwaitingApproval: 'bg-amber-500',
  Allocating: 'bg-sky-300',
  Bound: 'bg-sky-400',
  Installing: 'bg-brand-500',
  Ready: 'bg-emerald-500',
  Releasing: 'bg-violet-400',
  Released: 'bg-slate-300',
  Failed: 'bg-red-500',
};

export const capacityStates: CapacityState[] = ['Available', 'Bound', 'Cleaning', 'Quarantined', 'Retired'];
export const capacityTone = Object.fromEntries(Object.entries(statusTable.capacity).map(([k, v]) => [k, v.tone])) as Record<CapacityState, Tone>;
export const capacityFill: Record<CapacityState, string> = {
  Available: 'bg-emerald-500',
  Bound: 'bg-brand-500',
  Cleaning: 'bg-amber-400',
  Quarantined: 'bg-red-500',
  Retired: 'bg-slate-300',
};

export const operationTone = (state: string): Tone => statusOf('operation', state).tone;

/** `AwaitingApproval` → `Awaiting approval`. */
export const phaseLabel = (phase: string) => statusOf('machine', phase).word;

/**
 * Timestamps from raw SQL arrive as PostgreSQL text (`2025-01-01 12:00:00.123+00`), from drizzle
 * selects as Dates; both become Dates here (every browser parses the ISO form).
 */
export function toDate(value: string | Date | null | undefined): Date | null {
  if (!value) return null;
  if (value instanceof Date) return value;
  const d = new Date(value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
  return Number.isNaN(d.getTime()) ? null : d;
}

/** `12 s ago`, `3 min ago`, `2 h ago`, `4 d ago`. */
export function ago(value: string | Date | null | undefined, now = Date.now()): string {
  const d = toDate(value);
  if (!d) return '—';
  const s = Math.max(0, Math.round((now - d.getTime()) / 1000));
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} d ago`;
}
