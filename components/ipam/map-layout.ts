import { familyBits, parseCidrOrThrow, type Cidr } from '@/lib/cidr';

/**
 * Lays out the exact map's blocks as rectangles. Every block is an aligned CIDR (buddy blocks,
 * claims, reservations), so each is one node of the view's binary tree: splitting the rectangle
 * in two at each level (along its longer side, lower addresses left/top) gives every block an
 * area proportional to its size, in address order. A block's weight is floored at `minShare` of
 * the whole, so a /32 next to a /9 still gets a clickable rectangle; only tiny blocks are inflated.
 */
export interface PlacedBlock<T> {
  item: T;
  cidr: Cidr;
  /** Position and size as fractions (0..1) of the map's width and height. */
  x: number;
  y: number;
  w: number;
  h: number;
}

interface Leaf<T> {
  item: T;
  cidr: Cidr;
  weight: number;
}

interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export function layoutBlocks<T extends { cidr: string }>(items: T[], viewText: string, aspect: number): PlacedBlock<T>[] {
  const view = parseCidrOrThrow(viewText);
  const bits = familyBits(view.family);
  const leaves: Leaf<T>[] = items
    .map((item) => ({ item, cidr: parseCidrOrThrow(item.cidr, { strict: false }), weight: 0 }))
    .sort((a, b) => (a.cidr.network < b.cidr.network ? -1 : a.cidr.network > b.cidr.network ? 1 : a.cidr.prefix - b.cidr.prefix));
  // Tiny blocks together never take more than ~40% of the map; alone, each gets at least 1/500 of it.
  const minShare = Math.min(1 / 500, 0.4 / Math.max(1, leaves.length));
  for (const leaf of leaves) leaf.weight = Math.max(2 ** (view.prefix - Math.max(leaf.cidr.prefix, view.prefix)), minShare);
  const out: PlacedBlock<T>[] = [];
  place(leaves, view.network, view.prefix, { x: 0, y: 0, w: 1, h: 1 });
  return out;

  function place(group: Leaf<T>[], start: bigint, prefix: number, rect: Rect) {
    if (group.length === 0) return;
    if (group.length === 1) {
      out.push({ item: group[0].item, cidr: group[0].cidr, ...rect });
      return;
    }
    // Inconsistent input (overlapping blocks): share the rectangle evenly rather than recurse forever.
    if (prefix >= bits || group.some((l) => l.cidr.prefix <= prefix)) {
      split(group, rect, (part, r) => out.push({ item: part.item, cidr: part.cidr, ...r }));
      return;
    }
    const mid = start + (1n << BigInt(bits - prefix - 1));
    const cut = group.findIndex((l) => l.cidr.network >= mid);
    const low = cut === -1 ? group : group.slice(0, cut);
    const high = cut === -1 ? [] : group.slice(cut);
    const wl = sum(low);
    const share = wl / (wl + sum(high));
    const [a, b] = halves(rect, share);
    place(low, start, prefix + 1, a);
    place(high, mid, prefix + 1, b);
  }

  function halves(rect: Rect, share: number): [Rect, Rect] {
    // Split across the longer side in screen pixels (width is `aspect` times the height).
    if (rect.w * aspect >= rect.h) {
      const w = rect.w * share;
      return [
        { x: rect.x, y: rect.y, w, h: rect.h },
        { x: rect.x + w, y: rect.y, w: rect.w - w, h: rect.h },
      ];
    }
    const h = rect.h * share;
    return [
      { x: rect.x, y: rect.y, w: rect.w, h },
      { x: rect.x, y: rect.y + h, w: rect.w, h: rect.h - h },
    ];
  }

  function split(group: Leaf<T>[], rect: Rect, emit: (leaf: Leaf<T>, r: Rect) => void) {
    const total = sum(group);
    let offset = 0;
    for (const leaf of group) {
      const share = leaf.weight / total;
      emit(
        leaf,
        rect.w * aspect >= rect.h
          ? { x: rect.x + rect.w * offset, y: rect.y, w: rect.w * share, h: rect.h }
          : { x: rect.x, y: rect.y + rect.h * offset, w: rect.w, h: rect.h * share },
      );
      offset += share;
    }
  }
}

function sum<T>(leaves: Leaf<T>[]) {
  let s = 0;
  for (const l of leaves) s += l.weight;
  return s;
}

/** One tile of the compressed map: a used block as it is, or a run of adjacent free blocks as one gap. */
export type StripItem<T> = { type: 'block'; item: T } | { type: 'gap'; blocks: T[]; size: bigint; largest: T };

/**
 * The compressed scale of the map (for IPv6, where a /64 in a /48 would be a sliver beside a
 * staircase of ever larger free buddies): every used block keeps its own tile, and each run of
 * adjacent free blocks collapses into one gap carrying its total size and its largest block.
 * Input is in address order (as the map query returns it).
 */
export function compressFreeRuns<T extends { kind: string; size: string }>(segments: T[]): StripItem<T>[] {
  const out: StripItem<T>[] = [];
  for (const s of segments) {
    const last = out[out.length - 1];
    if (s.kind !== 'free') out.push({ type: 'block', item: s });
    else if (last?.type === 'gap') {
      last.blocks.push(s);
      last.size += BigInt(s.size);
      if (BigInt(s.size) > BigInt(last.largest.size)) last.largest = s;
    } else out.push({ type: 'gap', blocks: [s], size: BigInt(s.size), largest: s });
  }
  return out;
}
