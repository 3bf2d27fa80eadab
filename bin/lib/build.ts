import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SOURCE_DIRS = ['app', 'components', 'server', 'db', 'public'];
const SOURCE_FILES = ['package-lock.json', 'next.config.ts', 'tsconfig.json', 'postcss.config.mjs'];

/** A fingerprint of everything `next build` reads (paths, sizes, mtimes). */
function sourceStamp(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else {
        const s = statSync(full);
        hash.update(`${path.relative(root, full)}:${s.size}:${s.mtimeMs}\n`);
      }
    }
  };
  for (const d of SOURCE_DIRS) walk(path.join(root, d));
  for (const f of SOURCE_FILES) {
    const full = path.join(root, f);
    if (existsSync(full)) hash.update(`${f}:${statSync(full).mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Runs `next build` when there is no build, or the sources changed since the last one. */
export async function ensureBuild(root: string, log: (line: string) => void, options: { force?: boolean } = {}): Promise<void> {
  const stampFile = path.join(root, '.next', 'meridian-build-stamp');
  const stamp = sourceStamp(root);
  if (!options.force && existsSync(path.join(root, '.next', 'BUILD_ID')) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return;
  log('building the web app (next build)…');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`next build failed with code ${code}`))));
  });
  writeFileSync(stampFile, stamp);
}
