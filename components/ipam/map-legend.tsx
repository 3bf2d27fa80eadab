import { cx } from '@/components/ui/primitives';
import { focusedClaimClass, heat, kindClass, kindLabel, striped, type Kind } from './map-style';

/** The map's key: the colour of each kind of block, or the heat scale of the cells. */
export function Legend({ mode }: { mode: 'exact' | 'cells' }) {
  if (mode === 'cells') {
    return (
      <div className="flex items-center gap-2 text-xs text-slate-600">
        <span>0%</span>
        <span
          aria-hidden
          className="h-2.5 w-40 rounded-sm ring-1 ring-inset ring-slate-200"
          style={{ background: `linear-gradient(to right, #f8fafc, ${heat(0.01)}, ${heat(0.5)}, ${heat(1)})` }}
        />
        <span>100% of each cell allocated (numbers are percent)</span>
      </div>
    );
  }
  return (
    <ul aria-label="Legend" className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-600">
      {(Object.keys(kindLabel) as Kind[]).map((k) => (
        <li key={k} className="flex items-center gap-1.5">
          <span
            aria-hidden
            className={cx('inline-block h-3 w-3 rounded-sm', kindClass[k])}
            style={k === 'reserved' || k === 'retained' ? striped : undefined}
          />
          {kindLabel[k]}
        </li>
      ))}
      <li className="flex items-center gap-1.5">
        <span aria-hidden className={cx('inline-block h-3 w-3 rounded-sm', focusedClaimClass)} />
        Selected claim
      </li>
    </ul>
  );
}
