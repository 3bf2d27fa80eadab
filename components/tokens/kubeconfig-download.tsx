'use client';
import { useQuery } from '@tanstack/react-query';
import { kubeconfig } from '@/lib/kubeconfig';
import { useTRPC } from '@/components/trpc/client';
import { Button } from '@/components/ui/primitives';

/**
 * "Download kubeconfig" for a token just created: a kubeconfig naming the project's control plane
 * (the Kubernetes API's origin, its CA and the token), so `KUBECONFIG=file kubectl get ipclaims`
 * works with no flags. Built in the browser: the token never goes back to the server.
 */
export function KubeconfigDownload({ project, token }: { project: string; token: string }) {
  const trpc = useTRPC();
  const api = useQuery(trpc.tokens.kubeApi.queryOptions({ project }));
  if (!api.data) return null;
  const { origin, httpsPort, path, caPem } = api.data;
  const server = `${origin ?? `https://${window.location.hostname}:${httpsPort}`}${path}`;
  function download() {
    const text = kubeconfig({ name: `meridian-${project}`, server, caPem, token });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([text], { type: 'application/yaml' }));
    link.download = `${project}.kubeconfig`;
    link.click();
    URL.revokeObjectURL(link.href);
  }
  return (
    <div className="mt-3 flex flex-wrap items-center gap-3">
      <Button type="button" variant="secondary" onClick={download} data-testid="download-kubeconfig">
        Download kubeconfig
      </Button>
      <span className="text-xs text-slate-600">
        Then <code className="font-mono">KUBECONFIG={project}.kubeconfig kubectl get ipclaims</code> — the Kubernetes API at{' '}
        <code className="font-mono">{server}</code>.
      </span>
    </div>
  );
}
