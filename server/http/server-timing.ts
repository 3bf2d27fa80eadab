import type { IncomingMessage } from 'node:http';

/**
 * The web process's own time for a request, from the moment the front door (front-door.ts) took it
 * to the moment its answer is written: REST v1 answers carry it as a W3C Server-Timing header,
 * `server-timing: app;dur=1.84` (milliseconds), so a client — an operator with curl, the CNI plugin's
 * logs, bench/cni-lone-add — can tell the server's time from the network's and its own.
 */
const arrivals = new WeakMap<IncomingMessage, bigint>();

/** Notes when the web process took `req` (the front door, first thing). */
export function markArrival(req: IncomingMessage, at: bigint = process.hrtime.bigint()): void {
  arrivals.set(req, at);
}

/** The Server-Timing header's value for `req` now, or undefined when its arrival was not noted. */
export function serverTiming(req: IncomingMessage | undefined): string | undefined {
  const at = req && arrivals.get(req);
  return at === undefined ? undefined : `app;dur=${(Number(process.hrtime.bigint() - at) / 1e6).toFixed(2)}`;
}
