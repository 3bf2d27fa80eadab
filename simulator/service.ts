/**
 * The simulator service: owns the in-memory state and its durable store, runs the operation logic and the
 * fault switches, completes Running operations on time, and publishes durable log entries.
 *
 * Every method that answers a caller returns only after everything the answer reflects is durable
 * (mutations via commit, reads via the store's sync barrier), so no answer can reveal state a crash would lose.
 */
import { copyFile } from 'node:fs/promises';
import type {
  AssetState,
  FaultStats,
  FaultsView,
  LogEntry,
  OperationKind,
  OperationRecord,
  OperationRequest,
  OperationState,
  StoreStats,
} from '../lib/provider-wire';
import type { SimulatorConfig } from './config';
import { DurableStore } from './durable-store';
import { activeUnavailable, applyFaultPatch, clearAllFaults, expireFaults, nextFaultExpiry, type ParsedFaultPatch } from './faults';
import type { Logger } from './logger';
import { completeDueOperations, ensureAsset, nextCompletion, submitOperation, type OperationContext, type SubmitOutcome } from './operations';
import { appendLog, emptyState, loadStateFile, serializeState, STATE_SCHEMA_VERSION, toOperationRecord, type SimulatorState } from './state';

export interface RuntimeFaults {
  unavailable: 'reject' | 'reset' | null;
  hang: boolean;
  latencyMs: number;
}

export type LogListener = (entry: LogEntry) => void;

export class SimulatorService {
  readonly stats: FaultStats = { heldRequests: 0, refusedRequests: 0, delayedRequests: 0 };
  readonly startedAt = Date.now();
  private store!: DurableStore;
  private timer: NodeJS.Timeout | null = null;
  private timerAt: number | null = null;
  private lastPublishedSeq = 0;
  private readonly logListeners = new Set<LogListener>();
  private readonly faultListeners = new Set<() => void>();
  private closed = false;

  private constructor(
    private readonly config: SimulatorConfig,
    private readonly logger: Logger,
    private readonly state: SimulatorState,
  ) {}

  /**
   * Loads the state file (throws StateFileError when it is corrupt or of an unknown version), finishes what
   * came due while the process was down, seeds assets, and makes the result durable before returning.
   */
  static async open(config: SimulatorConfig, logger: Logger, onFatal: (error: unknown) => void): Promise<SimulatorService> {
    const loaded = await loadStateFile(config.stateFile);
    if (loaded?.migratedFrom !== undefined) {
      // The file as it was, before the first write of the migrated state (a downgrade restores it).
      const backup = `${config.stateFile}.v${loaded.migratedFrom}.bak`;
      await copyFile(config.stateFile, backup);
      logger.info('state migrated', { stateFile: config.stateFile, from: loaded.migratedFrom, to: STATE_SCHEMA_VERSION, backup });
    }
    const service = new SimulatorService(config, logger, loaded ?? emptyState());
    service.lastPublishedSeq = service.state.nextLogSeq - 1;
    service.store = await DurableStore.open({
      filePath: config.stateFile,
      snapshot: () => ({ data: serializeState(service.state, Date.now()), mark: service.state.nextLogSeq - 1 }),
      onDurable: (mark) => service.publish(mark),
      onFatal,
    });
    const now = Date.now();
    service.tick(now);
    for (const id of config.seedAssets) ensureAsset(service.state, id, service.context(now));
    await service.store.commit();
    service.scheduleTimer();
    logger.info('state loaded', {
      stateFile: config.stateFile,
      existed: loaded !== null,
      assets: service.state.assets.size,
      operations: service.state.operations.size,
      running: service.state.running.size,
    });
    return service;
  }

  private context(now: number): OperationContext {
    return {
      now,
      operationMs: this.config.operationMs,
      retainOperations: this.config.retainOperations,
      logEntries: this.config.logEntries,
    };
  }

  /** Brings time-driven state up to `now`; true when something changed (the caller commits). */
  private tick(now: number): boolean {
    const context = this.context(now);
    const completed = completeDueOperations(this.state, context);
    const expired = expireFaults(this.state, context);
    return completed > 0 || expired;
  }

  /** Arms one timer for the next completion or fault expiry, so they happen (and are logged) without a request. */
  private scheduleTimer(): void {
    if (this.closed) return;
    const candidates = [nextCompletion(this.state), nextFaultExpiry(this.state.faults)].filter((at): at is number => at !== null);
    const next = candidates.length ? Math.min(...candidates) : null;
    if (next === this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = next;
    if (next === null) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = null;
        if (this.tick(Date.now())) this.store.markChanged();
        this.scheduleTimer();
      },
      Math.max(0, next - Date.now()) + 1,
    );
  }

  /** Emits log entries up to `mark` (durable by now) to stdout and to live subscribers. */
  private publish(mark: number): void {
    if (mark <= this.lastPublishedSeq) return;
    let start = this.state.log.length;
    while (start > 0 && this.state.log[start - 1].seq > this.lastPublishedSeq) start--;
    for (let index = start; index < this.state.log.length && this.state.log[index].seq <= mark; index++) {
      const entry = this.state.log[index];
      this.logger.info(`${entry.type} ${entry.event}`, { event: entry });
      for (const listener of this.logListeners) listener(entry);
    }
    this.lastPublishedSeq = mark;
  }

  /** Mutation epilogue: (re)arm timers and wait until durable. */
  private async commit(): Promise<void> {
    this.scheduleTimer();
    await this.store.commit();
  }

  /** Read epilogue: anything the tick changed is committed; then wait until everything observed is durable. */
  private async barrier(changed: boolean): Promise<void> {
    if (changed) this.scheduleTimer();
    await (changed ? this.store.commit() : this.store.sync());
  }

  // ----- runtime --------------------------------------------------------------------------------------------

  /** The request-path faults in force now (time-based ones are not consumed). */
  runtimeFaults(now: number): RuntimeFaults {
    const faults = this.state.faults;
    return { unavailable: activeUnavailable(faults, now), hang: faults.hang, latencyMs: faults.latencyMs };
  }

  /** Submits an operation; resolves once the outcome (including a rejection's log entry) is durable. */
  async submit(request: OperationRequest, caller?: string): Promise<SubmitOutcome> {
    const now = Date.now();
    this.tick(now);
    const outcome = submitOperation(this.state, request, this.context(now), caller);
    const answer: SubmitOutcome = outcome.type === 'accepted' ? { ...outcome, operation: { ...outcome.operation } } : outcome;
    await this.commit();
    return answer;
  }

  /** Audits a refused runtime request (no or bad client certificate, foreign trust domain, target not authorized); resolves once durable. */
  async recordRefusal(refusal: { code: string; message: string; identity?: string; path: string; operation?: OperationRequest }): Promise<void> {
    const now = Date.now();
    this.tick(now);
    const op = refusal.operation;
    appendLog(
      this.state,
      {
        type: 'access',
        event: 'refused',
        errorCode: refusal.code,
        detail: `${refusal.path}: ${refusal.message}`,
        ...(refusal.identity ? { identity: refusal.identity } : {}),
        ...(op ? { operationId: op.id, kind: op.kind, assetId: op.assetId, bindingId: op.bindingId, epoch: op.epoch, result: 'Rejected' as const } : {}),
      },
      now,
      this.config.logEntries,
    );
    this.store.markChanged();
    await this.commit();
  }

  async getOperation(id: string): Promise<OperationRecord | undefined> {
    const changed = this.tick(Date.now());
    const operation = this.state.operations.get(id);
    const record = operation ? toOperationRecord({ ...operation }) : undefined;
    await this.barrier(changed);
    return record;
  }

  async getAsset(id: string): Promise<AssetState | undefined> {
    const changed = this.tick(Date.now());
    const asset = this.state.assets.get(id);
    const copy = asset ? { ...asset } : undefined;
    await this.barrier(changed);
    return copy;
  }

  health() {
    return { status: 'ok' as const, schemaVersion: STATE_SCHEMA_VERSION, uptimeMs: Date.now() - this.startedAt };
  }

  // ----- admin ----------------------------------------------------------------------------------------------

  async listAssets(limit: number): Promise<{ items: AssetState[]; total: number }> {
    const changed = this.tick(Date.now());
    const all = [...this.state.assets.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const items = all.slice(0, limit).map((asset) => ({ ...asset }));
    await this.barrier(changed);
    return { items, total: all.length };
  }

  /** Creates an asset explicitly; `created` false when it already existed. */
  async createAsset(id: string): Promise<{ asset: AssetState; created: boolean }> {
    const now = Date.now();
    this.tick(now);
    const { asset, created } = ensureAsset(this.state, id, this.context(now));
    const copy = { ...asset };
    await this.commit();
    return { asset: copy, created };
  }

  /** Newest first. */
  async listOperations(filter: { limit: number; assetId?: string; state?: OperationState; kind?: OperationKind }) {
    const changed = this.tick(Date.now());
    const matching = [...this.state.operations.values()]
      .reverse()
      .filter(
        (operation) =>
          (filter.assetId === undefined || operation.assetId === filter.assetId) &&
          (filter.state === undefined || operation.state === filter.state) &&
          (filter.kind === undefined || operation.kind === filter.kind),
      );
    const items = matching.slice(0, filter.limit).map((operation) => toOperationRecord({ ...operation }));
    await this.barrier(changed);
    return { items, total: matching.length };
  }

  storeStats(): StoreStats {
    const { writes, changes, bytesLastWrite, totalSerializeMs, totalWriteMs } = this.store.stats;
    return {
      stateFile: this.config.stateFile,
      writes,
      changes,
      bytesLastWrite,
      totalSerializeMs,
      totalWriteMs,
      assets: this.state.assets.size,
      operations: this.state.operations.size,
      running: this.state.running.size,
      uptimeMs: Date.now() - this.startedAt,
    };
  }

  faultsView(): FaultsView {
    return { faults: structuredClone(this.state.faults), stats: { ...this.stats } };
  }

  async readFaults(): Promise<FaultsView> {
    const changed = this.tick(Date.now());
    const view = this.faultsView();
    await this.barrier(changed);
    return view;
  }

  /** Applies a fault patch; `crashNow` asks the caller to exit right after answering. */
  async patchFaults(patch: ParsedFaultPatch): Promise<{ view: FaultsView; crashNow: boolean }> {
    const now = Date.now();
    this.tick(now);
    const { crashNow } = applyFaultPatch(this.state, patch, this.context(now));
    const view = this.faultsView();
    await this.commit();
    for (const listener of this.faultListeners) listener();
    return { view, crashNow };
  }

  async clearFaults(): Promise<FaultsView> {
    const now = Date.now();
    this.tick(now);
    clearAllFaults(this.state, this.context(now));
    const view = this.faultsView();
    await this.commit();
    for (const listener of this.faultListeners) listener();
    return view;
  }

  /** Entries after `afterSeq` (ascending, at most `limit`), or the newest `limit` entries. Only durable ones. */
  async getLog(options: { limit: number; afterSeq?: number }): Promise<{ items: LogEntry[]; lastSeq: number }> {
    const changed = this.tick(Date.now());
    await this.barrier(changed);
    const durable = this.durableLog();
    const items =
      options.afterSeq === undefined ? durable.slice(-options.limit) : durable.filter((entry) => entry.seq > (options.afterSeq ?? 0)).slice(0, options.limit);
    return { items, lastSeq: this.lastPublishedSeq };
  }

  private durableLog(): LogEntry[] {
    return this.state.log.filter((entry) => entry.seq <= this.lastPublishedSeq);
  }

  /**
   * Subscribes to durable log entries; returns the retained backlog after `afterSeq` (if given) and the
   * unsubscribe function. Backlog and subscription are taken together, so nothing is missed or repeated.
   */
  subscribeLog(listener: LogListener, afterSeq?: number): { backlog: LogEntry[]; unsubscribe: () => void } {
    const backlog = afterSeq === undefined ? [] : this.durableLog().filter((entry) => entry.seq > afterSeq);
    this.logListeners.add(listener);
    return { backlog, unsubscribe: () => this.logListeners.delete(listener) };
  }

  /** Called after every fault change (the HTTP layer releases held requests when hang is cleared). */
  onFaultsChanged(listener: () => void): void {
    this.faultListeners.add(listener);
  }

  /** Stops timers and waits for pending writes. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.store.close();
  }
}
