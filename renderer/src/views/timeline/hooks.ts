/** Hooks the timeline's components share (the sequence diagram measures its width with useWidth too). */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";

/** A function that calls the latest `fn`: the same across renders, so that memoised rows keep it. */
export function useStable<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const ref = useRef(fn);
  useLayoutEffect(() => {
    ref.current = fn;
  });
  return useCallback((...args: A) => ref.current(...args), []);
}

/**
 * The width of an element's content (inside its padding: what its children can fill), kept up to date. A
 * panel's padding counted in drew the lanes, axis and charts 2 × 0.75rem past the panel's edge, clipped.
 */
export function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      const style = getComputedStyle(el);
      const padding = (parseFloat(style.paddingLeft) || 0) + (parseFloat(style.paddingRight) || 0);
      setWidth(Math.max(200, Math.floor(el.clientWidth - padding)));
    };
    update();
    const ro = new ResizeObserver(update);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width] as const;
}
