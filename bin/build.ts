/** `npm run build`: a production build of the web app (always rebuilds; `npm start` reuses it while sources are unchanged). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuild } from './lib/build';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
ensureBuild(root, (line) => process.stdout.write(`${line}\n`), { force: true }).catch((e) => {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
});
