import { NotFoundView } from '@/components/ui/not-found';

/** A missing (or foreign) project, network, machine or page inside the console, in the console's frame. */
export default function ConsoleNotFound() {
  return <NotFoundView />;
}
