import { createHttpProviderAdminClient, createHttpProviderClient } from './http-client';
import type { ProviderAdminClient, ProviderClient } from './client';

/**
 * The provider the control plane talks to, configured by SIMULATOR_URL / SIMULATOR_TOKEN /
 * SIMULATOR_ADMIN_TOKEN (`npm start` sets them for the simulator it supervises). A real provider
 * would be plugged in here behind the same interfaces.
 */
const g = globalThis as unknown as { __meridianProvider?: ProviderClient; __meridianProviderAdmin?: ProviderAdminClient | null };

export function providerConfigured(): boolean {
  return Boolean(process.env.SIMULATOR_URL && process.env.SIMULATOR_TOKEN);
}

export function providerClient(): ProviderClient {
  if (!g.__meridianProvider) {
    if (!providerConfigured()) throw new Error('the provider is not configured (SIMULATOR_URL and SIMULATOR_TOKEN)');
    g.__meridianProvider = createHttpProviderClient({
      baseUrl: process.env.SIMULATOR_URL!,
      token: process.env.SIMULATOR_TOKEN!,
      timeoutMs: Number(process.env.PROVIDER_TIMEOUT_MS ?? 5000),
    });
  }
  return g.__meridianProvider;
}

/** The admin (fault injection) client, or null when no admin token is configured. */
export function providerAdminClient(): ProviderAdminClient | null {
  if (g.__meridianProviderAdmin === undefined) {
    g.__meridianProviderAdmin =
      process.env.SIMULATOR_URL && process.env.SIMULATOR_ADMIN_TOKEN
        ? createHttpProviderAdminClient({ baseUrl: process.env.SIMULATOR_URL, token: process.env.SIMULATOR_ADMIN_TOKEN, timeoutMs: 5000 })
        : null;
  }
  return g.__meridianProviderAdmin;
}
