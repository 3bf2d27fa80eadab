import { ROUTE_METHODS, type ApiGroup, type RestRoute, type RouteMethod } from './declare';

/**
 * The declared REST v1 routes as a table the REST server matches requests against: paths matched
 * segment by segment, a static segment before a `{param}` (so `/machines/{name}/release` is never
 * taken for a name), parameters percent-decoded.
 */

export interface RouteTable {
  readonly groups: readonly ApiGroup[];
  readonly routes: readonly RestRoute[];
}

/** A path pattern: `/api/v1/projects/{project}/networks` and its segments. */
export interface PathPattern {
  pattern: string;
  segments: string[];
}

const param = (segment: string) => /^\{(\w+)\}$/.exec(segment)?.[1];

export function segmentsOf(pattern: string): string[] {
  return pattern.split('/').filter(Boolean);
}

/**
 * The table of `routes`, refused (thrown, so the process does not start) when a route's group is
 * not among `groups`, a method and path are declared twice, or two paths differ only in their
 * parameters' names (one request would match both).
 */
export function routeTable(groups: readonly ApiGroup[], routes: readonly RestRoute[]): RouteTable {
  const byShape = new Map<string, string>();
  const declared = new Set<string>();
  for (const r of routes) {
    const key = `${r.method} ${r.path}`;
    if (!groups.includes(r.group)) throw new Error(`${key}: group ${r.group.name} is not one of the API's groups`);
    if (declared.has(key)) throw new Error(`${key} is declared twice`);
    declared.add(key);
    const shape = segmentsOf(r.path)
      .map((s) => (param(s) ? '{}' : s))
      .join('/');
    const seen = byShape.get(shape);
    if (seen !== undefined && seen !== r.path) throw new Error(`${r.path} and ${seen} match the same requests`);
    byShape.set(shape, r.path);
  }
  return { groups: Object.freeze([...groups]), routes: Object.freeze([...routes]) };
}

/** Next's precedence, kept: at the first segment where two patterns differ in kind, the static one comes first. */
export function bySpecificity(a: Pick<PathPattern, 'segments'>, b: Pick<PathPattern, 'segments'>): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i++) {
    const pa = param(a.segments[i]) !== undefined;
    const pb = param(b.segments[i]) !== undefined;
    if (pa !== pb) return pa ? 1 : -1;
  }
  return a.segments.length - b.segments.length;
}

/** A path pattern and what answers each method on it. */
export interface PathEntry<E> extends PathPattern {
  methods: Partial<Record<RouteMethod, E>>;
}

/** Groups `items` by path pattern, most specific first. */
export function pathEntries<E>(items: { method: RouteMethod; path: string; endpoint: E }[]): PathEntry<E>[] {
  const entries = new Map<string, PathEntry<E>>();
  for (const { method, path, endpoint } of items) {
    let entry = entries.get(path);
    if (!entry) entries.set(path, (entry = { pattern: path, segments: segmentsOf(path), methods: {} }));
    entry.methods[method] = endpoint;
  }
  return [...entries.values()].sort(bySpecificity);
}

/** The methods a path answers, as the `Allow` header lists them. */
export function allowedMethods(entry: PathEntry<unknown>): string {
  return [...ROUTE_METHODS.filter((m) => entry.methods[m]), ...(entry.methods.GET ? ['HEAD'] : []), 'OPTIONS'].join(', ');
}

/**
 * The entry a pathname addresses and its parameters, or undefined. A parameter that is not valid
 * percent-encoding makes the whole path unmatched (404), as a name that cannot exist.
 */
export function matchPath<T extends PathPattern>(entries: readonly T[], pathname: string): { entry: T; params: Record<string, string> } | undefined {
  const parts = pathname.split('/').filter(Boolean);
  for (const entry of entries) {
    if (entry.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; ok && i < parts.length; i++) {
      const name = param(entry.segments[i]);
      if (name === undefined) ok = entry.segments[i] === parts[i];
      else {
        try {
          params[name] = decodeURIComponent(parts[i]);
        } catch {
          ok = false;
        }
      }
    }
    if (ok) return { entry, params };
  }
  return undefined;
}
