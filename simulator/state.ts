/**
 * The simulator's whole state and its versioned file format (`schemaVersion`, {@link STATE_SCHEMA_VERSION}).
 *
 * The file is the only durable record: `{ schemaVersion, savedAt, nextLogSeq, assets, operations, faults, log }`.
 * A file of an older version is migrated forward at start ({@link MIGRATIONS}, one step per version;
 * the old file is kept next to it as `<file>.v<N>.bak` before the first write). Loading refuses (with
 * the file path in the message) anything that is not valid JSON, is of a newer version than this
 * simulator (the version named), or does not match the schema — the simulator never overwrites a
 * file it cannot read.
 *
 * Versions: 1 — the original format; 2 — operations may carry `caller` (the SPIFFE ID that submitted
 * them) and the log has `access` entries (refused runtime requests, with `identity`).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import {
  AssetStateSchema,
  FaultStateSchema,
  LogEntrySchema,
  OperationFailureCodeSchema,
  OperationRecordSchema,
  type AssetState,
  type FaultState,
  type LogEntry,
  type OperationRecord,
} from '../lib/provider-wire';

export const STATE_SCHEMA_VERSION = 2;

/**
 * Forward migrations: `MIGRATIONS[n]` turns a version-n document into a version-(n+1) one. Each is a
 * pure function of the parsed JSON; the result is validated against the current schema afterwards.
 */
export const MIGRATIONS: Record<number, (document: Record<string, unknown>) => Record<string, unknown>> = {
  // 1 → 2: new optional fields only (`caller`, `identity`, log type `access`); records of version 1 stay as they are.
  1: (document) => ({ ...document, schemaVersion: 2 }),
};

/** Migrates a parsed document of version `from` to the current version; returns the versions it went through. */
export function migrateDocument(filePath: string, document: Record<string, unknown>, from: number): { document: Record<string, unknown>; steps: number[] } {
  let current = document;
  const steps: number[] = [];
  for (let version = from; version < STATE_SCHEMA_VERSION; version++) {
    const step = MIGRATIONS[version];
    if (!step)
      throw new StateFileError(
        filePath,
        `state file ${filePath} has schemaVersion ${from}, which this simulator cannot migrate (no step from ${version}); refusing to start`,
      );
    current = step(current);
    steps.push(version);
  }
  return { document: current, steps };
}

/**
 * An operation as stored. A Running operation carries `planned`: its result, decided (and made durable)
 * at submission so that it is deterministic across restarts; it is not part of the wire record.
 */
export const StoredOperationSchema = OperationRecordSchema.extend({
  planned: z
    .object({
      state: z.enum(['Succeeded', 'Failed']),
      error: z.object({ code: OperationFailureCodeSchema, message: z.string() }).optional(),
    })
    .optional(),
});
export type StoredOperation = z.infer<typeof StoredOperationSchema>;

export const StateFileSchema = z.object({
  schemaVersion: z.literal(STATE_SCHEMA_VERSION),
  savedAt: z.iso.datetime(),
  nextLogSeq: z.int().min(1),
  assets: z.array(AssetStateSchema),
  /** In submission order. */
  operations: z.array(StoredOperationSchema),
  faults: FaultStateSchema,
  /** The newest log entries, ascending seq. */
  log: z.array(LogEntrySchema),
});

export interface SimulatorState {
  assets: Map<string, AssetState>;
  /** Insertion order is submission order (relied on by retention and by completion tie-breaks). */
  operations: Map<string, StoredOperation>;
  /** Ids of Running operations, in submission order. */
  running: Set<string>;
  faults: FaultState;
  log: LogEntry[];
  nextLogSeq: number;
  /** In memory only: operation count above which retention scans again (see pruneOperations). */
  nextPruneAt: number;
}

export function emptyFaults(): FaultState {
  return {
    loseResponses: 0,
    failOperations: null,
    latencyMs: 0,
    hang: false,
    unavailable: null,
    cleanupFailAssets: [],
    crashOnNextOperation: false,
  };
}

export function emptyState(): SimulatorState {
  return { assets: new Map(), operations: new Map(), running: new Set(), faults: emptyFaults(), log: [], nextLogSeq: 1, nextPruneAt: 0 };
}

/** Refusal to use a state file; the message always names the file. */
export class StateFileError extends Error {
  constructor(
    readonly filePath: string,
    message: string,
  ) {
    super(message);
    this.name = 'StateFileError';
  }
}

/** The wire record of a stored operation (drops the internal `planned` result). */
export function toOperationRecord(operation: StoredOperation): OperationRecord {
  if (!operation.planned) return operation;
  const { planned: _planned, ...record } = operation;
  return record;
}

/**
 * UTF-8 JSON of records that never change again (terminal operations, log entries), keyed by object identity,
 * so a write re-encodes only what can still change (Running operations, assets, faults) and otherwise copies bytes.
 */
const frozenJson = new WeakMap<object, Buffer>();

function jsonOfFrozen(value: StoredOperation | LogEntry): Buffer {
  let json = frozenJson.get(value);
  if (json === undefined) {
    json = Buffer.from(JSON.stringify(value), 'utf8');
    frozenJson.set(value, json);
  }
  return json;
}

const COMMA = Buffer.from(',');

function jsonArray(parts: Buffer[], items: Buffer[]): void {
  parts.push(Buffer.from('['));
  items.forEach((item, index) => {
    if (index > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(Buffer.from(']'));
}

/** The state file's bytes (a {@link StateFile} as JSON, keys in schema order). */
export function serializeState(state: SimulatorState, now: number): Buffer {
  const parts: Buffer[] = [
    Buffer.from(`{"schemaVersion":${STATE_SCHEMA_VERSION},"savedAt":${JSON.stringify(new Date(now).toISOString())},"nextLogSeq":${state.nextLogSeq},"assets":`),
  ];
  parts.push(Buffer.from(JSON.stringify([...state.assets.values()]), 'utf8'), Buffer.from(',"operations":'));
  jsonArray(
    parts,
    [...state.operations.values()].map((operation) =>
      operation.state === 'Running' ? Buffer.from(JSON.stringify(operation), 'utf8') : jsonOfFrozen(operation),
    ),
  );
  parts.push(Buffer.from(`,"faults":${JSON.stringify(state.faults)},"log":`));
  jsonArray(parts, state.log.map(jsonOfFrozen));
  parts.push(Buffer.from('}'));
  return Buffer.concat(parts);
}

/**
 * Validates a parsed state document (migrating an older version forward first) and builds the
 * in-memory state; throws {@link StateFileError}. `migratedFrom` is set when a migration ran.
 */
export function stateFromDocument(filePath: string, input: unknown): SimulatorState & { migratedFrom?: number } {
  const isObject = typeof input === 'object' && input !== null && !Array.isArray(input);
  const version = isObject ? (input as { schemaVersion?: unknown }).schemaVersion : undefined;
  if (version === undefined) {
    throw new StateFileError(filePath, `state file ${filePath} is corrupt: no schemaVersion; refusing to start (move it aside or restore it)`);
  }
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new StateFileError(
      filePath,
      `state file ${filePath} has unknown schemaVersion ${JSON.stringify(version)} (this simulator reads schemaVersion ${STATE_SCHEMA_VERSION}); refusing to start`,
    );
  }
  if (version > STATE_SCHEMA_VERSION) {
    throw new StateFileError(
      filePath,
      `state file ${filePath} has schemaVersion ${version}, newer than this simulator's ${STATE_SCHEMA_VERSION} (written by a later version); refusing to start: run that version, or restore a backup of version ${STATE_SCHEMA_VERSION} or older`,
    );
  }
  const document = version < STATE_SCHEMA_VERSION ? migrateDocument(filePath, input as Record<string, unknown>, version).document : input;
  const parsed = StateFileSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StateFileError(
      filePath,
      `state file ${filePath} is corrupt: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch'}; refusing to start`,
    );
  }
  const file = parsed.data;
  const state = emptyState();
  for (const asset of file.assets) {
    if (state.assets.has(asset.id)) throw new StateFileError(filePath, `state file ${filePath} is corrupt: duplicate asset ${asset.id}; refusing to start`);
    state.assets.set(asset.id, asset);
  }
  for (const operation of file.operations) {
    if (state.operations.has(operation.id)) {
      throw new StateFileError(filePath, `state file ${filePath} is corrupt: duplicate operation ${operation.id}; refusing to start`);
    }
    if (!state.assets.has(operation.assetId)) {
      throw new StateFileError(
        filePath,
        `state file ${filePath} is corrupt: operation ${operation.id} names unknown asset ${operation.assetId}; refusing to start`,
      );
    }
    if ((operation.state === 'Running') !== (operation.planned !== undefined && operation.completesAt !== undefined)) {
      throw new StateFileError(
        filePath,
        `state file ${filePath} is corrupt: operation ${operation.id} is inconsistent (state vs planned result); refusing to start`,
      );
    }
    state.operations.set(operation.id, operation);
    if (operation.state === 'Running') state.running.add(operation.id);
  }
  state.faults = file.faults;
  state.log = file.log;
  state.nextLogSeq = file.nextLogSeq;
  return version < STATE_SCHEMA_VERSION ? Object.assign(state, { migratedFrom: version }) : state;
}

/** Reads the state file; null when it does not exist yet. Throws {@link StateFileError} when it cannot be used. */
export async function loadStateFile(filePath: string): Promise<(SimulatorState & { migratedFrom?: number }) | null> {
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StateFileError(filePath, `state file ${filePath} cannot be read: ${(error as Error).message}; refusing to start`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new StateFileError(
      filePath,
      `state file ${filePath} is corrupt (not valid JSON: ${(error as Error).message}); refusing to start (move it aside or restore it)`,
    );
  }
  return stateFromDocument(filePath, document);
}

/** What a log entry carries besides its sequence number and time. */
export type LogEntryInput = Omit<LogEntry, 'seq' | 'at'>;

/** Appends an entry to the bounded log (only the newest `limit` entries are kept). */
export function appendLog(state: SimulatorState, entry: LogEntryInput, now: number, limit: number): LogEntry {
  const full: LogEntry = { seq: state.nextLogSeq++, at: new Date(now).toISOString(), ...entry };
  state.log.push(full);
  if (state.log.length > limit) state.log.splice(0, state.log.length - limit);
  return full;
}
