/**
 * Resource versions are commit positions: the commit LSN of a transaction times VERSION_SCALE, plus
 * the place of the object among the objects that transaction changed (a batch of claims committed
 * together still gives each its own version), so that a watcher resuming from the version of any
 * event misses nothing and repeats nothing, even within one transaction.
 */
const VERSION_SCALE = 4096n;

/** The version of the `index`th object change (0-based) of the transaction committed at `lsn` (a transaction changing more than VERSION_SCALE objects gives its last ones the same version). */
export const eventVersion = (lsn: bigint, index: number): bigint => lsn * VERSION_SCALE + BigInt(Math.min(index, Number(VERSION_SCALE) - 1));

/** The version that covers every change of the transactions committed at `lsn` or before. */
export const versionThrough = (lsn: bigint): bigint => lsn * VERSION_SCALE + VERSION_SCALE - 1n;

/** The commit position a version lies in, and whether it covers that transaction whole. */
export const positionOf = (version: bigint): { lsn: bigint; whole: boolean } => ({
  lsn: version / VERSION_SCALE,
  whole: version % VERSION_SCALE === VERSION_SCALE - 1n,
});

/**
 * The resource version of each object this process knows of: the version of the last committed
 * change of it, as the change feed delivered it (watch.ts records them). An object not changed since the feed started has the feed's starting position — not
 * earlier than its last change, earlier than any change still to come — so versions are strictly
 * increasing in commit order, whichever process answers (docs/watch.md).
 */

const versions = new Map<string, bigint>();
let floor = 0n;
const MAX_REMEMBERED = 500_000;

/** The object `uid` changed: its new version. */
export function recordVersion(uid: string, version: bigint): void {
  versions.delete(uid);
  versions.set(uid, version);
  if (versions.size > MAX_REMEMBERED) {
    // Forget the oldest tenth; the floor moves past them (an object's version may then rise without a change: never fall).
    let n = MAX_REMEMBERED / 10;
    for (const [key, value] of versions) {
      if (n-- <= 0) break;
      versions.delete(key);
      if (value > floor) floor = value;
    }
  }
}

/** The feed (re)started: every object not changed since has at most version `from`. */
export function raiseVersionFloor(from: bigint): void {
  if (from > floor) floor = from;
}

/** `metadata.resourceVersion` of an object (a positive decimal integer). */
export function versionOf(uid: string | null | undefined): string {
  const v = (uid ? versions.get(uid) : undefined) ?? floor;
  return String(v > 0n ? v : 1n);
}
