import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Every exported handler of every route file under app/api/v1 (discovery and OpenAPI aside), as `METHOD /path`. */
export function routeFileHandlers(): Promise<string[]> {
  const root = path.join(process.cwd(), 'app/api/v1');
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const full = path.join(dir, e);
      if (statSync(full).isDirectory()) walk(full);
      else if (e === 'route.ts') files.push(full);
    }
  };
  walk(root);
  return Promise.all(
    files.map(async (file) => {
      const routePath = '/' + path.relative(path.join(process.cwd(), 'app'), path.dirname(file)).replace(/\[(\w+)\]/g, '{$1}');
      if (routePath === '/api/v1' || routePath === '/api/v1/openapi.json') return [];
      const mod = (await import(file)) as Record<string, unknown>;
      return ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => typeof mod[m] === 'function').map((m) => `${m} ${routePath}`);
    }),
  ).then((lists) => lists.flat());
}
