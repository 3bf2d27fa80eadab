import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DirectHandler } from './rest';

/**
 * The REST v1 route files (app/api/v1/**\/route.ts) as a table: found on disk, matched the way
 * Next's App Router matches them (a static segment before a `[param]`, parameters URL-decoded).
 * The web process serves REST v1 from this table (server/http/api-server.ts); the catalog
 * completeness tests enumerate the same files.
 */

export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/**
 * A route file's handler: the Web-standard signature Next gives App Router route handlers; those
 * made by server/http/rest.ts also have a `direct` entry for the REST server (no Web objects).
 */
export type RouteHandler = ((req: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>) & { direct?: DirectHandler };

export interface RouteFile {
  file: string;
  /** Path segments below the app directory; `[name]` segments are parameters. */
  segments: string[];
  /** OpenAPI-style path, e.g. `/api/v1/projects/{project}/networks/{name}`. */
  openApiPath: string;
}

export interface LoadedRoute extends RouteFile {
  handlers: Partial<Record<RouteMethod, RouteHandler>>;
}

const param = (segment: string) => /^\[(\w+)\]$/.exec(segment)?.[1];

/** Every route.ts under `app/api/v1` of `root`, most specific first (static segments sort before parameters). */
export function routeFiles(root: string): RouteFile[] {
  const appDir = path.join(root, 'app');
  const found: RouteFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry === 'route.ts') {
        const segments = path.relative(appDir, dir).split(path.sep);
        found.push({ file: full, segments, openApiPath: '/' + segments.map((s) => (param(s) ? `{${param(s)}}` : s)).join('/') });
      }
    }
  };
  walk(path.join(appDir, 'api', 'v1'));
  return found.sort(bySpecificity);
}

/** Next's precedence: at the first segment where two routes differ in kind, the static one comes first. */
export function bySpecificity(a: Pick<RouteFile, 'segments'>, b: Pick<RouteFile, 'segments'>): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const pa = param(a.segments[i]) !== undefined;
    const pb = param(b.segments[i]) !== undefined;
    if (pa !== pb) return pa ? 1 : -1;
  }
  return a.segments.length - b.segments.length;
}

/** Imports each route file and keeps its exported method handlers. */
export async function loadRoutes(root: string): Promise<LoadedRoute[]> {
  return Promise.all(
    routeFiles(root).map(async (route) => {
      const mod = (await import(pathToFileURL(route.file).href)) as Record<string, unknown>;
      const handlers: LoadedRoute['handlers'] = {};
      for (const m of ROUTE_METHODS) if (typeof mod[m] === 'function') handlers[m] = mod[m] as RouteHandler;
      return { ...route, handlers };
    }),
  );
}

/**
 * The route a pathname addresses and its parameters, or undefined. A parameter that is not valid
 * percent-encoding makes the whole path unmatched (404), as a name that cannot exist.
 */
export function matchRoute<R extends RouteFile>(routes: R[], pathname: string): { route: R; params: Record<string, string> } | undefined {
  const parts = pathname.split('/').filter(Boolean);
  for (const route of routes) {
    if (route.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; ok && i < parts.length; i++) {
      const name = param(route.segments[i]);
      if (name === undefined) ok = route.segments[i] === parts[i];
      else {
        try {
          params[name] = decodeURIComponent(parts[i]);
        } catch {
          ok = false;
        }
      }
    }
    if (ok) return { route, params };
  }
  return undefined;
}
