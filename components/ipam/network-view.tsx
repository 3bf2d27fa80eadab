'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useCallback, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { UtilizationHistory } from '@/components/capacity/history-chart';
import { PodAddressesSection } from '@/components/cni/pod-addresses-section';
import { useCanEdit } from '@/components/projects/hooks';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Badge, Button, Card, formatTime } from '@/components/ui/primitives';
import { AddressMap } from './address-map';
import { ClaimsTable } from './claims-table';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { CreateClaimForm } from './create-claim-form';
import { FreePrefixes, type ClaimPrefill } from './free-prefixes';
import { useInvalidateIpam } from './hooks';
import { CarvePoolForm, PoolsTable } from './pools-section';
import { RetainedSection } from './retained-section';
import { FamilyBars } from './utilization';

/**
 * One network: utilization per family, pools, the address-space map, claims and, for editors, the
 * forms that change them. The map and the claims table are linked: clicking a claim on the map
 * selects it in the table; choosing a pool in the pools table shows it on the map.
 */
export function NetworkView({ project, network }: { project: string; network: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const canEdit = useCanEdit(project);
  const invalidate = useInvalidateIpam();
  const net = useQuery(trpc.ipam.networks.get.queryOptions({ project, name: network }));
  const [pool, setPool] = useState<string | undefined>(undefined);
  const [focusClaim, setFocusClaim] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [shownPool, setShownPool] = useState<string | null>(null);
  const onShownPool = useCallback((p: string | null) => setShownPool(p), []);
  const [prefill, setPrefill] = useState<ClaimPrefill | null>(null);
  const remove = useMutation(
    trpc.ipam.networks.delete.mutationOptions({
      onSuccess: () => {
        void invalidate();
        router.push(`/projects/${project}/networks?deleted=${encodeURIComponent(network)}`);
      },
    }),
  );

  if (net.error) {
    return (
      <div className="space-y-3">
        <Alert testId="network-error">{errorMessage(net.error)}</Alert>
        <Link href={`/projects/${project}/networks`} className="text-sm font-medium text-brand-600 hover:underline">
          ← All networks
        </Link>
      </div>
    );
  }
  const n = net.data;
  if (!n) return <p className="text-sm text-slate-500">Loading network…</p>;
  const visiblePools = n.pools.filter((p) => p.kind !== 'NodeBlock');
  // Free prefixes are listed for the pool on the map; a node block's free space is the CNI's, not claimable.
  const freePool = shownPool && visiblePools.some((p) => p.name === shownPool) ? shownPool : null;

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <Link href={`/projects/${project}/networks`} className="text-xs font-medium text-brand-600 hover:underline">
            ← Networks
          </Link>
          <h1 className="mt-1 text-xl font-semibold text-slate-900">{n.name}</h1>
          {n.description && <p className="mt-0.5 max-w-3xl text-sm text-slate-600">{n.description}</p>}
          <p className="mt-1 flex flex-wrap items-center gap-2 text-xs text-slate-500">
            <Badge tone="blue">
              {n.claimCount} {n.claimCount === 1 ? 'claim' : 'claims'}
            </Badge>
            <Badge>
              {visiblePools.length} {visiblePools.length === 1 ? 'pool' : 'pools'}
            </Badge>
            <span>created {formatTime(n.createdAt)}</span>
          </p>
        </div>
        <div className="flex flex-wrap gap-2">
          <Link
            href={`/projects/${project}/networks/${n.name}/audit`}
            className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-50"
          >
            Address audit
          </Link>
          {canEdit && (
            <Button variant="secondary" className="text-red-700!" onClick={() => setConfirmDelete(true)}>
              Delete network
            </Button>
          )}
        </div>
      </div>

      <Card title="Utilization">
        <FamilyBars utilization={n.utilization} />
      </Card>

      <Card title="Utilization history">
        <UtilizationHistory project={project} object="network" name={n.name} />
      </Card>

      <Card title="Pools">
        <PoolsTable
          pools={n.pools}
          selected={pool}
          onShow={(p) => {
            setPool(p);
            document.getElementById('address-map')?.scrollIntoView({ behavior: 'smooth', block: 'start' });
          }}
        />
        {canEdit && (
          <details className="mt-4 rounded-md border border-slate-200 p-3">
            <summary className="cursor-pointer select-none text-sm font-medium text-slate-800">Carve a child pool</summary>
            <div className="mt-3">
              <CarvePoolForm project={project} network={n.name} pools={n.pools} />
            </div>
          </details>
        )}
      </Card>

      <div className="grid items-start gap-6 xl:grid-cols-[minmax(0,1fr)_22rem]">
        <div id="address-map" className="min-w-0 scroll-mt-4">
          <Card title="Address map">
            <AddressMap
              project={project}
              network={n.name}
              pools={n.pools}
              pool={pool}
              onPoolChange={setPool}
              onShownPool={onShownPool}
              focusClaim={focusClaim}
              onClaimClick={(name) => {
                setFocusClaim(name);
                document.getElementById('claims')?.scrollIntoView({ behavior: 'smooth', block: 'nearest' });
              }}
            />
          </Card>
        </div>
        <div className="min-w-0 space-y-6">
          {freePool && (
            <Card title="Free prefixes">
              <FreePrefixes
                project={project}
                network={n.name}
                pool={freePool}
                onClaim={
                  canEdit
                    ? (block) => {
                        setPrefill({ ...block, nonce: Date.now() });
                        const name = document.getElementById('claim-name');
                        name?.scrollIntoView({ behavior: 'smooth', block: 'center' });
                        name?.focus({ preventScroll: true });
                      }
                    : undefined
                }
              />
            </Card>
          )}
          {canEdit && (
            <Card title="Create claim">
              <CreateClaimForm project={project} network={n.name} pools={n.pools} prefill={prefill} />
            </Card>
          )}
        </div>
      </div>

      <section id="claims" aria-labelledby="claims-heading" className="scroll-mt-4 rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
        <h2 id="claims-heading" className="mb-3 text-sm font-semibold text-slate-800">
          Claims
        </h2>
        <ClaimsTable project={project} network={n.name} canEdit={canEdit} focusClaim={focusClaim} onClearFocus={() => setFocusClaim(null)} />
      </section>

      <RetainedSection project={project} network={n.name} canEdit={canEdit} />

      <PodAddressesSection project={project} network={n.name} />

      {confirmDelete && (
        <ConfirmDialog
          title={`Delete network ${n.name}?`}
          confirmLabel="Delete network"
          pending={remove.isPending}
          error={remove.error ? errorMessage(remove.error) : null}
          onCancel={() => {
            setConfirmDelete(false);
            remove.reset();
          }}
          onConfirm={() => remove.mutate({ project, name: n.name })}
        >
          {n.claimCount > 0 && (
            <p className="mb-2 font-medium text-red-800" data-testid="network-in-use">
              It is in use: {n.claimCount === 1 ? 'a claim holds' : `${n.claimCount} claims hold`} addresses of it, so it cannot be deleted until{' '}
              {n.claimCount === 1 ? 'that claim is' : 'they are'} released.
            </p>
          )}
          <p>
            The network, {visiblePools.length === 1 ? 'its pool' : `its ${visiblePools.length} pools`} and their reservations are removed. A network that still
            holds claims, retained allocations or pod addresses cannot be deleted: release them first.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
