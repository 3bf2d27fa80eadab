'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '@/components/trpc/client';

/** Refetches every IPAM view (map, tables, utilization, preview) after a change. */
export function useInvalidateIpam() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.ipam.pathKey() });
}
