/** How the address map draws and names each kind of block, and which blocks zoom in. */
import type { MapSegment } from '@/server/ipam/map';
import { exactCount } from './format';

export type Kind = MapSegment['kind'];

export const kindLabel: Record<Kind, string> = {
  claim: 'Claim',
  reserved: 'Reserved',
  pool: 'Child pool',
  pod: 'Pod address',
  retained: 'Retained',
  free: 'Free',
};
export const kindClass: Record<Kind, string> = {
  claim: 'bg-brand-500 text-white hover:bg-brand-600',
  reserved: 'bg-slate-400 text-white',
  pool: 'bg-violet-200 text-violet-950 hover:bg-violet-300 ring-1 ring-inset ring-violet-400',
  pod: 'bg-teal-500 text-white hover:bg-teal-600',
  retained: 'bg-amber-300 text-amber-950 hover:bg-amber-400',
  free: 'bg-emerald-50 text-emerald-900 hover:bg-emerald-100 ring-1 ring-inset ring-emerald-200',
};
export const striped = { backgroundImage: 'repeating-linear-gradient(135deg, rgba(255,255,255,0.35) 0 4px, transparent 4px 9px)' };
export const focusedClaimClass = 'bg-amber-500 text-slate-950 hover:bg-amber-500 ring-2 ring-inset ring-amber-800';

/** A cell's colour for its utilization (0..1): paler to darker brand blue. */
export function heat(u: number) {
  if (u <= 0) return '#f8fafc';
  const p = Math.round(12 + Math.min(1, u) * 88);
  return `color-mix(in oklab, #1c4797 ${p}%, #d9eaff)`;
}

/** Free blocks and child pools open a closer view (a single address does not). */
export function zoomable(s: MapSegment) {
  return (s.kind === 'free' || s.kind === 'pool') && s.size !== '1';
}

/** A block's accessible name: kind (a cluster's node block by that name), label, CIDR and size. */
export function segmentName(s: MapSegment) {
  return `${s.nodeBlock ? 'Node block' : kindLabel[s.kind]}${s.label ? ` ${s.label}` : ''}, ${s.cidr}, ${exactCount(s.size)} ${s.size === '1' ? 'address' : 'addresses'}`;
}
