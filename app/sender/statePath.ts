/**
 * State paths as the trace writes them: dotted, from the machine's root,
 * without the machine's id, down to the leaf (`attemptingOverService.posting`,
 * `retryScheduled`). machine.started and machine.transition use them, and so
 * does the delivery machine's graph, so that a trace event finds its state in
 * the drawing.
 */
import type { AnyStateMachine, StateValue } from "xstate";

/**
 * The leaf paths of a state value: one for each active leaf (one only, in a
 * machine without parallel states), in the value's order.
 */
export function statePaths(value: StateValue): string[] {
  if (typeof value === "string") return [value];
  return Object.entries(value).flatMap(([key, child]) =>
    child === undefined ? [key] : statePaths(child).map((path) => `${key}.${path}`),
  );
}

/** `parent.child` of the one-level values seen so far: every transition of a run names one, as the same string. */
const oneLevel = new Map<string, Map<string, string>>();

/**
 * A state value as one path: the leaf paths joined by `,` (one path when
 * nothing runs in parallel). A value one level deep (`{ parent: "child" }`,
 * the delivery machine's every state but its top-level ones) is joined once
 * per pair of names a machine has, not once per transition.
 */
export function statePath(value: StateValue): string {
  if (typeof value === "string") return value;
  const keys = Object.keys(value);
  const key = keys[0];
  const child = key === undefined ? undefined : value[key];
  if (keys.length !== 1 || key === undefined || typeof child !== "string") return statePaths(value).join(",");
  let byChild = oneLevel.get(key);
  if (byChild === undefined) oneLevel.set(key, (byChild = new Map()));
  let path = byChild.get(child);
  if (path === undefined) byChild.set(child, (path = `${key}.${child}`));
  return path;
}

/**
 * The path of the leaf a machine starts in, following each compound state's
 * `initial` down from the root (`attemptingOverService.discovering` for the
 * delivery machine); read from the definition, without starting anything.
 */
export function initialStatePath(machine: AnyStateMachine): string {
  let node = machine.root;
  for (;;) {
    const next = node.type === "compound" ? node.initial.target[0] : undefined;
    if (next === undefined) break;
    node = next;
  }
  return node.path.join(".");
}
