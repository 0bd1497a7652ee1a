import { useEffect, useRef, useState } from "react";

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
