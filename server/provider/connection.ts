import { env } from '@/server/env';
import { createHttpProviderAdminClient, createHttpProviderClient } from './http-client';
import type { ProviderAdminClient, ProviderClient } from './client';

/**
 * The provider the control plane talks to, configured by SIMULATOR_URL / SIMULATOR_TOKEN /
 * SIMULATOR_ADMIN_TOKEN (`npm start` sets them for the simulator it supervises). A real provider
 * would be plugged in here behind the same interfaces.
 */
const g = globalThis as unknown as { __meridianProvider?: ProviderClient; __meridianProviderAdmin?: ProviderAdminClient | null };

export function providerConfigured(): boolean {
  const e = env();
  return Boolean(e.SIMULATOR_URL && e.SIMULATOR_TOKEN);
}

export function providerClient(): ProviderClient {
  if (!g.__meridianProvider) {
    const { SIMULATOR_URL: baseUrl, SIMULATOR_TOKEN: token, PROVIDER_TIMEOUT_MS: timeoutMs } = env();
    if (!baseUrl || !token) throw new Error('the provider is not configured (SIMULATOR_URL and SIMULATOR_TOKEN)');
    g.__meridianProvider = createHttpProviderClient({ baseUrl, token, timeoutMs });
  }
  return g.__meridianProvider;
}

/** The admin (fault injection) client, or null when no admin token is configured. */
export function providerAdminClient(): ProviderAdminClient | null {
  if (g.__meridianProviderAdmin === undefined) {
    const { SIMULATOR_URL: baseUrl, SIMULATOR_ADMIN_TOKEN: token } = env();
    g.__meridianProviderAdmin = baseUrl && token ? createHttpProviderAdminClient({ baseUrl, token, timeoutMs: 5000 }) : null;
  }
  return g.__meridianProviderAdmin;
}
