'use client';
import { useProjectLive } from '@/components/fleet/live';

/** Keeps every page of a project live (components/fleet/live.ts): mounted once by the project's layout. */
export function ProjectLive({ project }: { project: string }) {
  const state = useProjectLive(project);
  return <span hidden data-testid="project-live" data-state={state} />;
}
