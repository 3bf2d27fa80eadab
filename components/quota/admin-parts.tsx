'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '@/components/trpc/client';
import { errorMessage } from '@/components/ui/errors';
import { Alert } from '@/components/ui/primitives';

/** Refetches every quota view after an operator change (limits, queues and logs move together). */
export function useInvalidateQuota() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.quota.pathKey() });
}

/** An error shown under the form or table it belongs to (nothing without one). */
export function ErrorLine({ error, testId }: { error: unknown; testId?: string }) {
  if (!error) return null;
  return (
    <div className="mt-2">
      <Alert testId={testId}>{errorMessage(error)}</Alert>
    </div>
  );
}

/** `type=amount` lines ⇄ allowance lists (the policy and grant forms edit them as text). */
export function parseAmounts(text: string): { resourceType: string; amount: number | string }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.lastIndexOf('=');
      const resourceType = (at < 0 ? line : line.slice(0, at)).trim();
      const raw = at < 0 ? '' : line.slice(at + 1).trim();
      return { resourceType, amount: /^\d+$/.test(raw) ? Number(raw) : raw };
    });
}
export const formatAmounts = (list: { resourceType: string; amount: number | string }[]) => list.map((a) => `${a.resourceType}=${a.amount}`).join('\n');
/** The class of the forms' monospaced text areas (allowances, constraints). */
export const textArea = 'block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 font-mono text-xs shadow-sm focus:border-brand-500';
