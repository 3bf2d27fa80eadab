'use client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Badge, Card, EmptyState, Input, Select, Table, Td, formatTime } from '@/components/ui/primitives';
import type { OperationKind, OperationState } from '@/lib/provider-wire';
import { resultTone, shortDigest, shortId } from './format';

const PAGE = 50;

/** Operation records, newest first, filtered on the simulator by state, kind and asset. */
export function OperationsTable({ enabled }: { enabled: boolean }) {
  const trpc = useTRPC();
  const [state, setState] = useState<'' | OperationState>('');
  const [kind, setKind] = useState<'' | OperationKind>('');
  const [asset, setAsset] = useState('');
  const assetId = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(asset.trim()) ? asset.trim() : undefined;
  const operations = useQuery({
    ...trpc.simulator.operations.queryOptions({ state: state || undefined, kind: kind || undefined, assetId, limit: PAGE }),
    enabled,
    placeholderData: keepPreviousData,
  });
  const data = operations.data;
  return (
    <Card
      title={`Operations${data ? ` (${data.items.length < data.total ? `newest ${data.items.length} of ` : ''}${data.total})` : ''}`}
      actions={
        <div className="flex flex-wrap items-center gap-2">
          <div className="w-32">
            <Select aria-label="Operation state" value={state} onChange={(e) => setState(e.target.value as '' | OperationState)} className="py-1">
              <option value="">any state</option>
              <option value="Running">Running</option>
              <option value="Succeeded">Succeeded</option>
              <option value="Failed">Failed</option>
            </Select>
          </div>
          <div className="w-28">
            <Select aria-label="Operation kind" value={kind} onChange={(e) => setKind(e.target.value as '' | OperationKind)} className="py-1">
              <option value="">any kind</option>
              <option value="install">install</option>
              <option value="power">power</option>
              <option value="cleanup">cleanup</option>
            </Select>
          </div>
          <div className="w-36">
            <Input aria-label="Asset" placeholder="asset id" value={asset} onChange={(e) => setAsset(e.target.value)} className="py-1" />
          </div>
        </div>
      }
    >
      {!enabled ? (
        <p className="text-sm text-slate-500">Shown when the simulator answers.</p>
      ) : operations.error ? (
        <p className="text-sm text-red-700">{errorMessage(operations.error)}</p>
      ) : data && data.items.length === 0 ? (
        <EmptyState title="No operations match">Install, power and cleanup operations submitted by the control plane (or a test) appear here.</EmptyState>
      ) : (
        <Table head={['Operation', 'Kind', 'Asset', 'Epoch · token', 'Binding', 'State', 'Detail', 'Driven by', 'Submitted', 'Completed']}>
          {data?.items.map((op) => (
            <tr key={op.id}>
              <Td>
                <code className="font-mono text-xs">{op.id}</code>
              </Td>
              <Td>{op.kind}</Td>
              <Td>
                <code className="whitespace-nowrap font-mono text-xs">{op.assetId}</code>
              </Td>
              <Td className="whitespace-nowrap tabular-nums">
                {op.epoch} · {op.fencingToken}
              </Td>
              <Td>
                <code className="font-mono text-xs" title={op.bindingId}>
                  {shortId(op.bindingId)}
                </code>
              </Td>
              <Td>
                <Badge tone={resultTone(op.state)}>{op.state}</Badge>
              </Td>
              <Td className="text-xs">
                {op.error ? (
                  <span className="text-red-700" title={op.error.message}>
                    {op.error.code}
                  </span>
                ) : op.kind === 'install' ? (
                  <code className="font-mono">{shortDigest(op.imageDigest)}</code>
                ) : op.kind === 'power' ? (
                  `power ${op.power}`
                ) : (
                  'wipe, close epoch'
                )}
              </Td>
              <Td className="text-xs">
                {op.caller ? (
                  <code className="font-mono" title={op.caller} data-testid="operation-caller">
                    {op.caller.replace(/^spiffe:\/\/[^/]+\/meridian\//, '')}
                  </code>
                ) : (
                  '—'
                )}
              </Td>
              <Td className="whitespace-nowrap text-xs">{formatTime(op.submittedAt)}</Td>
              <Td className="whitespace-nowrap text-xs">
                {op.completedAt ? formatTime(op.completedAt) : op.completesAt ? `due ${formatTime(op.completesAt)}` : '—'}
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
