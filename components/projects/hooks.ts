'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/components/trpc/client';

/** Whether the signed-in user may change this project (editor or owner, not viewer); false until the role is known. */
export function useCanEdit(project: string): boolean {
  const trpc = useTRPC();
  const { data } = useQuery(trpc.projects.get.queryOptions({ project }));
  return data ? data.role !== 'viewer' : false;
}

/** The signed-in user's role in this project (`viewer`, `editor` or `owner`); undefined until it is known. */
export function useProjectRole(project: string): 'viewer' | 'editor' | 'owner' | undefined {
  const trpc = useTRPC();
  const { data } = useQuery(trpc.projects.get.queryOptions({ project }));
  return data?.role;
}
