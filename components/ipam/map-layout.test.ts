import { describe, expect, it } from 'vitest';
import { compressFreeRuns } from './map-layout';

const seg = (cidr: string, kind: string, size: string) => ({ cidr, kind, size });

describe('compressFreeRuns', () => {
  it('keeps each used block and collapses each run of free blocks into one gap with its total and largest block', () => {
    // A /48 with a reserved /64 and a claimed /64: the buddy free list is a staircase /63, /62 … /49.
    const staircase = Array.from({ length: 15 }, (_, i) => 63 - i).map((p) => seg(`2001:db8:e2::/${p}`, 'free', (1n << BigInt(128 - p)).toString()));
    const items = compressFreeRuns([
      seg('2001:db8:e2::/64', 'reserved', (1n << 64n).toString()),
      seg('2001:db8:e2:1::/64', 'claim', (1n << 64n).toString()),
      ...staircase,
    ]);
    expect(items.map((i) => i.type)).toEqual(['block', 'block', 'gap']);
    const gap = items[2];
    if (gap.type !== 'gap') throw new Error('expected a gap');
    expect(gap.blocks).toHaveLength(15);
    expect(gap.size).toBe((1n << 80n) - (1n << 65n));
    expect(gap.largest.cidr).toBe('2001:db8:e2::/49');
  });

  it('separates free runs that a used block interrupts', () => {
    const items = compressFreeRuns([
      seg('192.0.2.0/26', 'free', '64'),
      seg('192.0.2.64/27', 'free', '32'),
      seg('192.0.2.96/27', 'claim', '32'),
      seg('192.0.2.128/25', 'free', '128'),
    ]);
    expect(items.map((i) => (i.type === 'gap' ? `gap ${i.blocks.length} ${i.size} ${i.largest.cidr}` : `block ${i.item.cidr}`))).toEqual([
      'gap 2 96 192.0.2.0/26',
      'block 192.0.2.96/27',
      'gap 1 128 192.0.2.128/25',
    ]);
  });

  it('returns nothing for no segments', () => {
    expect(compressFreeRuns([])).toEqual([]);
  });
});
