import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

const port = Number(process.env.E2E_PORT ?? 3100);
// A throwaway data directory per run: a fresh embedded database, seeded by the real `npm start` path.
// Put back into the environment so that the test workers (which inherit it) see the same directory,
// e.g. to read the simulator's generated tokens (e2e/simulator.spec.ts).
const dataDir = (process.env.E2E_DATA_DIR ??= path.join(os.tmpdir(), `meridian-e2e-${process.pid}-${Date.now()}`));
export const demoPassword = process.env.E2E_DEMO_PASSWORD ?? 'e2e-demo-password';

export default defineConfig({
  testDir: './e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://localhost:${port}`,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
  // Desktop runs every spec; the phone projects run e2e/phone.spec.ts at a phone's viewport (390 and 360 px wide).
  projects: [
    { name: 'desktop', testIgnore: /phone\.spec\.ts$/ },
    { name: 'phone-390', testMatch: /phone\.spec\.ts$/, use: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } },
    { name: 'phone-360', testMatch: /phone\.spec\.ts$/, use: { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true } },
  ],
  webServer: {
    command: 'node --import tsx bin/start.ts',
    url: `http://localhost:${port}/readyz`,
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 20_000 },
    env: {
      PORT: String(port),
      HTTPS_PORT: process.env.E2E_HTTPS_PORT ?? '3543',
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: process.env.E2E_PG_PORT ?? '54339',
      SIMULATOR_PORT: process.env.E2E_SIMULATOR_PORT ?? '4190',
      SIMULATOR_ADMIN_PORT: process.env.E2E_SIMULATOR_ADMIN_PORT ?? '4191',
      MERIDIAN_DEMO_PASSWORD: demoPassword,
      DATABASE_URL: '',
      SIGN_IN_FREE_FAILURES: '5',
      // e2e/capacity.spec.ts delivers alerts to a receiver on loopback, which only this list opens.
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    },
  },
});
