'use client';
import { useId, type ReactNode } from 'react';
import { Input, cx } from '@/components/ui/primitives';

/** One fault: its name, what it does, its state and counter in words, its parameters and its switch. */
export function FaultRow({
  title,
  description,
  on,
  state,
  controls,
  toggle,
}: {
  title: string;
  description: string;
  on: boolean;
  state: ReactNode;
  controls?: ReactNode;
  toggle: ReactNode;
}) {
  const titleId = useId();
  return (
    // The list item stays a list item (axe: a list holds only <li>); the group inside names the fault.
    <li className={cx('border-b border-slate-100 lg:odd:border-r', on && 'bg-amber-50/60')}>
      <div role="group" aria-labelledby={titleId} className="flex h-full flex-col gap-2 px-4 py-3">
        <div className="flex items-start justify-between gap-3">
          <div className="min-w-0">
            <h3 id={titleId} className="text-sm font-semibold text-slate-900">
              {title}
            </h3>
            <p className="text-xs text-slate-500">{description}</p>
          </div>
          {toggle}
        </div>
        <div className={cx('text-sm', on ? 'font-medium text-amber-900' : 'text-slate-500')} data-testid="fault-state">
          {state}
        </div>
        {controls && <div className="mt-auto flex flex-wrap items-end gap-2">{controls}</div>}
      </div>
    </li>
  );
}

/** A labelled number input with its unit, for a fault's parameter. */
export function NumberInput({
  label,
  value,
  onChange,
  min,
  max,
  width = 'w-24',
  unit,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  min: number;
  max: number;
  width?: string;
  unit?: string;
}) {
  const id = useId();
  return (
    <label htmlFor={id} className="flex flex-col gap-0.5 text-xs text-slate-600">
      {label}
      <span className="flex items-center gap-1">
        <span className={cx('block', width)}>
          <Input id={id} type="number" inputMode="numeric" min={min} max={max} value={value} onChange={(e) => onChange(e.target.value)} className="py-1" />
        </span>
        {unit && <span className="text-xs text-slate-500">{unit}</span>}
      </span>
    </label>
  );
}
