/**
 * The plugin executable every suite runs, placed at `binDir`/meridian-ipam (a CNI bin directory):
 * the one MERIDIAN_CNI_PLUGIN names (an executable built beforehand, e.g. dist/cni/meridian-ipam
 * from `npm run build:cni`, linked there), else one compiled from cni/ by bin/build-cni.ts.
 */
import { accessSync, constants } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { buildCni } from '../../bin/build-cni';

export async function pluginExecutable(binDir: string): Promise<string> {
  const out = path.join(binDir, 'meridian-ipam');
  const given = process.env.MERIDIAN_CNI_PLUGIN;
  if (!given) return buildCni({ outFile: out });
  const file = path.resolve(given);
  accessSync(file, constants.X_OK); // a wrong path fails here, named, not as a spawn error per test
  await mkdir(binDir, { recursive: true });
  await symlink(file, out);
  return out;
}
