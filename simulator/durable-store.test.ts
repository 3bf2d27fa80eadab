/**
 * Group commit of the durable store: a commit resolves only once a write containing its change is on disk,
 * concurrent changes share writes, and a failed write is fatal.
 */
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableStore } from './durable-store';
import { makeTempDir } from './spawn-simulator';

const removals: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const remove of removals) await remove();
});

async function tempFile(): Promise<string> {
  const temp = await makeTempDir('meridian-store-');
  removals.push(temp.remove);
  return path.join(temp.dir, 'nested', 'state.json');
}

describe('DurableStore', () => {
  it('answers each commit only after its change is durable, batching concurrent changes', async () => {
    const filePath = await tempFile();
    let value = 0;
    const fatal: unknown[] = [];
    const store = await DurableStore.open({
      filePath,
      snapshot: () => ({ data: Buffer.from(JSON.stringify({ value })), mark: value }),
      onFatal: (error) => fatal.push(error),
    });
    const violations: string[] = [];
    await Promise.all(
      Array.from({ length: 200 }, async (_, index) => {
        await new Promise((resolve) => setTimeout(resolve, index % 20));
        value++;
        const mine = value;
        await store.commit();
        const onDisk = JSON.parse(readFileSync(filePath, 'utf8')).value as number;
        if (onDisk < mine) violations.push(`change ${mine} acknowledged but disk holds ${onDisk}`);
      }),
    );
    expect(violations).toEqual([]);
    expect(fatal).toEqual([]);
    expect(store.stats.changes).toBe(200);
    expect(store.stats.writes).toBeLessThan(200);
    expect(existsSync(`${filePath}.tmp`)).toBe(false);
    // sync() with nothing pending resolves at once; after close everything is on disk.
    await store.sync();
    await store.close();
    expect(JSON.parse(readFileSync(filePath, 'utf8')).value).toBe(200);
  });

  it('reports a failed write as fatal and never acknowledges the change', async () => {
    const filePath = await tempFile();
    let fatalError: unknown;
    const store = await DurableStore.open({ filePath, snapshot: () => ({ data: Buffer.from('{}'), mark: 0 }), onFatal: (error) => (fatalError = error) });
    await store.commit();
    await rm(path.dirname(filePath), { recursive: true });
    let acknowledged = false;
    void store.commit().then(() => (acknowledged = true));
    await expect.poll(() => fatalError, { timeout: 5_000 }).toBeInstanceOf(Error);
    expect(String(fatalError)).toContain(filePath);
    expect(acknowledged).toBe(false);
    await store.close();
  });
});
