'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '@/app/_trpc/client';
import { livePhases } from './format';

/*
 * Live updates. DESIGN §1 wants LISTEN/NOTIFY fed into tRPC subscriptions (SSE); the fleet does not
 * publish change notifications yet, so until it does these views refetch on a short, bounded
 * interval — and only while something is in flight (a machine in a non-terminal phase, an
 * operation not finished). When nothing moves, nothing is refetched by timer. React Query pauses
 * interval refetches while the tab is hidden.
 */

/** While a machine is being worked on (allocating, installing, cleaning): follow each step. */
export const ACTIVE_REFRESH_MS = 1_000;
/** Operator views: other people's requests arrive without anything of ours being in flight. */
export const OPERATOR_REFRESH_MS = 5_000;
/** The request form's availability matrix: free counts move as other projects bind and release. */
export const CATALOGUE_REFRESH_MS = 5_000;

/** The refetch interval for a view showing machines in these phases: fast while any is live, else off. */
export function liveInterval(phases: Iterable<string | null | undefined>): number | false {
  for (const p of phases) if (p && livePhases.has(p)) return ACTIVE_REFRESH_MS;
  return false;
}

/** Refetches every fleet view (lists, detail, catalogue, operator tables) after a change. */
export function useInvalidateFleet() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.fleet.pathKey() });
}
