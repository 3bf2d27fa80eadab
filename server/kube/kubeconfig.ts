import yaml from 'js-yaml';
import { controlPlanePath } from './server';

/**
 * A kubeconfig for one project's control plane: the CA the client trusts (inline, as
 * `certificate-authority-data`), the control plane's URL (its path carried by `server:`), and a
 * bearer token — so `KUBECONFIG=file kubectl get ipclaims` needs no flags.
 */
export function kubeconfig(input: { project: string; origin: string; caPem: string; token: string }): string {
  const name = `meridian-${input.project}`;
  return yaml.dump(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name,
          cluster: {
            server: `${input.origin.replace(/\/+$/, '')}${controlPlanePath(input.project)}`,
            'certificate-authority-data': Buffer.from(input.caPem).toString('base64'),
          },
        },
      ],
      users: [{ name, user: { token: input.token } }],
      contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
      'current-context': name,
    },
    { lineWidth: -1 },
  );
}
