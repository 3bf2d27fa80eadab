import { kubeconfig as kubeconfigFor } from '@/lib/kubeconfig';
import { controlPlanePath } from './server';

/** A kubeconfig for one project's control plane at `origin` (`https://host:port`), named `meridian-<project>`. */
export function kubeconfig(input: { project: string; origin: string; caPem: string; token: string }): string {
  return kubeconfigFor({
    name: `meridian-${input.project}`,
    server: `${input.origin.replace(/\/+$/, '')}${controlPlanePath(input.project)}`,
    caPem: input.caPem,
    token: input.token,
  });
}
