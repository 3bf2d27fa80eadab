import type { Metadata } from 'next';
import { EventsView } from '@/components/audit/events-view';

export const metadata: Metadata = { title: 'Activity' };

export default async function ActivityPage({ params }: { params: Promise<{ project: string }> }) {
  const { project } = await params;
  return <EventsView project={project} />;
}
