'use client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '@/components/trpc/client';

/** Refetches every fleet view (lists, detail, catalogue, operator tables) after a change of ours. */
export function useInvalidateFleet() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.fleet.pathKey() });
}

/**
 * Whether the reader sees the fleet's exact status text: anyone with a platform role (operator, QA,
 * admin) does; a tenant gets plain sentences (plain-words.ts). False until the user is known, so a
 * tenant never sees the exact text flash first.
 */
export function useExactStatusText(): boolean {
  const trpc = useTRPC();
  const me = useQuery(trpc.me.get.queryOptions());
  return me.data ? me.data.platformRoles.length > 0 : false;
}
