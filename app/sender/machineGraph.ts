/**
 * The delivery machine's definition as plain data, for drawing it (the app's
 * statechart view) and for matching the trace's machine.transition events to
 * the arrows they follow.
 *
 * Read from the machine's state nodes, not from XState's `toJSON()`: that
 * leaves out the eventless (`always`) transitions, and `judging` is nothing
 * but those (the table's conditions, in the order they take precedence).
 * So the graph walks `machine.root`, each node's `transitions` (events,
 * `onDone` / `onError` of its invoked actor, `after` delays) and `always`.
 *
 * A state's id is its dotted path from the root without the machine's id
 * (`attemptingOverService.posting`), as the trace names states.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from "xstate";
import type { TransitionMeta } from "./deliveryContext.ts";
import { deliveryMachine } from "./deliveryMachine.ts";
import { pushAll } from "../protocol/lists.ts";

/** A JSON value: what the graph holds, so it survives `structuredClone`, `postMessage` and `JSON.stringify`. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** One state node of the machine (the root aside). */
export interface GraphState {
  /** The dotted path from the root, without the machine's id: `attemptingOverService.posting`. */
  readonly id: string;
  /** The last segment of the path: `posting`. */
  readonly key: string;
  /** The parent's id; absent for a child of the root. */
  readonly parent?: string;
  /** 1 for a child of the root. */
  readonly depth: number;
  readonly type: "atomic" | "compound" | "parallel" | "final" | "history";
  readonly final: boolean;
  /** The initial child's id, for a compound state. */
  readonly initial?: string;
  /** The children's ids, in document order. */
  readonly children: readonly string[];
  readonly tags: readonly string[];
  /** The entry actions, by name (the `after` timers XState adds are left out). */
  readonly entry: readonly string[];
  readonly exit: readonly string[];
  /** The actors invoked while in the state, by their logic's name (`discover`). */
  readonly invoke: readonly string[];
  readonly description?: string;
  readonly meta?: JsonValue;
}

/** What makes a transition fire. */
export type GraphTrigger =
  /** Eventless: taken as soon as its guard holds (`judging`). */
  | "always"
  /** A delay after entering the source (`retryScheduled`). */
  | "after"
  /** The source's invoked actor finished (its `onDone`). */
  | "done"
  /** The source's invoked actor failed (its `onError`). */
  | "error"
  /** A compound source reached a final child (its `onDone`). */
  | "state-done"
  /** An invoked actor's snapshot (`onSnapshot`). */
  | "snapshot"
  /** An event sent to the actor. */
  | "event";

/** One transition of the machine. */
export interface GraphTransition<TMeta extends JsonValue = JsonValue> {
  /** Unique in the graph: `<source>#<n>`, n counting the source's transitions in the graph's order. */
  readonly id: string;
  /** The id of the state that defines the transition ("" for the root). */
  readonly source: string;
  /** The target states' ids; empty for a targetless transition (actions only). */
  readonly targets: readonly string[];
  readonly trigger: GraphTrigger;
  /** The XState event type it answers; absent for `always`, which runs after whatever event came. */
  readonly event?: string;
  /** A short label for drawing: `always`, `after retryDelay`, `done: discover`, `error: post`. */
  readonly label: string;
  /** For `after`: the delay, a name from the machine's `delays` or milliseconds. */
  readonly delay?: string | number;
  /** For `done` / `error` / `snapshot`: the invoked actor's logic (`discover`). */
  readonly actor?: string;
  /** The guard's name; absent when unguarded. */
  readonly guard?: string;
  /**
   * Among the source's transitions for the same event (or among its `always`
   * transitions), the place in which XState tries it: the first whose guard
   * holds is taken.
   */
  readonly order: number;
  readonly actions: readonly string[];
  readonly reenter: boolean;
  readonly description?: string;
  /** The transition's `meta` (for the delivery machine: name, table row, rules, gaps). */
  readonly meta?: TMeta;
}

/** A machine's states and transitions, as plain data. */
export interface MachineGraph<TMeta extends JsonValue = JsonValue> {
  /** The machine's id (`delivery`). */
  readonly machine: string;
  /** The root's initial child. */
  readonly initial: string;
  /** Every state node but the root, in document order (a parent before its children). */
  readonly states: readonly GraphState[];
  /** Every transition, by source in document order; per source, in the order XState holds them, `always` last. */
  readonly transitions: readonly GraphTransition<TMeta>[];
}

/** A {@link TransitionMeta} as plain data. */
export type DeliveryTransitionMeta = TransitionMeta & { readonly [key: string]: JsonValue };

/**
 * The delivery machine ({@link deliveryMachine}) as data: its states and
 * every transition with its `meta` (name, row of SPEC.md's table, rules,
 * gaps), read from the module-level definition (its ports come with each
 * actor's input, so none is needed to read it).
 */
export function deliveryMachineGraph(): MachineGraph<DeliveryTransitionMeta> {
  return machineGraph(deliveryMachine) as MachineGraph<DeliveryTransitionMeta>;
}

/**
 * Any XState machine's states and transitions as plain data (see
 * {@link MachineGraph}).
 *
 * @throws Error when a state's or transition's `meta` or `description` is not plain JSON data.
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const states: GraphState[] = [];
  const transitions: GraphTransition[] = [];
  const idOf = (node: AnyStateNode): string => node.path.join(".");

  const visit = (node: AnyStateNode): void => {
    if (node.path.length > 0) states.push(stateOf(node, idOf));
    pushAll(transitions, transitionsOf(node, idOf));
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  const initial = machine.root.initial?.target[0];
  return {
    machine: machine.id,
    initial: initial === undefined ? "" : idOf(initial),
    states,
    transitions,
  };
}

function stateOf(node: AnyStateNode, idOf: (node: AnyStateNode) => string): GraphState {
  const id = idOf(node);
  const parent = node.parent !== undefined && node.parent.path.length > 0 ? idOf(node.parent) : undefined;
  const initial = node.type === "compound" ? node.initial?.target[0] : undefined;
  const config = node.config as { entry?: unknown; exit?: unknown };
  return {
    id,
    key: node.key,
    ...(parent !== undefined && { parent }),
    depth: node.path.length,
    type: node.type,
    final: node.type === "final",
    ...(initial !== undefined && { initial: idOf(initial) }),
    children: (Object.values(node.states) as AnyStateNode[]).map(idOf),
    tags: [...node.tags],
    // From the config: XState adds the `after` timers to the node's own entry and exit lists.
    entry: toList(config.entry).map(actionName),
    exit: toList(config.exit).map(actionName),
    invoke: node.invoke.map((i) => (typeof i.src === "string" ? actorName(i.src) : "(inline)")),
    ...(node.description !== undefined && { description: plain(node.description, `${id}.description`) as string }),
    ...(node.meta !== undefined && { meta: plain(node.meta, `${id}.meta`) }),
  };
}

function transitionsOf(node: AnyStateNode, idOf: (node: AnyStateNode) => string): GraphTransition[] {
  const source = idOf(node);
  const actorsByEvent = new Map<string, string>();
  for (const invoke of node.invoke) {
    const actor = typeof invoke.src === "string" ? actorName(invoke.src) : "(inline)";
    for (const prefix of ["xstate.done.actor.", "xstate.error.actor.", "xstate.snapshot."])
      actorsByEvent.set(`${prefix}${invoke.id}`, actor);
  }
  const out: GraphTransition[] = [];
  const add = (t: AnyTransitionDefinition, order: number, always: boolean): void => {
    const event = always ? undefined : String(t.eventType);
    const delay = (t as { delay?: unknown }).delay;
    const trigger: GraphTrigger = always
      ? "always"
      : delay !== undefined
        ? "after"
        : event?.startsWith("xstate.done.actor.") === true
          ? "done"
          : event?.startsWith("xstate.error.actor.") === true
            ? "error"
            : event?.startsWith("xstate.snapshot.") === true
              ? "snapshot"
              : event === `xstate.done.state.${node.id}`
                ? "state-done"
                : "event";
    const actor = event === undefined ? undefined : actorsByEvent.get(event);
    const delayValue = typeof delay === "string" || typeof delay === "number" ? delay : "(expression)";
    const label =
      trigger === "always"
        ? "always"
        : trigger === "after"
          ? `after ${delayValue}`
          : actor !== undefined
            ? `${trigger}: ${actor}`
            : trigger === "state-done"
              ? "done"
              : (event ?? "");
    const where = `${source || "(root)"}#${out.length}`;
    const guard = guardName(t.guard);
    out.push({
      id: `${source}#${out.length}`,
      source,
      targets: (t.target ?? []).map((target: AnyStateNode) => idOf(target)),
      trigger,
      ...(event !== undefined && { event }),
      label,
      ...(trigger === "after" && { delay: delayValue }),
      ...(actor !== undefined && { actor }),
      ...(guard !== undefined && { guard }),
      order,
      actions: t.actions.map(actionName),
      reenter: t.reenter,
      ...(t.description !== undefined && { description: plain(t.description, `${where}.description`) as string }),
      ...(t.meta !== undefined && { meta: plain(t.meta, `${where}.meta`) }),
    });
  };
  for (const list of node.transitions.values()) list.forEach((t, i) => add(t, i, false));
  (node.always ?? []).forEach((t, i) => add(t, i, true));
  return out;
}

/** `xstate.invoke.0.delivery.x` is XState's name for inline logic. */
function actorName(src: string): string {
  return src.startsWith("xstate.invoke.") ? "(inline)" : src;
}

function toList(value: unknown): unknown[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** A guard's or an action's name: a string, `{ type }`, or a function's own `type` (XState's `assign`, `and`…) or name. */
function named(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "object" || typeof value === "function") {
    const type = (value as { type?: unknown }).type;
    if (typeof type === "string") return type;
  }
  if (typeof value === "function" && value.name !== "") return value.name;
  return "(inline)";
}

function guardName(guard: unknown): string | undefined {
  return named(guard);
}

function actionName(action: unknown): string {
  return named(action) ?? "(inline)";
}

/**
 * A copy of `value` that is plain JSON data.
 *
 * @throws Error naming `where` when it is not (a function, a class instance, undefined in a list…).
 */
function plain(value: unknown, where: string): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
  } else if (Array.isArray(value)) {
    return value.map((v, i) => plain(v, `${where}[${i}]`));
  } else if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) out[k] = plain(v, `${where}.${k}`);
    }
    return out;
  }
  throw new Error(`${where} is not plain JSON data (${typeof value})`);
}

/** What a trace's machine.transition event says of the step it records. */
export interface RecordedTransition {
  /** The state the transition left: its source, or a state inside it. */
  readonly from: string;
  /** Where it went: a target, or a state inside one (a leaf path); several joined by `,`. */
  readonly to: string;
  /** The event XState was handling (for an eventless transition, the event that led to it). */
  readonly event: string;
  /** The transition's `meta.name`, when the event names one. */
  readonly transition?: string;
}

/**
 * The graph's transitions that a recorded step may have followed: the source
 * is `from` or an ancestor of it, each state of `to` is a target or inside
 * one, the event is the transition's (any event, for `always`), and the
 * `meta.name` is the recorded one when the step names it. More than one
 * comes back only where guards alone tell them apart (`retryDelay`'s two).
 */
export function transitionsMatching<TMeta extends JsonValue>(
  graph: MachineGraph<TMeta>,
  recorded: RecordedTransition,
): GraphTransition<TMeta>[] {
  const within = (path: string, state: string): boolean =>
    state === "" || path === state || path.startsWith(`${state}.`);
  const to = recorded.to.split(",").filter((p) => p !== "");
  return graph.transitions.filter((t) => {
    if (!within(recorded.from, t.source)) return false;
    if (t.trigger !== "always" && t.event !== recorded.event) return false;
    if (to.length !== t.targets.length || !to.every((p, i) => within(p, t.targets[i] ?? "\0"))) return false;
    if (recorded.transition === undefined) return true;
    const name = isRecord(t.meta) ? t.meta["name"] : undefined;
    return name === undefined || name === recorded.transition;
  });
}

function isRecord(value: unknown): value is Readonly<Record<string, JsonValue>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
