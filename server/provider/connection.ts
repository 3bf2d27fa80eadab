import { env } from '@/server/env';
import { createHttpProviderAdminClient, createHttpProviderClient } from './http-client';
import type { ProviderAdminClient, ProviderClient } from './client';

/**
 * The provider the control plane talks to: its runtime API at SIMULATOR_URL over mutual TLS, this
 * process presenting PROVIDER_TLS_CERT_FILE/PROVIDER_TLS_KEY_FILE (its workload identity) and
 * checking the provider against PROVIDER_TLS_CA_FILE; the admin API at SIMULATOR_ADMIN_URL with
 * SIMULATOR_ADMIN_TOKEN. `npm start` sets them for the simulator it supervises. A real provider
 * would be plugged in here behind the same interfaces.
 */
declare global {
  // One client per process (its connection pool and certificate watchers), kept across module reloads.
  var __meridianProvider: ProviderClient | undefined;
  var __meridianProviderAdmin: ProviderAdminClient | null | undefined;
}
const g = globalThis;

export function providerConfigured(): boolean {
  const e = env();
  return Boolean(e.SIMULATOR_URL && e.PROVIDER_TLS_CERT_FILE && e.PROVIDER_TLS_KEY_FILE && e.PROVIDER_TLS_CA_FILE);
}

export function providerClient(): ProviderClient {
  if (!g.__meridianProvider) {
    const {
      SIMULATOR_URL: baseUrl,
      PROVIDER_TLS_CERT_FILE: certFile,
      PROVIDER_TLS_KEY_FILE: keyFile,
      PROVIDER_TLS_CA_FILE: caFile,
      PROVIDER_TIMEOUT_MS: timeoutMs,
    } = env();
    if (!baseUrl || !certFile || !keyFile || !caFile) {
      throw new Error('the provider is not configured (SIMULATOR_URL, PROVIDER_TLS_CERT_FILE, PROVIDER_TLS_KEY_FILE, PROVIDER_TLS_CA_FILE)');
    }
    g.__meridianProvider = createHttpProviderClient({ baseUrl, tls: { certFile, keyFile, caFile }, timeoutMs });
  }
  return g.__meridianProvider;
}

/** The admin (fault injection) client, or null when no admin URL and token are configured. */
export function providerAdminClient(): ProviderAdminClient | null {
  if (g.__meridianProviderAdmin === undefined) {
    const { SIMULATOR_ADMIN_URL: baseUrl, SIMULATOR_ADMIN_TOKEN: token, PROVIDER_TLS_CA_FILE: caFile } = env();
    g.__meridianProviderAdmin =
      baseUrl && token ? createHttpProviderAdminClient({ baseUrl, token, timeoutMs: 5000, ...(caFile ? { tls: { caFile } } : {}) }) : null;
  }
  return g.__meridianProviderAdmin;
}
