/**
 * The resource version of each object this process knows of: the commit position (LSN) of the
 * last committed transaction that changed it, as the change feed delivered it (watch.ts records
 * them). An object not changed since the feed started has the feed's starting position — not
 * earlier than its last change, earlier than any change still to come — so versions are strictly
 * increasing in commit order, whichever process answers (docs/watch.md).
 */

const versions = new Map<string, bigint>();
let floor = 0n;
const MAX_REMEMBERED = 500_000;

/** The object `uid` changed in the transaction committed at `lsn`. */
export function recordVersion(uid: string, lsn: bigint): void {
  versions.delete(uid);
  versions.set(uid, lsn);
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

/** The feed (re)started at `from`: every object not changed since has at most this version. */
export function raiseVersionFloor(from: bigint): void {
  if (from > floor) floor = from;
}

/** `metadata.resourceVersion` of an object (a positive decimal integer). */
export function versionOf(uid: string | null | undefined): string {
  const v = (uid ? versions.get(uid) : undefined) ?? floor;
  return String(v > 0n ? v : 1n);
}
