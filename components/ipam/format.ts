/**
 * Display helpers for IPAM numbers. Counters arrive as exact decimal strings (an IPv6 /32 holds
 * 2^96 addresses, far beyond a double's exact range), so formatting works on the string and the
 * exact value stays available for a tooltip.
 */

/** Human-readable count: grouped digits up to a trillion, then `2^n` for exact powers of two, else `7.92e28`. */
export function formatCount(exact: string): string {
  let n: bigint;
  try {
    n = BigInt(exact);
  } catch {
    return exact;
  }
  if (n < 1_000_000_000_000n) return n.toLocaleString('en-US');
  if ((n & (n - 1n)) === 0n) return `2^${n.toString(2).length - 1}`;
  const digits = n.toString();
  const mantissa = `${digits[0]}.${digits.slice(1, 3)}`.replace(/\.?0+$/, '');
  return `${mantissa}e${digits.length - 1}`;
}

/** Utilization ratio (0..1) as a percentage with precision where it matters: 0%, <0.01%, 3.13%, 37.5%. */
export function formatPercent(ratio: number): string {
  const pct = ratio * 100;
  if (pct === 0) return '0%';
  if (pct < 0.01) return '<0.01%';
  if (pct >= 99.95 && ratio < 1) return '>99.9%';
  if (pct >= 10) return `${trim(pct.toFixed(1))}%`;
  return `${trim(pct.toFixed(2))}%`;
}

function trim(s: string) {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

export const familyLabel = (family: number) => (family === 6 ? 'IPv6' : 'IPv4');

/** Pool rules in two short lines: `/24–/32, default /28` and `FirstFit · reserve 1 + 1`. */
export function describeRules(p: {
  minPrefixLength: number;
  maxPrefixLength: number;
  defaultPrefixLength: number;
  strategy: string;
  reserveLeading: string;
  reserveTrailing: string;
}): [string, string] {
  const second = [p.strategy];
  if (p.reserveLeading !== '0' || p.reserveTrailing !== '0') second.push(`reserve ${formatCount(p.reserveLeading)} + ${formatCount(p.reserveTrailing)}`);
  return [`/${p.minPrefixLength}–/${p.maxPrefixLength}, default /${p.defaultPrefixLength}`, second.join(' · ')];
}

/** The exact count with digit grouping (for tooltips and screen readers). */
export function exactCount(exact: string): string {
  try {
    return BigInt(exact).toLocaleString('en-US');
  } catch {
    return exact;
  }
}
