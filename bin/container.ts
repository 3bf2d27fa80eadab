/**
 * The `meridian` image's entry point: the first argument chooses the process, the rest are its own.
 *
 *   web | worker | simulator     the long-running processes (bin/web.ts, bin/worker.ts, bin/simulator.ts)
 *   migrate [--dry-run]          applies the migrations (the CLI's `migrate`) and exits
 *   meridian <command…>          the admin CLI (bin/meridian.ts)
 *
 * Each runs as if started directly (`node --import tsx bin/<script>.ts <args…>`), in this process.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const CONTAINER_COMMANDS = { web: 'web.ts', worker: 'worker.ts', simulator: 'simulator.ts', meridian: 'meridian.ts', migrate: 'meridian.ts' } as const;

const [command, ...rest] = process.argv.slice(2);
if (!command || !(command in CONTAINER_COMMANDS)) {
  process.stderr.write(`usage: <${Object.keys(CONTAINER_COMMANDS).join('|')}> [arguments…] (got ${command ? `"${command}"` : 'nothing'})\n`);
  process.exit(2);
}
const script = path.join(here, CONTAINER_COMMANDS[command as keyof typeof CONTAINER_COMMANDS]);
process.argv = [process.argv[0], script, ...(command === 'migrate' ? ['migrate'] : []), ...rest];
await import(pathToFileURL(script).href);
