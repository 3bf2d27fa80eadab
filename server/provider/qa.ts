/**
 * The QA console's side of the provider simulator: inspection, fault changes (each one audited) and
 * the "restart the simulator" request. Adapters (the tRPC router, the log relay) stay thin over this.
 *
 * Every call goes through the admin client, which has deadlines, so an unreachable or hung simulator
 * turns into a coded `Unavailable` error quickly instead of a hanging console.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { recordEvent, type Actor } from '@/server/audit/events';
import { DomainError } from '@/server/errors';
import type { CallOutcome, ProviderAdminClient } from './client';
import type {
  AssetList,
  FaultPatchSchema,
  FaultState,
  FaultStats,
  LogPage,
  OperationKind,
  OperationList,
  OperationState,
  StoreStats,
} from '@/lib/provider-wire';
import type { z } from 'zod';

/**
 * The PostgreSQL channel the supervisor (`npm start`, bin/lib/control.ts) LISTENs on, and the command that
 * starts a stopped or crashed simulator at once. Any web replica can send it: the database is shared.
 */
export const SUPERVISOR_CHANNEL = 'meridian_supervisor';
export const RESTART_SIMULATOR_COMMAND = 'restart:simulator';

/** Deadline for the status probe: short, so the console shows "unreachable" instead of waiting. */
const STATUS_TIMEOUT_MS = 2_000;

export type ParsedFaultPatch = z.output<typeof FaultPatchSchema>;

export type SimulatorStatus =
  | { configured: false; url: string | null; checkedAt: string }
  | { configured: true; reachable: false; url: string | null; reason: string; checkedAt: string }
  | {
      configured: true;
      reachable: true;
      url: string | null;
      faults: FaultState;
      /** Requests held, refused and delayed by the time-based faults since the simulator started. */
      faultStats: FaultStats;
      store: StoreStats;
      checkedAt: string;
    };

/** Why the admin API cannot be used from this deployment, in words for the console. */
export const NOT_CONFIGURED_MESSAGE =
  'The simulator admin API is not configured for this web server: set SIMULATOR_ADMIN_URL and SIMULATOR_ADMIN_TOKEN (npm start sets both for the simulator it supervises).';

/** The admin client, or an `Unavailable` error saying plainly that none is configured. */
export function requireAdminClient(client: ProviderAdminClient | null): ProviderAdminClient {
  if (!client) throw new DomainError('Unavailable', NOT_CONFIGURED_MESSAGE);
  return client;
}

/** A one-line reason for a non-result outcome (never includes tokens). */
export function outcomeReason(outcome: Exclude<CallOutcome<unknown>, { type: 'result' }>): string {
  if (outcome.type === 'unknown') {
    switch (outcome.reason) {
      case 'connection-refused':
        return 'connection refused: the simulator is not running (stopped or crashed)';
      case 'timeout':
        return `no answer in time (${outcome.message})`;
      case 'connection-lost':
        return 'the connection was lost before the simulator answered (it may have crashed)';
      default:
        return outcome.message;
    }
  }
  const { code, message } = outcome.error;
  // The admin API answers 404 on every path when the simulator runs without an admin token.
  if (code === 'NotFound') return 'the simulator has its admin API switched off (it was started without SIMULATOR_ADMIN_TOKEN)';
  if (code === 'Unauthorized') return "the simulator refused the admin token (SIMULATOR_ADMIN_TOKEN differs from the simulator's)";
  return `${code}: ${message}`;
}

/**
 * The value of an admin call, or a coded domain error: validation problems stay `ValidationFailed` (with
 * the field), everything else — unreachable, timed out, refused token — is `Unavailable` with the reason.
 */
export function adminValue<T>(outcome: CallOutcome<T>): T {
  if (outcome.type === 'result') return outcome.value;
  if (outcome.type === 'rejected' && (outcome.error.code === 'InvalidRequest' || outcome.error.code === 'InvalidJson')) {
    throw new DomainError('ValidationFailed', outcome.error.message, outcome.error.field);
  }
  throw new DomainError('Unavailable', `the simulator is unavailable: ${outcomeReason(outcome)}`);
}

/**
 * Whether the simulator answers, with its fault switches, fault counters and store figures. Never throws
 * for simulator trouble: an unreachable simulator is a status, with the reason.
 */
export async function simulatorStatus(client: ProviderAdminClient | null, url: string | null): Promise<SimulatorStatus> {
  const checkedAt = new Date().toISOString();
  if (!client) return { configured: false, url, checkedAt };
  const [faults, store] = await Promise.all([client.getFaults({ timeoutMs: STATUS_TIMEOUT_MS }), client.getStats({ timeoutMs: STATUS_TIMEOUT_MS })]);
  if (faults.type !== 'result') return { configured: true, reachable: false, url, reason: outcomeReason(faults), checkedAt };
  if (store.type !== 'result') return { configured: true, reachable: false, url, reason: outcomeReason(store), checkedAt };
  return { configured: true, reachable: true, url, faults: faults.value.faults, faultStats: faults.value.stats, store: store.value, checkedAt };
}

/** The simulator's assets (its own order), at most `limit`. */
export async function listSimulatorAssets(client: ProviderAdminClient, limit: number): Promise<AssetList> {
  return adminValue(await client.listAssets({ limit }));
}

/** Operation records, newest first, optionally only one state, kind or asset. */
export async function listSimulatorOperations(
  client: ProviderAdminClient,
  filter: { state?: OperationState; kind?: OperationKind; assetId?: string; limit: number },
): Promise<OperationList> {
  return adminValue(await client.listOperations(filter));
}

/** Log entries (ascending `seq`) after `afterSeq`, or the newest `limit` when it is absent. */
export async function readSimulatorLog(client: ProviderAdminClient, options: { afterSeq?: number; limit: number }): Promise<LogPage> {
  return adminValue(await client.getLog(options));
}

/** A short human description of a fault patch, stored as the audit event's reason. */
export function describeFaultPatch(patch: ParsedFaultPatch): string {
  const parts: string[] = [];
  if (patch.loseResponses !== undefined) {
    const n = patch.loseResponses;
    parts.push(n === 0 ? 'lost responses off' : n === 1 ? 'lose the next response' : `lose the next ${n} responses`);
  }
  if (patch.failOperations !== undefined) {
    const rule = patch.failOperations;
    parts.push(
      rule
        ? `fail the next ${rule.count === 1 ? '' : `${rule.count} `}${rule.kind ?? 'any-kind'} operation${rule.count === 1 ? '' : 's'}${rule.assetId ? ` on ${rule.assetId}` : ''}`
        : 'failing operations off',
    );
  }
  if (patch.latencyMs !== undefined) parts.push(patch.latencyMs > 0 ? `latency ${patch.latencyMs} ms` : 'latency off');
  if (patch.hang !== undefined) parts.push(patch.hang ? 'hang on' : 'hang off');
  if (patch.unavailable !== undefined) {
    const rule = patch.unavailable;
    parts.push(
      rule
        ? `unavailable (${rule.mode}) ${rule.durationMs === undefined ? 'until cleared' : `for ${Math.round(rule.durationMs / 1000)} s`}`
        : 'unavailable off',
    );
  }
  if (patch.cleanupFailAssets !== undefined) {
    parts.push(patch.cleanupFailAssets.length ? `cleanup fails for ${patch.cleanupFailAssets.join(', ')}` : 'cleanup failures off');
  }
  if (patch.crash !== undefined)
    parts.push(patch.crash === 'now' ? 'crash now' : patch.crash === 'nextOperation' ? 'crash on the next operation' : 'crash disarmed');
  return parts.join('; ');
}

/**
 * Applies a fault patch on the simulator, then — once the simulator accepted it — writes the audit event
 * (`simulator.crash` for an immediate crash, else `simulator.faults.set`) with the switches before and after.
 */
export async function setSimulatorFaults(db: DbOrTx, client: ProviderAdminClient, patch: ParsedFaultPatch, actor: Actor): Promise<FaultState> {
  const before = adminValue(await client.getFaults());
  const after = adminValue(await client.setFaults(patch));
  await recordEvent(db, {
    actor,
    action: patch.crash === 'now' ? 'simulator.crash' : 'simulator.faults.set',
    objectType: 'simulator',
    objectName: 'provider simulator',
    reason: describeFaultPatch(patch),
    before: before.faults,
    after: after.faults,
  });
  return after.faults;
}

/** Turns every fault off, then audits `simulator.faults.clear` with the switches before and after. */
export async function clearSimulatorFaults(db: DbOrTx, client: ProviderAdminClient, actor: Actor): Promise<FaultState> {
  const before = adminValue(await client.getFaults());
  const after = adminValue(await client.clearFaults());
  await recordEvent(db, {
    actor,
    action: 'simulator.faults.clear',
    objectType: 'simulator',
    objectName: 'provider simulator',
    reason: 'all faults cleared',
    before: before.faults,
    after: after.faults,
  });
  return after.faults;
}

/**
 * Asks the supervisor to start a stopped or crashed simulator now (cancelling its restart backoff), through
 * PostgreSQL NOTIFY so that it works from any web replica. Refused with `Conflict` while the simulator
 * answers (the supervisor only starts a process that is not running). Audited as `simulator.restart`.
 * The request is asynchronous: poll {@link simulatorStatus} until it is reachable again.
 */
export async function requestSimulatorRestart(
  db: DbOrTx,
  client: ProviderAdminClient | null,
  url: string | null,
  actor: Actor,
): Promise<{ requestedAt: string; reasonBefore: string | null }> {
  const status = await simulatorStatus(client, url);
  if (status.configured && status.reachable) {
    throw new DomainError('Conflict', 'the simulator is running and answering; a restart only starts a stopped or crashed simulator');
  }
  const reasonBefore = status.configured ? status.reason : null;
  await db.execute(sql`select pg_notify(${SUPERVISOR_CHANNEL}, ${RESTART_SIMULATOR_COMMAND})`);
  await recordEvent(db, {
    actor,
    action: 'simulator.restart',
    objectType: 'simulator',
    objectName: 'provider simulator',
    reason: reasonBefore ? `restart requested while unreachable: ${reasonBefore}` : 'restart requested',
    before: { reachable: false, reason: reasonBefore },
    after: { requested: RESTART_SIMULATOR_COMMAND },
  });
  return { requestedAt: new Date().toISOString(), reasonBefore };
}
