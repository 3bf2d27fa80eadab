'use client';
import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';

/** Width of the map in pixels, tracked so labels only show where they fit. */
export function useWidth<T extends HTMLElement>() {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(960);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth || 960);
    const observer = new ResizeObserver(([entry]) => setWidth(entry.contentRect.width || 960));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

/** Roving tab stop over a list of buttons: arrows move focus, the list is one stop in the tab order. */
export function useRoving(count: number, columns: number) {
  const [active, setActive] = useState(0);
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  useEffect(() => {
    if (active >= count) setActive(0);
  }, [active, count]);
  const onKeyDown = (e: KeyboardEvent) => {
    const step: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: columns, ArrowUp: -columns };
    let next: number | null = null;
    if (e.key in step) next = Math.min(count - 1, Math.max(0, active + step[e.key]));
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = count - 1;
    if (next === null) return;
    e.preventDefault();
    setActive(next);
    refs.current[next]?.focus();
  };
  return { active, setActive, refs, onKeyDown };
}
