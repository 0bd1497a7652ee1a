import { useCallback, useLayoutEffect, useRef } from "react";

/**
 * A function that calls the latest `fn`: the same function across renders, so that memoised views and rows
 * that take it as a prop keep it. The latest `fn` is taken in at layout time, before any effect or event of
 * the render that brought it can call it.
 */
export function useStable<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  const ref = useRef(fn);
  useLayoutEffect(() => {
    ref.current = fn;
  });
  return useCallback((...args: A) => ref.current(...args), []);
}
