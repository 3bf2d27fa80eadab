/**
 * What the web process serves the Kubernetes API with, published for the console (its "Download
 * kubeconfig"): the HTTPS port and the CA a client trusts. Kept on `globalThis` because Next.js
 * loads the tRPC routers in module graphs of its own, apart from the entry point that starts the
 * HTTPS server (bin/web.ts).
 */
export interface KubeApiEndpoint {
  httpsPort: number;
  caPem: string;
}

const holder = globalThis as { __meridianKubeApi?: KubeApiEndpoint };

/** Called by the web process once its HTTPS server listens (and again when its CA changes). */
export function publishKubeApi(endpoint: KubeApiEndpoint): void {
  holder.__meridianKubeApi = endpoint;
}

/** The published endpoint; undefined where this process serves no Kubernetes API. */
export const publishedKubeApi = (): KubeApiEndpoint | undefined => holder.__meridianKubeApi;
