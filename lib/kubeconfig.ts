import yaml from 'js-yaml';

/** Base64 of an ASCII text (a PEM bundle), in Node.js and in the browser alike. */
const base64 = (text: string) => (typeof Buffer !== 'undefined' ? Buffer.from(text).toString('base64') : btoa(text));

/**
 * A kubeconfig for one Kubernetes API: the CA the client trusts (inline, as
 * `certificate-authority-data`), the server's URL (a control plane's path carried by `server:`), a
 * bearer token and the namespace — so `KUBECONFIG=file kubectl get ipclaims` needs no flags. Built
 * by the CLI (`meridian kubeconfig`) and by the console's "Download kubeconfig" alike.
 */
export function kubeconfig(input: { name: string; server: string; caPem: string; token: string; namespace?: string }): string {
  const { name } = input;
  return yaml.dump(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name, cluster: { server: input.server, 'certificate-authority-data': base64(input.caPem) } }],
      users: [{ name, user: { token: input.token } }],
      contexts: [{ name, context: { cluster: name, user: name, namespace: input.namespace ?? 'default' } }],
      'current-context': name,
    },
    { lineWidth: -1 },
  );
}
