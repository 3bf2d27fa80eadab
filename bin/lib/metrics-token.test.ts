import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { metricsToken } from './metrics-token';

test('npm start generates the /metrics token once into the data directory (0600) and reuses it; METRICS_TOKEN wins', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'metrics-token-'));
  try {
    const first = await metricsToken(dir, undefined);
    expect(first.file).toBe(path.join(dir, 'metrics-token'));
    expect(first.token).toMatch(/^\S{32,}$/);
    expect((await stat(first.file!)).mode & 0o777).toBe(0o600);
    expect((await readFile(first.file!, 'utf8')).trim()).toBe(first.token);
    expect(await metricsToken(dir, undefined)).toEqual(first);
    expect(await metricsToken(dir, 'configured-token-0123456789')).toEqual({ token: 'configured-token-0123456789', file: null });
    // A file left readable by others is made private again.
    await chmod(first.file!, 0o644);
    await metricsToken(dir, undefined);
    expect((await stat(first.file!)).mode & 0o777).toBe(0o600);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
