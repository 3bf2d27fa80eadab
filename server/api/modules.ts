import { env } from '@/server/env';

/** Modules can be switched off with MERIDIAN_DISABLED_MODULES=ipam,quota,… (then absent, not broken). */
export function moduleEnabled(name: string): boolean {
  return !(env().MERIDIAN_DISABLED_MODULES as readonly string[]).includes(name);
}
