/**
 * The console's one mapping from a state to its colour and word. Every badge, cell and summary
 * that shows a state reads it here, so the same state looks and reads the same on every page, and
 * the rules hold everywhere: a state that means "cannot be used" or "went wrong" is never green,
 * and green is only for states that are fine as they are.
 */
export type Tone = 'slate' | 'green' | 'amber' | 'red' | 'blue';
export interface Status {
  tone: Tone;
  word: string;
}

const s = (tone: Tone, word: string): Status => ({ tone, word });

export const statusTable = {
  /** A machine's phase. */
  machine: {
    Pending: s('amber', 'Pending'),
    AwaitingApproval: s('amber', 'Awaiting approval'),
    Allocating: s('blue', 'Allocating'),
    Bound: s('blue', 'Bound'),
    Installing: s('blue', 'Installing'),
    Ready: s('green', 'Ready'),
    Releasing: s('blue', 'Releasing'),
    Released: s('slate', 'Released'),
    Failed: s('red', 'Failed'),
  },
  /** A device's capacity state. */
  capacity: {
    Available: s('green', 'Available'),
    Bound: s('blue', 'Bound'),
    Cleaning: s('amber', 'Cleaning'),
    Quarantined: s('red', 'Quarantined'),
    Retired: s('slate', 'Retired'),
  },
  /** A device's health as people should read it (see `deviceHealth`). */
  health: {
    Healthy: s('green', 'Healthy'),
    NotVerified: s('amber', 'Not verified'),
    Degraded: s('amber', 'Degraded'),
    Unhealthy: s('red', 'Unhealthy'),
  },
  /** A provider operation. */
  operation: {
    Admitted: s('blue', 'Admitted'),
    Submitted: s('blue', 'Submitted'),
    Running: s('blue', 'Running'),
    Succeeded: s('green', 'Succeeded'),
    Unknown: s('amber', 'Unknown'),
    Failed: s('red', 'Failed'),
    Rejected: s('red', 'Rejected'),
    Superseded: s('slate', 'Superseded'),
  },
  /** Free machines of a class in a location: none free means a request waits (amber), not that anything is wrong. */
  freeCapacity: {
    Free: s('green', 'free'),
    NoneFree: s('amber', 'none free'),
  },
  /** A location for the machine service. */
  location: {
    Available: s('green', 'Available'),
    Unavailable: s('red', 'Unavailable'),
  },
  /** An address pool. */
  pool: {
    Ready: s('green', 'Ready'),
    Exhausted: s('red', 'Exhausted'),
  },
  /** A project. */
  project: {
    Active: s('green', 'Active'),
    Deleting: s('amber', 'Deleting'),
  },
  /** A quota increase request or resource claim. */
  request: {
    Pending: s('amber', 'Pending'),
    Approved: s('green', 'Approved'),
    Granted: s('green', 'Granted'),
    Rejected: s('red', 'Rejected'),
    Denied: s('red', 'Denied'),
  },
  /** A quota bucket's use against its limit. */
  quota: {
    Ok: s('green', 'Within limit'),
    Near: s('amber', 'Near limit (≥ 80 %)'),
    Full: s('red', 'At limit'),
    Over: s('red', 'Over limit'),
  },
  /** Whether a grant, registration or policy is in force. */
  active: {
    Active: s('green', 'Active'),
    Inactive: s('amber', 'Inactive'),
    Ready: s('green', 'Ready'),
    NotReady: s('red', 'Not ready'),
  },
  /** Whether an account or a token can still be used. */
  access: {
    Active: s('green', 'Active'),
    Disabled: s('red', 'Disabled'),
    Revoked: s('red', 'Revoked'),
  },
} as const satisfies Record<string, Record<string, Status>>;

export type StatusKind = keyof typeof statusTable;

/** `AwaitingApproval` → `Awaiting approval`: the word for a state the table does not list. */
export function stateWords(state: string): string {
  return state.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/ ([A-Z])/g, (_, c: string) => ` ${c.toLowerCase()}`);
}

/** The colour and word of `state` of this kind of object; a state the table does not know is grey, in words. */
export function statusOf(kind: StatusKind, state: string): Status {
  const row = (statusTable[kind] as Record<string, Status>)[state];
  return row ?? s('slate', stateWords(state));
}

/**
 * A device's health as people should read it: the provider's last report, except that a
 * quarantined device is not called healthy (its wipe failed or could not be verified).
 */
export function deviceHealth(health: string, capacityState: string): Status {
  if (health === 'Healthy') return capacityState === 'Quarantined' ? statusTable.health.NotVerified : statusTable.health.Healthy;
  return statusOf('health', health).tone === 'slate' ? s('red', stateWords(health)) : statusOf('health', health);
}
