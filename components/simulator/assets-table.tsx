'use client';
import { Badge, Card, EmptyState, Table, Td, formatTime } from '@/components/ui/primitives';
import type { AssetList } from '@/lib/provider-wire';
import { shortDigest, shortId } from './format';

/** Each asset's fencing state and what is installed on it, as the simulator holds it. */
export function AssetsTable({ assets, error, loading }: { assets: AssetList | undefined; error: string | null; loading: boolean }) {
  return (
    <Card title={`Asset states${assets ? ` (${assets.total})` : ''}`}>
      {error ? (
        <p className="text-sm text-slate-600">{error}</p>
      ) : !assets ? (
        <p className="text-sm text-slate-500">{loading ? 'Loading…' : 'Shown when the simulator answers.'}</p>
      ) : assets.items.length === 0 ? (
        <EmptyState title="No assets yet">Assets are created by their first operation (or seeded with SIMULATOR_ASSETS).</EmptyState>
      ) : (
        <Table
          label="Assets"
          head={['Asset', 'Epoch', 'Binding', 'Closed through', 'Fencing token', 'Power', 'Installed image', 'Effects', 'Last operation', 'Updated']}
        >
          {assets.items.map((a) => (
            <tr key={a.id} data-testid="asset-row">
              <Td>
                <code className="whitespace-nowrap font-mono text-xs">{a.id}</code>
              </Td>
              <Td className="tabular-nums">{a.epoch}</Td>
              <Td>
                {a.bindingId ? (
                  <code className="font-mono text-xs" title={a.bindingId}>
                    {shortId(a.bindingId)}
                  </code>
                ) : (
                  <span className="text-slate-500">unbound</span>
                )}
              </Td>
              <Td className="tabular-nums">{a.closedThroughEpoch}</Td>
              <Td className="tabular-nums">{a.fencingToken}</Td>
              <Td>
                <Badge tone={a.power === 'on' ? 'green' : 'slate'}>{a.power}</Badge>
              </Td>
              <Td>
                <code className="font-mono text-xs" title={a.installedImageDigest ?? undefined}>
                  {shortDigest(a.installedImageDigest)}
                </code>
              </Td>
              <Td className="tabular-nums">{a.effectCount}</Td>
              <Td>
                {a.lastOperationId ? (
                  <code className="font-mono text-xs" title={a.lastOperationId}>
                    {shortId(a.lastOperationId, 16)}
                  </code>
                ) : (
                  '—'
                )}
              </Td>
              <Td className="whitespace-nowrap text-xs">{formatTime(a.updatedAt)}</Td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
