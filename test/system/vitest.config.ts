import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The system tests (scale-out, chaos, stall, failover): whole processes from the production build, one file at a
 * time. `npm test` runs them after the build; the unit run excludes them (but runs
 * invariants.test.ts, the checks' own test).
 */
export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('../../', import.meta.url)) } },
  test: {
    root: fileURLToPath(new URL('../../', import.meta.url)),
    include: [
      'test/system/scale-out.test.ts',
      'test/system/chaos.test.ts',
      'test/system/stall.test.ts',
      'test/system/failover.test.ts',
      'test/system/patroni.test.ts',
    ],
    testTimeout: 600_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
