import { z } from 'zod';
import type { DbOrTx } from '@/db/client';
import { resourceName } from '@/server/ipam/schemas';
import { projectIdBySlug, slugPattern } from '@/server/tenancy/projects';
import { getMachine } from './machines';

const machinePath = z.object({ project: z.string().regex(slugPattern, 'must be a project slug'), name: resourceName });

/**
 * The machine an operator addresses by project slug and name (operators act on every project):
 * the path parameters validated (400 naming the parameter), then NotFound for an unknown project
 * or machine.
 */
export async function machineAddress(db: DbOrTx, params: { project: string; name: string }) {
  const { project, name } = machinePath.parse(params);
  const projectId = await projectIdBySlug(db, project);
  return { projectId, machine: await getMachine(db, projectId, name) };
}

/**
 * A capacity's name in the path is its device reference. The provider assigns those, so only what
 * no reference can contain is refused here (control characters, which PostgreSQL would reject).
 */
export const deviceRefParam = z.object({ name: z.string().min(1, 'is required').max(253).regex(/^[^\u0000-\u001f\u007f]+$/, 'must be a device reference') });
