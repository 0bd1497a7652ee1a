import { startTransition, useEffect, useRef, useState } from "react";

/**
 * `value`, but while `throttle` holds, a new value at most every `ms` of wall
 * time: the views that draw the whole run follow a playing run a few times a
 * second rather than at every batch. Without `throttle`, `value` right after
 * the commit that brought it. Either way the new value is drawn in a
 * transition, after the log, outcomes and clock of the same moment are on
 * screen: React may interrupt it for the next batch, and a run's last
 * outcome is not held back by the timeline, sequence and statechart being
 * drawn.
 */
export function useThrottled<T>(value: T, throttle: boolean, ms: number): T {
  const [shown, setShown] = useState(value);
  const since = useRef(0);
  useEffect(() => {
    if (shown === value) return;
    const show = (): void => {
      since.current = performance.now();
      startTransition(() => setShown(value));
    };
    if (!throttle) return show();
    const id = setTimeout(show, Math.max(0, since.current + ms - performance.now()));
    return () => clearTimeout(id);
  }, [throttle, shown, value, ms]);
  return shown;
}
