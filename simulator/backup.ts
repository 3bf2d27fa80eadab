/**
 * Backup and restore of the simulator's state file (`npm run start:simulator -- --backup FILE` /
 * `-- --restore FILE`). A backup copies the state file as it is on disk — always a whole state,
 * since every write replaces it atomically — after checking that it loads (so a backup is never of
 * a file the simulator would refuse). A restore checks the backup the same way (a newer version than
 * this simulator is refused, with the version named; an older one is migrated at the next start),
 * keeps the current state as `<state file>.before-restore.bak`, and puts the backup in its place
 * atomically. Restore with the simulator stopped: a running one would overwrite it at its next write.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { StateFileError, stateFromDocument } from './state';

async function checkedDocument(file: string): Promise<{ bytes: Buffer; schemaVersion: number; operations: number }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new StateFileError(file, `state file ${file} cannot be read: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new StateFileError(file, `state file ${file} is corrupt (not valid JSON: ${(error as Error).message})`);
  }
  const state = stateFromDocument(file, document);
  return { bytes, schemaVersion: (document as { schemaVersion: number }).schemaVersion, operations: state.operations.size };
}

/** Writes `bytes` to `target` durably and atomically (temp file, fsync, rename, directory fsync). */
async function writeDurably(target: string, bytes: Buffer): Promise<void> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, target);
  const directory = await open(path.dirname(target), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

export async function backupState(stateFile: string, target: string) {
  const checked = await checkedDocument(stateFile);
  await writeDurably(path.resolve(target), checked.bytes);
  return { from: stateFile, to: path.resolve(target), schemaVersion: checked.schemaVersion, operations: checked.operations };
}

export async function restoreState(source: string, stateFile: string) {
  const checked = await checkedDocument(path.resolve(source));
  let previous: string | null = `${stateFile}.before-restore.bak`;
  try {
    await copyFile(stateFile, previous);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    previous = null;
  }
  await writeDurably(stateFile, checked.bytes);
  return { from: path.resolve(source), to: stateFile, schemaVersion: checked.schemaVersion, operations: checked.operations, previous };
}
