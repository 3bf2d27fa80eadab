/** Display helpers for IPAM numbers. */

// The console's one formatter for address counts and shares (components/ui/numbers.ts).
export { exactCount, formatCount, formatPercent, formatShare } from '@/components/ui/numbers';
import { formatCount } from '@/components/ui/numbers';

export const familyLabel = (family: number) => (family === 6 ? 'IPv6' : 'IPv4');

/** A pool's kind in words: a network's root range, a child pool carved from it, or a node's block of pod addresses. */
export function poolKindName(kind: string): string {
  return kind === 'Root' ? 'Root pool' : kind === 'Child' ? 'Child pool' : kind === 'NodeBlock' ? 'Pod block' : kind;
}

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
