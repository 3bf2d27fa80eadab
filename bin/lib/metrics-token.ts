import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The bearer token `/metrics` requires, for `npm start`: METRICS_TOKEN when set; otherwise one
 * generated on the first start into `<dataDir>/metrics-token` (mode 0600, the token alone on one
 * line, as Prometheus's `credentials_file` reads it) and reused after. `file` is null when the
 * token came from the environment.
 */
export async function metricsToken(dataDir: string, configured: string | undefined): Promise<{ token: string; file: string | null }> {
  if (configured) return { token: configured, file: null };
  const file = path.join(dataDir, 'metrics-token');
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    if (/^\S{16,}$/.test(stored)) {
      await chmod(file, 0o600);
      return { token: stored, file };
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const token = randomBytes(32).toString('base64url');
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { token, file };
}
