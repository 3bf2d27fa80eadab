import { sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { MODULES, type ModuleName } from '@/lib/env-schema';
import type { KindDeclaration } from './declare';

/**
 * What keeps discovery from going stale (docs/aggregated-api.md): a group-version is listed only
 * while Meridian can serve it.
 *
 * - A module switched off (MERIDIAN_DISABLED_MODULES) takes its kinds out of the API altogether:
 *   absent from `/apis`, aggregated discovery and OpenAPI, its paths 404.
 * - While the database does not answer, every kind is stored there, so `/apis/{group}` and
 *   `/apis/{group}/{version}` answer 503 (the aggregator marks the APIService `Available=False`
 *   and clients skip the group) and `/apis` lists no group; the first probe that answers after
 *   that brings them back.
 */

/** The module a kind belongs to: its declaration's, else its group's first label when that names a module (`ipam.miloapis.com` → ipam). */
export function moduleOf(k: Pick<KindDeclaration, 'group' | 'module'>): ModuleName | undefined {
  if (k.module) return k.module;
  const label = k.group.split('.')[0];
  return (MODULES as readonly string[]).includes(label) ? (label as ModuleName) : undefined;
}

/** The kinds whose module is not switched off. */
export function enabledKinds(kinds: readonly KindDeclaration[], disabled: readonly ModuleName[]): KindDeclaration[] {
  return kinds.filter((k) => {
    const m = moduleOf(k);
    return !m || !disabled.includes(m);
  });
}

export interface DatabaseProbe {
  /** Undefined while the database answers; else why it does not. */
  unavailable(): Promise<string | undefined>;
}

/**
 * A probe of the database (`select 1` within `budgetMs`), its outcome reused for `reuseMs` and one
 * probe in flight at a time, so discovery under load costs the database one statement a second.
 */
export function databaseProbe(db: () => Db, { budgetMs, reuseMs = 1_000 }: { budgetMs: number; reuseMs?: number }): DatabaseProbe {
  let last: { at: number; outcome: string | undefined } | undefined;
  let inFlight: Promise<string | undefined> | undefined;
  const probe = async (): Promise<string | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        db().execute(sql`select 1`),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the database did not answer within ${budgetMs} ms`)), budgetMs);
        }),
      ]);
      return undefined;
    } catch (e) {
      return e instanceof Error && e.message.startsWith('the database did not answer') ? e.message : 'the database cannot be reached';
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    async unavailable() {
      if (last && Date.now() - last.at < reuseMs) return last.outcome;
      inFlight ??= probe().then((outcome) => {
        last = { at: Date.now(), outcome };
        inFlight = undefined;
        return outcome;
      });
      return inFlight;
    },
  };
}
