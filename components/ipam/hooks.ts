'use client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/app/_trpc/client';

/** `value`, settled: it changes only after `ms` without further changes. */
export function useDebounced<T>(value: T, ms = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** Whether the signed-in user may change this project's networks (editor or owner). */
export function useCanEdit(project: string): boolean {
  const trpc = useTRPC();
  const { data } = useQuery(trpc.projects.get.queryOptions({ project }));
  return data ? data.role !== 'viewer' : false;
}

/** Refetches every IPAM view (map, tables, utilization, preview) after a change. */
export function useInvalidateIpam() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.ipam.pathKey() });
}
