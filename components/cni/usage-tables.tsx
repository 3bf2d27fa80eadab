import { Count } from '@/components/ipam/utilization';
import { Table, Td } from '@/components/ui/primitives';
import { CountBar } from './bars';
import { TOP_ROWS } from './queries';

export interface ClusterUsage {
  cluster: string;
  network: string;
  leases: number;
  nodes: number;
  blocks: number;
  blockCapacity: string;
}

const toNumber = (exact: string) => {
  const n = Number(exact);
  return Number.isFinite(n) ? n : 0;
};

/** Per cluster: leases against the capacity of its node blocks, nodes and blocks relative to the largest cluster. */
export function ClusterUsageTable({ rows, showNetwork = false }: { rows: ClusterUsage[]; showNetwork?: boolean }) {
  const maxNodes = Math.max(1, ...rows.map((r) => r.nodes));
  const maxBlocks = Math.max(1, ...rows.map((r) => r.blocks));
  return (
    <Table head={['Cluster', ...(showNetwork ? ['Network'] : []), 'Leases (of block capacity)', 'Nodes', 'Blocks', 'Block capacity']}>
      {rows.map((r) => (
        <tr key={r.cluster}>
          <Td className="font-medium text-slate-900">{r.cluster}</Td>
          {showNetwork && <Td>{r.network}</Td>}
          <Td>
            <CountBar label={`${r.cluster} leases of block capacity`} value={r.leases} max={toNumber(r.blockCapacity)} fill />
          </Td>
          <Td>
            <CountBar label={`${r.cluster} nodes`} value={r.nodes} max={maxNodes} />
          </Td>
          <Td>
            <CountBar label={`${r.cluster} node blocks`} value={r.blocks} max={maxBlocks} />
          </Td>
          <Td>
            <Count value={r.blockCapacity} />
          </Td>
        </tr>
      ))}
    </Table>
  );
}

/** The top rows of a "leases by …" ranking, with a bar relative to the largest. */
export function TopLeasesTable({
  title,
  keyLabel,
  rows,
  emptyText,
}: {
  title: string;
  keyLabel: string;
  rows: { cluster: string; key: string; leases: number }[];
  emptyText: string;
}) {
  const top = rows.slice(0, TOP_ROWS);
  const max = Math.max(1, ...top.map((r) => r.leases));
  return (
    <div className="min-w-0">
      <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-slate-500">
        {title}
        {rows.length > TOP_ROWS && <span className="font-normal normal-case text-slate-500"> · top {TOP_ROWS}</span>}
      </h3>
      {top.length === 0 ? (
        <p className="rounded-md border border-dashed border-slate-300 px-3 py-4 text-center text-sm text-slate-500">{emptyText}</p>
      ) : (
        <Table head={['Cluster', keyLabel, 'Leases']}>
          {top.map((r) => (
            <tr key={`${r.cluster}/${r.key}`}>
              <Td>{r.cluster}</Td>
              <Td className="font-mono text-xs">{r.key}</Td>
              <Td>
                <CountBar label={`${r.key} leases`} value={r.leases} max={max} />
              </Td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  );
}
