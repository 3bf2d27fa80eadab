import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import postgres from 'postgres';
import type { Env } from '../../lib/env-schema';

/** The channel on which any web replica can ask the supervisor to act (see server/provider/supervisor-control.ts). */
export const CONTROL_CHANNEL = 'meridian_supervisor';

/**
 * Where the simulator listens (runtime and admin ports) and the admin API's token: from SIMULATOR_*
 * when set, otherwise generated once into `<dataDir>/simulator-tokens.json` (mode 0600) and reused.
 * The runtime API takes no token: its callers present workload certificates (bin/lib/provider-pki.ts).
 */
export async function simulatorSettings(
  dataDir: string,
  e: Pick<Env, 'SIMULATOR_PORT' | 'SIMULATOR_ADMIN_PORT' | 'SIMULATOR_URL' | 'SIMULATOR_ADMIN_URL' | 'SIMULATOR_ADMIN_TOKEN'>,
) {
  const port = e.SIMULATOR_PORT;
  const adminPort = e.SIMULATOR_ADMIN_PORT;
  const file = path.join(dataDir, 'simulator-tokens.json');
  let stored: { adminToken: string } | undefined;
  if (existsSync(file)) stored = JSON.parse(await readFile(file, 'utf8'));
  if (!stored?.adminToken) {
    stored = { adminToken: randomBytes(24).toString('base64url') };
    await writeFile(file, JSON.stringify(stored), { mode: 0o600 });
  }
  return {
    port,
    adminPort,
    url: e.SIMULATOR_URL ?? `https://127.0.0.1:${port}`,
    adminUrl: e.SIMULATOR_ADMIN_URL ?? `https://127.0.0.1:${adminPort}`,
    adminToken: e.SIMULATOR_ADMIN_TOKEN ?? stored.adminToken,
  };
}

/** LISTENs for supervisor commands (`restart:simulator`); returns a handle to stop listening. */
export async function listenForControl(url: string, onCommand: (command: string) => Promise<void>) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql.listen(CONTROL_CHANNEL, (payload) => {
    void onCommand(payload).catch(() => {});
  });
  return { close: () => sql.end({ timeout: 2 }) };
}
