import { describe, expect, test } from 'vitest';
import { Batcher, laneOf, lockOrder, type Outcome } from './batch';

/** A run function whose batches the test releases by hand, recording what each batch held. */
function gatedRun() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const run = (items: number[]) =>
    new Promise<Outcome<number>[]>((resolve) => {
      batches.push(items);
      gates.push(() => resolve(items.map((i) => (i < 0 ? { error: new Error(`bad ${i}`) } : { value: i * 10 }))));
    });
  return { batches, run, release: () => gates.shift()!() };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Batcher', () => {
  test('an item that finds no batch in flight goes alone; what arrives meanwhile goes in the next batch', async () => {
    const g = gatedRun();
    const b = new Batcher(g.run, { maxBatch: 3, maxInFlight: 1 });
    const first = b.submit(1);
    await tick();
    expect(g.batches).toEqual([[1]]);
    const rest = [2, 3, 4, 5].map((i) => b.submit(i));
    await tick();
    expect(g.batches).toHaveLength(1);
    g.release();
    expect(await first).toBe(10);
    await tick();
    expect(g.batches[1]).toEqual([2, 3, 4]);
    g.release();
    await tick();
    expect(g.batches[2]).toEqual([5]);
    g.release();
    expect(await Promise.all(rest)).toEqual([20, 30, 40, 50]);
  });

  test('each item gets its own outcome; a failed batch fails every item of it and the lane goes on', async () => {
    let fail = true;
    const b = new Batcher<number, number>(
      async (items) => {
        if (fail) {
          fail = false;
          throw new Error('connection lost');
        }
        return items.map((i) => (i < 0 ? { error: new Error(`bad ${i}`) } : { value: i }));
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    await expect(b.submit(1)).rejects.toThrow('connection lost');
    const [ok, bad] = await Promise.allSettled([b.submit(2), b.submit(-3)]);
    expect(ok).toEqual({ status: 'fulfilled', value: 2 });
    expect(bad).toMatchObject({ status: 'rejected', reason: new Error('bad -3') });
  });

  test('lanes never share a batch and run side by side', async () => {
    const g = gatedRun();
    const b = new Batcher(g.run, { maxBatch: 10, maxInFlight: 1, lane: (i) => i % 2 });
    const all = [1, 2, 3, 4, 5, 6].map((i) => b.submit(i));
    await tick();
    expect(g.batches).toEqual([[1], [2]]);
    g.release();
    g.release();
    await tick();
    expect(g.batches.slice(2)).toEqual([
      [3, 5],
      [4, 6],
    ]);
    g.release();
    g.release();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50, 60]);
  });
});

describe('lock order and lanes', () => {
  test('items sort by their keys, and one key set always lands in one lane', () => {
    const items = [
      { c: 'b', n: 'x' },
      { c: 'a', n: 'z' },
      { c: 'a', n: 'y' },
    ];
    expect(lockOrder(items, (i) => [i.c, i.n])).toEqual([2, 1, 0]);
    expect(laneOf(4, 'cluster', 'node-1')).toBe(laneOf(4, 'cluster', 'node-1'));
    const lanes = new Set(Array.from({ length: 64 }, (_, i) => laneOf(4, 'cluster', `node-${i}`)));
    expect(lanes).toEqual(new Set([0, 1, 2, 3]));
  });
});
