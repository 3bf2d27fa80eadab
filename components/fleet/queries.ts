/**
 * Query inputs shared by the server pages (prefetch) and the client views: the same object means
 * the same cache entry, so the first render is hydrated, not refetched.
 */

import type { MachinePhase } from '@/server/fleet/phases';

export const MACHINES_PAGE_SIZE = 20;
export const QUEUE_PAGE_SIZE = 25;
export const CAPACITY_PAGE_SIZE = 25;
export const ALLOCATIONS_PAGE_SIZE = 25;
export const OPERATIONS_LIMIT = 50;
export const DASHBOARD_MACHINES = 5;
/** Networks offered in the request form's interface picker. */
export const NETWORK_CHOICES = 200;

/** Without a phase, the live machines; `Released` lists the released ones. */
export function machinesListInput(project: string, offset = 0, phase: MachinePhase | '' = '', search = '') {
  return { project, limit: MACHINES_PAGE_SIZE, offset, phase: phase || undefined, search: search.trim() || undefined };
}

/** One machine: by name the live one holding it (else the newest released); with `id`, exactly that (released) machine. */
export function machineInput(project: string, name: string, id?: string) {
  return id ? { project, name, id } : { project, name };
}

export function dashboardMachinesInput(project: string) {
  return { project, limit: DASHBOARD_MACHINES, offset: 0 };
}

/** One count per phase for the dashboard (a `limit: 1` page's total). */
export function phaseCountInput(project: string, phase: MachinePhase) {
  return { project, phase, limit: 1, offset: 0 };
}

export function networkChoicesInput(project: string) {
  return { project, limit: NETWORK_CHOICES, offset: 0 };
}

/** One more row than shown: the queue has no total, the extra row says a next page exists. */
export function queueInput(offset = 0) {
  return { limit: QUEUE_PAGE_SIZE + 1, offset };
}

export interface CapacityFilters {
  state: '' | 'Available' | 'Bound' | 'Cleaning' | 'Quarantined' | 'Retired';
  location: string;
  search: string;
  offset: number;
}
export const initialCapacityFilters: CapacityFilters = { state: '', location: '', search: '', offset: 0 };

export function capacityInput(f: CapacityFilters = initialCapacityFilters) {
  return { limit: CAPACITY_PAGE_SIZE, offset: f.offset, state: f.state || undefined, location: f.location || undefined, search: f.search.trim() || undefined };
}

export function allocationsInput(offset = 0) {
  return { limit: ALLOCATIONS_PAGE_SIZE + 1, offset };
}

export const operationsInput = { limit: OPERATIONS_LIMIT };
