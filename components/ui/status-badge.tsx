import { Badge } from './primitives';
import { statusOf, type Status, type StatusKind } from './status';

/** A state as a badge in its colour and word (components/ui/status.ts). */
export function StatusBadge({ kind, state, status }: { kind?: StatusKind; state?: string; status?: Status }) {
  const st = status ?? statusOf(kind!, state!);
  return (
    <Badge tone={st.tone}>
      <span data-status-tone={st.tone}>{st.word}</span>
    </Badge>
  );
}
