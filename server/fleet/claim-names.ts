import { createHash } from 'node:crypto';

/** Claim names are resource names: at most 63 characters. */
const MAX_CLAIM_NAME = 63;

/**
 * The name of the IP claim holding one address of a machine's interface:
 * `m-<machine>-<interface>-<v4|v6>-<n>`. A machine name may itself be 63 characters, so that form
 * does not always fit: then the machine name is shortened and 8 hex digits of its SHA-256 keep the
 * claims of different machines apart, while the slot suffix keeps one machine's claims apart.
 * (Cutting the full form at 63 characters gave every slot of a long-named machine the same name:
 * one address handed out twice, or 409 ClaimExists for a valid request.) Always a valid resource
 * name, and the same for the same input.
 */
export function machineClaimName(machine: string, nic: number, family: 'IPv4' | 'IPv6', n: number): string {
  const slot = `${nic}-${family === 'IPv4' ? 'v4' : 'v6'}-${n}`;
  const full = `m-${machine}-${slot}`;
  if (full.length <= MAX_CLAIM_NAME) return full;
  const digest = createHash('sha256').update(machine).digest('hex').slice(0, 8);
  const room = MAX_CLAIM_NAME - `m--${digest}-${slot}`.length;
  const head = machine.slice(0, room).replace(/-+$/, '');
  return `m-${head}-${digest}-${slot}`;
}
