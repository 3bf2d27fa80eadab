'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert, Card, EmptyState } from '@/components/ui/primitives';
import { useSearchText } from '@/components/ui/search-box';
import { AllocationsSection } from './allocations-section';
import { CapacitySection } from './capacity-section';
import { Inventory } from './fleet-inventory';
import type { AllocationRow, CapacityState, OperationRow } from './format';
import { SAFETY_REFETCH_MS, useFleetLive } from './live';
import { OperationsSection } from './operations-section';
import { LiveIndicator } from './parts';
import { allocationsInput, capacityInput, initialCapacityFilters, operationsInput, type CapacityFilters } from './queries';

/**
 * The operator's fleet page: inventory by location and class (state and health), the capacity
 * list with its actions (quarantine, return to pool, retire), live allocations (release, force
 * release) and provider operations that need attention. Everything updates live: each change in
 * the fleet refetches the tables it touches (see live.ts).
 */
export function FleetView() {
  const trpc = useTRPC();
  const [filters, setFilters] = useState<CapacityFilters>(initialCapacityFilters);
  const searchBox = useSearchText();
  const search = searchBox.settled;
  useEffect(() => setFilters((f) => (f.search === search ? f : { ...f, search, offset: 0 })), [search]);
  const [allocOffset, setAllocOffset] = useState(0);
  const live = useFleetLive('operator');
  const refetchInterval = SAFETY_REFETCH_MS;

  const inventory = useQuery({ ...trpc.fleet.inventory.queryOptions(), refetchInterval });
  const catalogue = useQuery({ ...trpc.fleet.catalogue.queryOptions(), refetchInterval });
  const capacity = useQuery({ ...trpc.fleet.capacity.list.queryOptions(capacityInput(filters)), placeholderData: keepPreviousData, refetchInterval });
  const allocations = useQuery({
    ...trpc.fleet.allocations.list.queryOptions(allocationsInput(allocOffset)),
    placeholderData: keepPreviousData,
    refetchInterval,
  });
  const operations = useQuery({ ...trpc.fleet.operations.list.queryOptions(operationsInput), refetchInterval });

  const allocationRows = (allocations.data ?? []) as AllocationRow[];
  const operationRows = (operations.data ?? []) as OperationRow[];
  const inventoryRows = inventory.data ?? [];
  const fetching = inventory.isFetching || capacity.isFetching || allocations.isFetching || operations.isFetching;

  const showState = (state: CapacityState | '', location = '') => {
    setFilters((f) => ({ ...f, state, location: location || f.location, offset: 0 }));
    document.getElementById('capacity')?.scrollIntoView({ behavior: 'smooth', block: 'start' });
  };

  return (
    <div className="space-y-6">
      <Card title="Inventory by location and class" actions={<LiveIndicator state={live} fetching={fetching} />}>
        {inventory.error ? (
          <Alert testId="inventory-error">{errorMessage(inventory.error)}</Alert>
        ) : !inventory.data ? (
          <p className="text-sm text-slate-500">Loading inventory…</p>
        ) : inventoryRows.length === 0 ? (
          <EmptyState title="No capacity registered">
            Provider capacity records appear here grouped by location and class, with their state and health.
          </EmptyState>
        ) : (
          <Inventory rows={inventoryRows} locations={catalogue.data?.locations ?? []} onShow={showState} />
        )}
      </Card>

      <section id="capacity" className="scroll-mt-4">
        <CapacitySection
          data={capacity.data}
          error={capacity.error}
          placeholder={capacity.isPlaceholderData}
          filters={filters}
          search={searchBox}
          onFilters={(patch) => setFilters((f) => ({ ...f, ...patch, offset: patch.offset ?? 0 }))}
          locations={[...new Set(inventoryRows.map((r) => r.location))]}
        />
      </section>

      <AllocationsSection rows={allocationRows} error={allocations.error} offset={allocOffset} onOffset={setAllocOffset} />

      <OperationsSection rows={operationRows} error={operations.error} />
    </div>
  );
}
