import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The images stage: builds both images (`npm run build:images`) and runs the meridian image's root
 * file system against a PostgreSQL on loopback (test/images/smoke.test.ts). Needs root, buildah
 * and mmdebstrap (.ci/run installs them); the unit run excludes it.
 */
export default defineConfig({
  resolve: { alias: { '@': fileURLToPath(new URL('../../', import.meta.url)) } },
  test: {
    root: fileURLToPath(new URL('../../', import.meta.url)),
    include: ['test/images/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
