/** Modules can be switched off with MERIDIAN_DISABLED_MODULES=ipam,quota,… (then absent, not broken). */
export function moduleEnabled(name: string): boolean {
  return !(process.env.MERIDIAN_DISABLED_MODULES ?? '').split(',').map((s) => s.trim()).includes(name);
}
