'use client';
import type { ReactNode } from 'react';
import { cx } from '@/components/ui/primitives';

/**
 * An on/off switch (`role="switch"`), labelled for assistive technology and tests. Its row says in
 * words whether the fault is on (its state line), so the switch does not repeat On/Off.
 */
export function Switch({
  label,
  caption,
  on,
  disabled,
  onChange,
}: {
  label: string;
  /** Visible words before the switch, when the row's title alone does not say what it switches. */
  caption?: string;
  on: boolean;
  disabled?: boolean;
  onChange: (on: boolean) => void;
}) {
  return (
    <button
      type="button"
      role="switch"
      aria-checked={on}
      aria-label={label}
      disabled={disabled}
      onClick={() => onChange(!on)}
      className={cx(
        'inline-flex shrink-0 items-center gap-2 rounded-full text-xs font-semibold disabled:cursor-not-allowed disabled:opacity-50',
        on ? 'text-amber-800' : 'text-slate-500',
      )}
    >
      {caption && <span className="font-normal text-slate-600">{caption}</span>}
      <span className={cx('relative inline-flex h-6 w-11 items-center rounded-full transition', on ? 'bg-amber-500' : 'bg-slate-300')}>
        <span className={cx('inline-block h-5 w-5 rounded-full bg-white shadow transition', on ? 'translate-x-5' : 'translate-x-0.5')} />
      </span>
    </button>
  );
}

/** A figure with its caption, for the status header. */
export function Stat({ label, value, hint }: { label: string; value: ReactNode; hint?: string }) {
  return (
    <div className="min-w-0" title={hint}>
      <dt className="truncate text-xs text-slate-500">{label}</dt>
      <dd className="mt-0.5 truncate text-sm font-semibold tabular-nums text-slate-900">{value}</dd>
    </div>
  );
}
