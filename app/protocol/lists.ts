/**
 * `Math.max`, `Math.min` and `push` over lists of any length. A list spread
 * into a call (`Math.max(...xs)`, `out.push(...xs)`) passes one argument per
 * item on the stack, and past some 100,000 items the engine throws "Maximum
 * call stack size exceeded" (as `mailscope run` of 10,000 messages once did).
 * These loop instead; ESLint forbids the spreads (eslint.config.js).
 */

/** The largest of `values`, and at least `floor` (`-Infinity` by default, as `Math.max()` of nothing). */
export function maxOf(values: Iterable<number>, floor = -Infinity): number {
  let max = floor;
  for (const value of values) if (value > max) max = value;
  return max;
}

/** The smallest of `values`, and at most `ceiling` (`Infinity` by default, as `Math.min()` of nothing). */
export function minOf(values: Iterable<number>, ceiling = Infinity): number {
  let min = ceiling;
  for (const value of values) if (value < min) min = value;
  return min;
}

/** Appends every item of `items` to `target`, in order; returns `target`. */
export function pushAll<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item);
  return target;
}
