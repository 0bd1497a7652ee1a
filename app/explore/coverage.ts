/**
 * What one run exercised (docs/explore.md "Coverage"), read from
 * its trace's events generically — the delivery machine's transitions matched
 * to its graph, the rule and gap IDs the events cite, the outcomes, the
 * answers and their classes — as a set of keys. A run whose keys add to what
 * the search has seen joins the corpus; the keys' union is the coverage.
 *
 * Nothing here counts transitions or rules by hand: the graph comes from the
 * machine (`deliveryMachineGraph`), the citations from the events
 * (`forEachRuleCited`, `forEachGapCited`), so a change in what the engine emits changes
 * the coverage, not this file.
 */
import { deliveryMachineGraph, transitionsMatching, type MachineGraph } from "../sender/machineGraph.ts";
import { forEachGapCited, forEachRuleCited } from "../trace/ruleEvidence.ts";
import { dataOf } from "../trace/eventReader.ts";
import type { RecordedEvent } from "../trace/schema.ts";

let graph: MachineGraph | undefined;

/** The delivery machine's graph, built once. */
export function machineGraph(): MachineGraph {
  graph ??= deliveryMachineGraph();
  return graph;
}

/** The graph's transitions, as coverage keys (`transition:<id>`), in the graph's order. */
export function transitionKeys(): string[] {
  return machineGraph().transitions.map((t) => `transition:${t.id}`);
}

/** A field's value as a key's word: a string, number or boolean as written, anything else none. */
function word(value: unknown): string | undefined {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : undefined;
}

/** `https://…/rate_limited` → `rate_limited`. */
function identifier(type: unknown): string {
  const text = word(type);
  return text === undefined ? "-" : text.slice(text.lastIndexOf("/") + 1);
}

/** The checks' verdicts cite rules whether or not the run exercised them (ruleEvidence.ts): they are no coverage. */
const VERDICTS = new Set(["invariant.checked", "expectation.checked"]);

/** For each event name, the data fields whose values tell its behaviours apart. */
const DISTINGUISHING: Readonly<Record<string, readonly string[]>> = {
  "recipient.outcome": ["outcome"],
  "smtp.handoff": ["reason", "accepted"],
  "attempt.ended": ["status", "failure", "class", "fallbackEligible"],
  "attempt.judged": ["stage", "class", "fallbackEligible"],
  "recipient.result": ["status"],
  "dns.answer": ["type", "kind"],
  "discovery.resolved": ["outcome", "gap"],
  "timer.set": ["decidedBy", "reason"],
  "receiver.response": ["status"],
  "dsn.sent": ["reason"],
  "pin.removed": ["reason"],
  "http.failure": ["kind"],
  "delivery.created": ["gap"],
};

/**
 * Keys made once per distinct run of values, looked up value by value (a trie of `Map`s): a run's events repeat the
 * same few hundred combinations, and building each key's text to look it up was most of what coverage allocated
 * (decision 0205). Cleared when it grows past {@link MAX_NODES}: a machine has few, a trace edited by hand could
 * make many.
 */
interface KeyNode<T> {
  readonly next: Map<unknown, KeyNode<T>>;
  made?: T;
}
const MAX_NODES = 10_000;
let nodes = 0;
const newNode = <T>(): KeyNode<T> => ({ next: new Map() });
function child<T>(node: KeyNode<T>, value: unknown): KeyNode<T> {
  let next = node.next.get(value);
  if (next === undefined) {
    next = newNode<T>();
    node.next.set(value, next);
    nodes++;
  }
  return next;
}
let transitionTrie = newNode<readonly string[]>();
let distinguishingTrie = newNode<string>();
function trimTries(): void {
  if (nodes < MAX_NODES) return;
  transitionTrie = newNode();
  distinguishingTrie = newNode();
  nodes = 0;
}

/** A recorded transition's keys (`transition:<id>` of each graph transition it matches), by its from, to, event and name. */
function transitionKeysOf(from: string, to: string, event: string, transition: string | undefined): readonly string[] {
  const node = child(child(child(child(transitionTrie, from), to), event), transition);
  node.made ??= transitionsMatching(machineGraph(), {
    from,
    to,
    event,
    ...(transition !== undefined && { transition }),
  }).map((t) => `transition:${t.id}`);
  return node.made;
}

/** A field's value as a trie step: what {@link word} reads it as, one step for every value it reads as none. */
const NO_WORD = Symbol("no word");
const step = (value: unknown): unknown =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : NO_WORD;

/** `<name>:<word of each field>[:<problem identifier>]`, made once per distinct values. */
function distinguishingKey(name: string, fields: readonly string[], d: Readonly<Record<string, unknown>>): string {
  let node = child(distinguishingTrie, name);
  for (let i = 0; i < fields.length; i++) node = child(node, step(d[fields[i] as string]));
  const problem = d["problem"];
  node = child(node, problem === undefined ? undefined : step(problem));
  node.made ??= `${name}:${fields.map((f) => word(d[f]) ?? "-").join(":")}${problem !== undefined ? `:${identifier(problem)}` : ""}`;
  return node.made;
}

/** `prefix` + `id`, made once per id: a run cites the same few rules and gaps hundreds of times. */
function keyOf(made: Map<string, string>, prefix: string, id: string): string {
  let key = made.get(id);
  if (key === undefined) {
    key = prefix + id;
    if (made.size < 10_000) made.set(id, key);
  }
  return key;
}
const ruleKeys = new Map<string, string>();
const NO_DATA: Readonly<Record<string, unknown>> = Object.freeze({});
const gapKeys = new Map<string, string>();
const rowKeys = new Map<string, string>();

/** The keys of one run: everything it exercised that the search tells apart. */
export function coverageKeys(events: readonly RecordedEvent[], paths = machinePaths(events)): Set<string> {
  trimTries();
  const keys = new Set<string>();
  const names = new Set<string>();
  const addRule = (id: string): void => void keys.add(keyOf(ruleKeys, "rule:", id));
  const addGap = (id: string): void => void keys.add(keyOf(gapKeys, "gap:", id));
  for (const e of events) {
    if (VERDICTS.has(e.name)) continue;
    if (!names.has(e.name)) {
      names.add(e.name);
      keys.add(`event:${e.name}`);
    }
    const d = e.data ?? NO_DATA;
    forEachRuleCited(d, addRule);
    forEachGapCited(d, addGap);
    const fields = DISTINGUISHING[e.name];
    if (fields !== undefined) keys.add(distinguishingKey(e.name, fields, d));
    const transition = dataOf(e, "machine.transition");
    if (transition !== undefined) {
      const { from = "", to = "", event = "" } = transition;
      for (const key of transitionKeysOf(from, to, event, transition.transition)) keys.add(key);
      if (transition.row !== undefined) keys.add(keyOf(rowKeys, "row:", String(transition.row)));
    }
  }
  for (const path of paths) keys.add(`path:${path}`);
  return keys;
}

/**
 * Each delivery actor's path through the machine, in words: its transitions'
 * names in order, in attempts (an attempt ends with the retry that follows
 * it). The attempts that were retried are written once each, in the order
 * they first came, inside `( … )+` when there were several
 * (`(discoveryEnded retryWithinFallbackWindow)+ | discoveryEnded fallBackToSmtpAfterWindow handedOver`
 * for an actor retried sixty times, then handed to SMTP); the last attempt
 * follows. Two runs that take the same path have the same words, whatever
 * their times and counts.
 */
export function machinePaths(events: readonly RecordedEvent[]): Set<string> {
  const steps = new Map<string, string[]>();
  for (const e of events) {
    const d = dataOf(e, "machine.transition");
    const actor = d?.deliveryActor;
    if (d === undefined || actor === undefined) continue;
    const name = d.transition ?? `${d.from ?? "?"}->${d.to ?? "?"}`;
    const list = steps.get(actor) ?? [];
    list.push(name);
    steps.set(actor, list);
  }
  const paths = new Set<string>();
  for (const list of steps.values()) paths.add(pathWords(list));
  return paths;
}

const RETRIES = new Set(["retrySameDelivery", "retryDeferredAsNewDelivery"]);

/** A list of transition names as a path (see {@link machinePaths}). */
export function pathWords(names: readonly string[]): string {
  const attempts: string[][] = [[]];
  for (const name of names) {
    (attempts.at(-1) as string[]).push(name);
    if (RETRIES.has(name)) attempts.push([]);
  }
  const last = attempts.pop() as string[];
  const retried = [...new Set(attempts.map((a) => a.join(" ")))];
  const loop =
    attempts.length === 0 ? [] : [attempts.length === 1 ? (retried[0] as string) : `(${retried.join(" | ")})+`];
  return [...loop, ...(last.length > 0 ? [last.join(" ")] : [])].join(" | ");
}
