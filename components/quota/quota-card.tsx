'use client';
import { TextLink } from '@/components/ui/primitives';
import { BucketBars } from './quota-view';

/** The dashboard's Quota card: a compact bar per bucket and a link to the quota page. */
export function QuotaCardBody({ project }: { project: string }) {
  return (
    <div className="space-y-3">
      <BucketBars project={project} compact />
      <p className="text-sm">
        <TextLink href={`/projects/${project}/quota`}>Claim log and increase requests</TextLink>
      </p>
    </div>
  );
}
