'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '@/app/_trpc/client';

/** Refetches every fleet view (lists, detail, catalogue, operator tables) after a change of ours. */
export function useInvalidateFleet() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.fleet.pathKey() });
}
