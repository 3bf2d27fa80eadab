import type { ModuleName } from '@/lib/env-schema';
import { env } from '@/server/env';

/** Modules can be switched off with MERIDIAN_DISABLED_MODULES=ipam,quota,… (then absent, not broken). */
export function moduleEnabled(name: ModuleName): boolean {
  return !env().MERIDIAN_DISABLED_MODULES.includes(name);
}
