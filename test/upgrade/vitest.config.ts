import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The upgrade run (`npm test` stage `upgrade`): the domain suites on a database that an older
 * release created and used (test/upgrade/fixture.sql: its schema, functions and rows), migrated by
 * this build, instead of a freshly migrated one; and the function files' own checks and the schema comparison on it.
 */
export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('../../', import.meta.url)) } },
  test: {
    root: fileURLToPath(new URL('../../', import.meta.url)),
    // The suites that use the database (pure computations and the sign-in throttle's timing gain nothing here).
    include: [
      'db/function-files.test.ts',
      'db/schema.test.ts',
      'server/ipam/**/*.test.ts',
      'server/cni/**/*.test.ts',
      'server/quota/**/*.test.ts',
      'server/fleet/**/*.test.ts',
      'server/tenancy/**/*.test.ts',
      'server/workflows/**/*.test.ts',
    ],
    exclude: ['server/ipam/blocks.test.ts', 'server/quota/cel.test.ts', 'server/fleet/claim-names.test.ts', 'server/tenancy/sign-in.test.ts'],
    globalSetup: ['./test/upgrade/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
