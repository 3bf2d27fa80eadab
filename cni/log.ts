/**
 * Logging for the plugin: stderr only (stdout carries nothing but the result or error JSON), one
 * line per event, with every registered secret (the API token) redacted from anything printed —
 * also from error texts that might echo a header back.
 */
import { writeFd } from './io';

const secrets: string[] = [];
let quiet = false;

/** MERIDIAN_CNI_QUIET as the invocation's validated environment says (cni/config.ts readQuiet). */
export function setQuiet(value: boolean): void {
  quiet = value;
}

export function registerSecret(secret: string): void {
  if (secret.length >= 4 && !secrets.includes(secret)) secrets.push(secret);
}

export function redact(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('[redacted]');
  return out;
}

export function log(message: string): void {
  if (quiet) return;
  writeFd(2, `meridian-ipam[${process.pid}]: ${redact(message)}\n`);
}
