/**
 * The CNI spec versions this plugin implements, and what each version allows.
 *
 * - 0.3.0 / 0.3.1: ADD, DEL, VERSION; result `ips[]` entries carry `version: "4"|"6"`.
 * - 0.4.0: adds CHECK and `prevResult` on DEL; same result shape as 0.3.x.
 * - 1.0.0: `ips[].version` removed; otherwise as 0.4.0.
 * - 1.1.0: adds GC and STATUS; routes may carry mtu/advmss/priority/table/scope.
 *
 * 0.1.0/0.2.0 (the old `ip4`/`ip6` result) are not implemented and not claimed.
 */
export const SUPPORTED_VERSIONS = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export const CURRENT_VERSION = '1.1.0';

export function isSupportedVersion(v: string): boolean {
  return (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/** Numeric comparison of two `x.y.z` versions (supported ones only, so no pre-release handling). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export const atLeast = (v: string, min: string) => compareVersions(v, min) >= 0;
