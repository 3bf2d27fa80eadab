import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('./', import.meta.url)) } },
  test: {
    include: ['**/*.test.ts'],
    exclude: [
      'node_modules/**',
      'e2e/**',
      'test/system/scale-out.test.ts',
      'test/system/chaos.test.ts',
      'test/system/stall.test.ts',
      'test/system/failover.test.ts',
      'test/system/patroni.test.ts',
      'test/images/**',
      '.next/**',
      'dist/**',
      '.data/**',
    ],
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
