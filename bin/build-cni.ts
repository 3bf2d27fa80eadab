/**
 * `npm run build:cni`: bundles the CNI IPAM plugin (cni/) into ONE executable file,
 * dist/cni/meridian-ipam — CommonJS for Node ≥ 20, minified, `#!/usr/bin/env node`, mode 0755.
 *
 * CommonJS, because the file has no extension: outside any package (e.g. /opt/cni/bin) Node runs an
 * extensionless file as CommonJS. A `package.json` saying so is written next to it so that it also
 * runs in place, inside this `"type": "module"` repository.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const defaultCniOutFile = path.join(root, 'dist', 'cni', 'meridian-ipam');

/** Builds the plugin; returns the path of the executable. `outFile` lets tests build into a temp dir. */
export async function buildCni(options: { outFile?: string } = {}): Promise<string> {
  const outFile = options.outFile ?? defaultCniOutFile;
  await mkdir(path.dirname(outFile), { recursive: true });
  await build({
    entryPoints: [path.join(root, 'cni', 'bin.ts')],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    legalComments: 'none',
    // `import()` of node:https / node:tls stays lazy but becomes a plain require(): a real dynamic
    // import would start Node's ESM loader (~10 ms of start-up).
    supported: { 'dynamic-import': false },
    banner: { js: '#!/usr/bin/env node' },
    logLevel: 'warning',
  });
  await chmod(outFile, 0o755);
  await writeFile(path.join(path.dirname(outFile), 'package.json'), '{ "type": "commonjs" }\n');
  return outFile;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  buildCni().then(
    (out) => process.stdout.write(`built ${path.relative(process.cwd(), out)}\n`),
    (e: unknown) => {
      process.stderr.write(`${(e as Error).message}\n`);
      process.exit(1);
    },
  );
}
