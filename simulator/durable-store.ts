/**
 * Durable, atomic persistence of the simulator state with group commit.
 *
 * Every write replaces the whole state file atomically: write `<file>.tmp`, fsync it, rename it over the
 * file, fsync the directory. A reader therefore sees either the old or the new file, whatever moment the
 * process is killed at.
 *
 * Group commit: mutations are applied to the in-memory state synchronously and then call {@link markChanged}
 * (or {@link commit}). At most one write is in flight; mutations arriving meanwhile are batched into the next
 * write, which snapshots the state when it starts. {@link sync} resolves only once a write that started after
 * the caller's mutation has been fsync'd, so a request is answered only when everything it changed — and
 * everything it observed — is durable.
 *
 * The file I/O runs on a dedicated writer thread, synchronously there (open, write, fsync, close, rename, fsync
 * of the directory): one hop back to the event loop per write instead of one per system call, and the event
 * loop keeps parsing requests — which form the next batch — while the disk works.
 *
 * A failed write is fatal (`onFatal`): memory would otherwise run ahead of the disk and a later answer
 * could reveal state that a crash would lose. Fail-stop lets a supervisor restart from the durable file.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** The writer thread (plain CommonJS, evaluated: no loader or build step needed). */
const WRITER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const directory = fs.openSync(workerData.directory, 'r');
const temporary = workerData.filePath + '.tmp';
parentPort.on('message', (message) => {
  if (message.type === 'close') {
    fs.closeSync(directory);
    parentPort.close();
    return;
  }
  try {
    const fd = fs.openSync(temporary, 'w', 0o600);
    try {
      for (let offset = 0; offset < message.data.length; ) offset += fs.writeSync(fd, message.data, offset);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, workerData.filePath);
    fs.fsyncSync(directory);
    parentPort.postMessage({ ok: true });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String((error && error.message) || error) });
  }
});
`;

/** Replaces the file atomically on the writer thread; one write at a time (the store never overlaps them). */
class AtomicFileWriter {
  private pending: { resolve: () => void; reject: (error: Error) => void } | null = null;
  private readonly worker: Worker;
  private failure: Error | null = null;

  constructor(filePath: string) {
    // execArgv: [] keeps loaders (tsx) out of the thread: it runs plain CommonJS.
    this.worker = new Worker(WRITER_SOURCE, { eval: true, execArgv: [], workerData: { filePath, directory: path.dirname(filePath) } });
    this.worker.on('message', (message: { ok: boolean; error?: string }) => {
      const pending = this.pending;
      this.pending = null;
      if (message.ok) pending?.resolve();
      else pending?.reject(new Error(`writing ${filePath} failed: ${message.error}`));
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      this.pending?.reject(error);
      this.pending = null;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`state writer thread exited (${code})`)));
  }

  write(data: Uint8Array): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ type: 'write', data });
    });
  }

  async close(): Promise<void> {
    if (this.failure) {
      await this.worker.terminate();
      return;
    }
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage({ type: 'close' });
    await exited;
  }
}

export interface DurableStoreOptions {
  filePath: string;
  /** Serializes the current in-memory state; `mark` is handed to `onDurable` once that snapshot is on disk. */
  snapshot: () => { data: Uint8Array; mark: number };
  onDurable?: (mark: number) => void;
  /** Called once if a write fails; the process must stop. */
  onFatal: (error: unknown) => void;
}

export interface DurableStoreStats {
  writes: number;
  /** Changes made durable (several per write under load: the group-commit batch size is changes / writes). */
  changes: number;
  bytesLastWrite: number;
  lastWriteMs: number;
  totalSerializeMs: number;
  totalWriteMs: number;
}

export class DurableStore {
  private changeSeq = 0;
  private durableSeq = 0;
  private waiters: Array<{ seq: number; resolve: () => void }> = [];
  private scheduled = false;
  private writing = false;
  private failed = false;
  private flushing: Promise<void> = Promise.resolve();
  readonly stats: DurableStoreStats = { writes: 0, changes: 0, bytesLastWrite: 0, lastWriteMs: 0, totalSerializeMs: 0, totalWriteMs: 0 };

  private constructor(
    private readonly options: DurableStoreOptions,
    private readonly writer: AtomicFileWriter,
  ) {}

  /** Creates the directory if needed, removes a temp file left by a crash, and starts the writer thread. */
  static async open(options: DurableStoreOptions): Promise<DurableStore> {
    await mkdir(path.dirname(options.filePath), { recursive: true });
    await rm(`${options.filePath}.tmp`, { force: true });
    return new DurableStore(options, new AtomicFileWriter(options.filePath));
  }

  /** Records that the in-memory state changed; a write containing the change is scheduled. */
  markChanged(): void {
    this.changeSeq++;
    if (!this.writing && !this.scheduled && !this.failed) {
      this.scheduled = true;
      // setImmediate rather than a microtask: lets the I/O callbacks already queued in this loop turn add their
      // mutations to the same write.
      setImmediate(() => {
        this.flushing = this.flush();
      });
    }
  }

  /** Resolves once every change recorded so far is durable (immediately if there is none pending). */
  sync(): Promise<void> {
    if (this.durableSeq >= this.changeSeq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq: this.changeSeq, resolve }));
  }

  /** markChanged + sync. */
  commit(): Promise<void> {
    this.markChanged();
    return this.sync();
  }

  /** Waits until every recorded change is durable, then stops the writer thread. No changes may follow. */
  async close(): Promise<void> {
    if (!this.failed) await this.sync();
    await this.flushing;
    await this.writer.close();
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.writing = true;
    try {
      while (this.durableSeq < this.changeSeq) {
        const target = this.changeSeq;
        const started = performance.now();
        const { data, mark } = this.options.snapshot();
        const serialized = performance.now();
        await this.writer.write(data);
        const finished = performance.now();
        this.stats.changes += target - this.durableSeq;
        this.durableSeq = target;
        this.stats.writes++;
        this.stats.bytesLastWrite = data.byteLength;
        this.stats.lastWriteMs = finished - started;
        this.stats.totalSerializeMs += serialized - started;
        this.stats.totalWriteMs += finished - serialized;
        this.options.onDurable?.(mark);
        this.releaseWaiters();
      }
    } catch (error) {
      this.failed = true;
      this.options.onFatal(error);
      return;
    }
    this.writing = false;
  }

  private releaseWaiters(): void {
    let released = 0;
    while (released < this.waiters.length && this.waiters[released].seq <= this.durableSeq) {
      this.waiters[released].resolve();
      released++;
    }
    if (released > 0) this.waiters.splice(0, released);
  }
}
