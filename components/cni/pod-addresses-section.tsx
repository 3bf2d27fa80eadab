'use client';
import { UtilizationHistory } from '@/components/capacity/history-chart';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/components/trpc/client';
import { useCanEdit } from '@/components/projects/hooks';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Card, EmptyState } from '@/components/ui/primitives';
import { CniEventsList } from './events-list';
import { LeasesTable } from './leases-table';
import { podUsageInput } from './queries';
import { RegisterClusterForm } from './register-cluster-form';
import { ClusterUsageTable, TopLeasesTable } from './usage-tables';

/**
 * A network's pod addresses: use per cluster, node and namespace, the lease table, CHECK-mismatch
 * and GC events and, for editors, registering a cluster on this network.
 */
export function PodAddressesSection({ project, network }: { project: string; network: string }) {
  const trpc = useTRPC();
  const canEdit = useCanEdit(project);
  const usage = useQuery(trpc.cni.usage.queryOptions(podUsageInput(project, network)));
  const clusters = useQuery(trpc.cni.clusters.list.queryOptions({ project }));
  const events = useQuery(trpc.cni.events.queryOptions({ project }));

  const here = usage.data?.byCluster.map((c) => c.cluster) ?? [];
  // The lease list filters by cluster, not network: "all clusters" is exact only when every cluster of the project is on this network.
  const allowAll = clusters.data ? clusters.data.every((c) => c.network === network) : false;
  const hereSet = new Set(here);
  const networkEvents = events.data?.filter((e) => hereSet.has(e.cluster)) ?? [];
  const hasClusters = here.length > 0;

  return (
    <section id="pod-addresses" aria-labelledby="pod-addresses-heading" className="scroll-mt-4 space-y-4">
      <h2 id="pod-addresses-heading" className="text-base font-semibold text-slate-900">
        Pod addresses
      </h2>
      {usage.error && <Alert testId="pod-usage-error">{errorMessage(usage.error)}</Alert>}

      <div className={canEdit ? 'grid items-start gap-6 xl:grid-cols-[minmax(0,1fr)_22rem]' : ''}>
        <Card title="Clusters" className="min-w-0">
          {!usage.data ? (
            !usage.error && <p className="text-sm text-slate-500">Loading pod address use…</p>
          ) : hasClusters ? (
            <ClusterUsageTable rows={usage.data.byCluster} />
          ) : (
            <EmptyState title="No clusters on this network yet">
              Kubernetes clusters attached to {network} appear here with their pod address leases, nodes and node blocks.
              {canEdit ? ' Register one to get the token its nodes’ meridian-ipam CNI plugin uses.' : ''}
            </EmptyState>
          )}
        </Card>
        {canEdit && (
          <Card title="Register cluster">
            <RegisterClusterForm project={project} network={network} />
          </Card>
        )}
      </div>

      {here.map((c) => (
        <Card key={c} title={`Cluster ${c} over time`}>
          <UtilizationHistory project={project} object="cluster" name={c} />
        </Card>
      ))}

      {hasClusters && usage.data && (
        <>
          <Card title="Leases by node and namespace">
            <div className="grid gap-6 lg:grid-cols-2">
              <TopLeasesTable
                title="By node"
                keyLabel="Node"
                rows={usage.data.byNode.map((r) => ({ cluster: r.cluster, key: r.node, leases: r.leases }))}
                emptyText="Nodes appear here once their pods hold addresses."
              />
              <TopLeasesTable
                title="By namespace"
                keyLabel="Namespace"
                rows={usage.data.byNamespace.map((r) => ({ cluster: r.cluster, key: r.namespace, leases: r.leases }))}
                emptyText="Namespaces appear here once their pods hold addresses."
              />
            </div>
          </Card>

          <Card title="Leases">
            {clusters.data || clusters.error ? (
              <LeasesTable key={`${here.join(',')}|${allowAll}`} project={project} clusters={here} allowAll={allowAll} />
            ) : (
              <p className="text-sm text-slate-500">Loading leases…</p>
            )}
          </Card>

          <Card title="CHECK mismatches and GC">
            {events.error ? (
              <Alert testId="cni-events-error">{errorMessage(events.error)}</Alert>
            ) : events.data ? (
              <CniEventsList events={networkEvents} />
            ) : (
              <p className="text-sm text-slate-500">Loading events…</p>
            )}
          </Card>
        </>
      )}
    </section>
  );
}
