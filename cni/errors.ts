/**
 * CNI error codes and the plugin's error type.
 *
 * Well-known codes (0–99) are the CNI spec's (1.0.0 §"Error", 1.1.0 adds 50/51 for STATUS);
 * 100+ are this plugin's own. Every failure leaves the plugin as a `CniError` and is printed as
 * `{ cniVersion, code, msg, details }` on stdout with exit status 1.
 */

/** Spec: incompatible CNI version (config `cniVersion` not supported, or a verb the version lacks). */
export const ERR_INCOMPATIBLE_VERSION = 1;
/** Spec: invalid necessary environment variables (CNI_COMMAND, CNI_CONTAINERID, CNI_IFNAME, CNI_ARGS…). */
export const ERR_INVALID_ENV = 4;
/** Spec: I/O failure (e.g. reading stdin). */
export const ERR_IO = 5;
/** Spec: failed to decode content (e.g. the network config on stdin is not JSON). */
export const ERR_DECODE = 6;
/** Spec: invalid network config. */
export const ERR_INVALID_CONFIG = 7;
/** Spec: try again later (a transient condition: timeout, connection error, 5xx, 429, exhausted pool). */
export const ERR_TRY_AGAIN = 11;
/** Spec 1.1.0, STATUS only: the plugin is not available (cannot service ADD requests). */
export const ERR_UNAVAILABLE = 50;

/** Plugin: the server answered something this plugin does not understand (unexpected status or body). */
export const ERR_SERVER_RESPONSE = 100;
/** Plugin: no usable token (token file missing, unreadable or empty) or the server rejected it (401). */
export const ERR_AUTH = 101;
/** Plugin: the token is valid but not allowed to act on this project/cluster (403). */
export const ERR_FORBIDDEN = 102;
/** Plugin: CHECK found the runtime's prevResult does not match the recorded lease (409 CheckMismatch). */
export const ERR_CHECK_MISMATCH = 103;
/** Plugin: CHECK found no lease for this attachment (404 NotFound). */
export const ERR_NO_LEASE = 104;
/** Plugin: the server's TLS certificate was rejected. */
export const ERR_TLS = 105;
/** Plugin: an unexpected internal error (a bug); same number as libcni's ErrInternal. */
export const ERR_INTERNAL = 999;

export class CniError extends Error {
  constructor(
    readonly code: number,
    /** Short message (the spec's `msg`). */
    readonly msg: string,
    /** Longer explanation (the spec's optional `details`). */
    readonly details?: string,
  ) {
    super(msg);
    this.name = 'CniError';
  }
}

export const configError = (field: string, problem: string) =>
  new CniError(ERR_INVALID_CONFIG, `invalid network config: ${field} ${problem}`, `field: ${field}`);

export const envError = (variable: string, problem: string) =>
  new CniError(ERR_INVALID_ENV, `invalid environment variable ${variable}: ${problem}`, `variable: ${variable}`);
