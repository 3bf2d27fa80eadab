'use client';
import { useState } from 'react';
import { useDebounced } from '@/components/ui/hooks';
import { Input } from '@/components/ui/primitives';

/** The text typed into a SearchBox (`text`) and its settled value (`settled`, debounced), which the list query uses. */
export interface SearchText {
  text: string;
  settled: string;
  setText: (text: string) => void;
}

/** State for a SearchBox: the typed text, and the text once typing has paused for `ms`. */
export function useSearchText(ms = 300): SearchText {
  const [text, setText] = useState('');
  const settled = useDebounced(text, ms);
  return { text, settled, setText };
}

/**
 * A list's labelled search input (`type="search"`, named by `label` for assistive technology and
 * tests). It shows `search.text`; the list queries with `search.settled`, so the server is asked
 * once typing pauses, not per keystroke. `onChange` runs on every edit (back to the first page,
 * clear a selection).
 */
export function SearchBox({
  label,
  placeholder,
  search,
  onChange,
  className,
  spellCheck,
}: {
  label: string;
  placeholder?: string;
  search: SearchText;
  onChange?: (text: string) => void;
  /** The wrapper's width, e.g. `w-56`. */
  className?: string;
  spellCheck?: boolean;
}) {
  return (
    <div className={className}>
      <Input
        type="search"
        aria-label={label}
        placeholder={placeholder}
        value={search.text}
        spellCheck={spellCheck}
        onChange={(e) => {
          search.setText(e.target.value);
          onChange?.(e.target.value);
        }}
      />
    </div>
  );
}
