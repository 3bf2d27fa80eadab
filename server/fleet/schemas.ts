import { z } from 'zod';
import { resourceName } from '@/server/ipam/schemas';
import { machinePhases } from './phases';

export const machineInterface = z.strictObject({
  network: resourceName,
  families: z
    .array(z.enum(['IPv4', 'IPv6']))
    .min(1)
    .max(2, 'at most 2 families')
    .refine((f) => new Set(f).size === f.length, 'families must differ'),
  /** How many addresses of each family this interface gets (address classes), 1–4. */
  addressClasses: z.number().int().min(1).max(4, 'at most 4 address classes').default(1),
});

export const machineCreateInput = z.strictObject({
  name: resourceName,
  class: resourceName.or(z.string().regex(/^[a-z0-9][a-z0-9.-]{0,62}$/)),
  profile: z.string().min(1).max(63),
  location: resourceName,
  interfaces: z.array(machineInterface).max(4).default([]),
  desiredPower: z.enum(['on', 'off']).default('on'),
});
export type MachineCreateInput = z.infer<typeof machineCreateInput>;

/** Without a phase, the live machines; `Released` lists the released ones (their names may be in use again). */
export const machineListInput = z.strictObject({
  phase: z.enum(machinePhases).optional(),
  search: z.string().max(100).optional(),
  limit: z.number().int().min(1).max(200).default(50),
  offset: z.number().int().min(0).default(0),
});
