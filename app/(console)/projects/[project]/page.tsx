import type { Metadata } from 'next';
import { Card, EmptyState } from '@/components/ui/primitives';

export const metadata: Metadata = { title: 'Project' };

export default async function ProjectDashboard() {
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Card title="Networks">
        <EmptyState title="No networks yet">Networks (VPCs) of this project appear here with their IPv4 and IPv6 utilization.</EmptyState>
      </Card>
      <Card title="Pod addresses">
        <EmptyState title="No clusters yet">Kubernetes clusters attached to this project&apos;s networks appear here with their pod address counts.</EmptyState>
      </Card>
      <Card title="Quota">
        <EmptyState title="No quota buckets yet">Your allowances (limit, used, available) per resource type appear here.</EmptyState>
      </Card>
      <Card title="Machines">
        <EmptyState title="No machines yet">Bare-metal machines you request appear here with their phase.</EmptyState>
      </Card>
    </div>
  );
}
