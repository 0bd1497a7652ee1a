/**
 * The statechart of one delivery actor, read off the trace: the state it is
 * in at any virtual time, the transition it just took, how often each
 * transition of the machine fired and which never did, and the history of
 * its transitions with the context that decided each guard.
 *
 * Everything comes from trace events (`machine.started`,
 * `machine.transition`, `attempt.judged`, `timer.set`, `recipient.outcome`),
 * matched to the machine's graph (`deliveryMachineGraph()`), so a live run
 * and an imported trace give the same answers. Pure; the statechart view
 * only draws what this computes.
 */
import {
  deliveryMachineGraph,
  transitionsMatching,
  type DeliveryTransitionMeta,
  type GraphTransition,
  type MachineGraph,
} from "../../../app/sender/machineGraph.ts";
import { judgedAnswer, smtpRuling } from "../../../app/trace/explain.ts";
import { readEvent } from "../../../app/trace/eventReader.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { actorEvents, actorsOf, runIndexOf } from "../../../app/trace/runIndex.ts";
import { formatOffset } from "./time.ts";

export type DeliveryGraph = MachineGraph<DeliveryTransitionMeta>;
export type DeliveryGraphTransition = GraphTransition<DeliveryTransitionMeta>;

let cachedGraph: DeliveryGraph | undefined;

/** The delivery machine's graph, built once. */
export function deliveryGraph(): DeliveryGraph {
  cachedGraph ??= deliveryMachineGraph();
  return cachedGraph;
}

/** What the actor knew when a transition was taken: what its guards read. */
export interface GuardContext {
  /**
   * The attempt the transition belongs to (from 1): the one under way, or the one a retry starts, as the
   * machine.transition event numbers it (attempt.started's numbering); the attempt last judged for a trace without it.
   */
  readonly attempt?: number;
  /** When that attempt started; the fallback window compares this time (STATE-2, STATE-3). */
  readonly attemptAtMs?: number;
  /** When the first attempt started: the fallback window's start. */
  readonly firstAttemptAtMs?: number;
  readonly fallbackWindowEndMs?: number;
  readonly giveUpAtMs?: number;
  /** Whether the attempt last judged ended in a fallback-eligible failure. */
  readonly fallbackEligible?: boolean;
  /** Whether every attempt so far was fallback-eligible. */
  readonly allAttemptsFallbackEligible?: boolean;
  /** How the attempt last judged ended (`temporary`, `results` …). */
  readonly attemptClass?: string;
  /** The attempt's last problem: its identifier (`rate_limited`) and HTTP status. */
  readonly problem?: string;
  readonly status?: number;
  /** How the attempt last judged ended, in words (`429 rate_limited`, `no answer (connection refused)`). */
  readonly answer?: string;
  /** The attempt whose answer ruled SMTP out for the message (ERR-23), and that answer. */
  readonly smtpRuledOut?: { readonly attempt: number; readonly answer: string };
  /** Recipients of the actor with no final outcome yet. */
  readonly pending: readonly string[];
  /** For a retry: its number and when the timer was set to fire. */
  readonly retry?: number;
  readonly retryAtMs?: number;
  /** The events these come from: the `attempt.judged` last read, the `timer.set` last read. */
  readonly judgedSeq?: number;
  readonly timerSeq?: number;
}

/** One transition the actor took. */
export interface HistoryRow {
  /** Its place in the actor's history, from 0. */
  readonly index: number;
  /** The `machine.transition` event. */
  readonly seq: number;
  readonly timeMs: number;
  /** `+0:02:00`. */
  readonly at: string;
  /** Leaf state paths. */
  readonly from: string;
  readonly to: string;
  /** The graph's transition it followed (`attemptingOverService.judging#7`); absent if none matches. */
  readonly transitionId?: string;
  /** The transition's name (`retryNotFallbackEligible`). */
  readonly name: string;
  /** The row of SPEC.md's "States and transitions" table. */
  readonly row?: number;
  readonly rules: readonly string[];
  readonly gaps: readonly string[];
  /** The XState event being handled. */
  readonly event: string;
  /** The guard the transition passed, if any. */
  readonly guard?: string;
  readonly context: GuardContext;
  /** The recipients still pending once the transition was taken (its actions may have given outcomes). */
  readonly pendingAfter: readonly string[];
  /** Why the guard chose this transition, in words: `attempt at +2:03:00 ≥ window end +2:00:00, every attempt eligible`. */
  readonly why: string;
}

/** The statechart of one actor over the events given (the whole trace, or as far as the playhead). */
export interface ActorChart {
  readonly actor: string;
  /** When the actor started (its `machine.started`), and its initial leaf state. */
  readonly startedAtMs?: number;
  readonly startedSeq?: number;
  readonly initial: string;
  readonly history: readonly HistoryRow[];
}

/** The delivery actors of a trace (`m1@a.example→b.example`), in the order they started. */
export function deliveryActors(events: readonly RecordedEvent[]): string[] {
  return actorsOf(runIndexOf(events));
}

/** `https://…/problems/rate_limited` → `rate_limited`. */
function problemIdentifier(type: string): string {
  const slash = type.lastIndexOf("/");
  return slash < 0 ? type : type.slice(slash + 1);
}

function metaOf(t: DeliveryGraphTransition | undefined): Partial<DeliveryTransitionMeta> {
  return t?.meta ?? {};
}

/**
 * The history of `actor` in `events`: each `machine.transition` matched to
 * the graph, with the context its guard read (the last `attempt.judged`, the
 * first attempt's fallback window and give-up time, the last `timer.set`, the
 * recipients still pending).
 */
export function actorChart(
  events: readonly RecordedEvent[],
  actor: string,
  startMs: number,
  graph: DeliveryGraph = deliveryGraph(),
): ActorChart {
  // Only the actor's own events and its message's outcomes, which the run's index finds (the same chart).
  return actorChartOfEvents(actorEvents(runIndexOf(events), actor), actor, startMs, graph);
}

/** {@link actorChart} read off `events` as they are given: every event of a run, or those of the actor. */
export function actorChartOfEvents(
  events: readonly RecordedEvent[],
  actor: string,
  startMs: number,
  graph: DeliveryGraph = deliveryGraph(),
): ActorChart {
  let startedAtMs: number | undefined;
  let startedSeq: number | undefined;
  let initial = graph.initial;
  let messageId: string | undefined;
  let recipients: string[] = [];
  const done = new Set<string>();
  /** Outcomes since the actor's last transition: the actions of the next one emit them before it is traced. */
  let fresh: string[] = [];
  let ctx: Omit<GuardContext, "pending"> = {};
  const history: HistoryRow[] = [];
  /** The discovery events of the attempt under way (what an attempt that made no POST ran into). */
  let discovery: RecordedEvent[] = [];
  /** Attempts started so far, for a trace whose transitions do not number them. */
  let started = 0;
  for (const raw of events) {
    // Only the actor's own events and the outcomes are read (checked against the catalogue).
    if (raw.name !== "recipient.outcome" && raw.data?.["deliveryActor"] !== actor) continue;
    const e = readEvent(raw);
    if (e === undefined) continue;
    if (e.name === "recipient.outcome") {
      const r = e.data.recipient;
      if (messageId !== undefined && e.data.messageId === messageId && r !== undefined) fresh.push(r.toLowerCase());
      continue;
    }
    switch (e.name) {
      case "discovery.resolved":
      case "capabilities.invalid":
        discovery.push(raw);
        break;
      case "timer.fired":
        discovery = [];
        started += 1;
        break;
      case "machine.started":
        started = 1;
        startedAtMs = e.timeMs;
        startedSeq = e.seq;
        initial = e.data.state ?? graph.initial;
        messageId = e.data.messageId;
        recipients = e.data.recipients ?? [];
        break;
      case "attempt.judged": {
        const {
          problem,
          status,
          fallbackWindowEndMs: windowEnd,
          fallbackWindowStartMs: windowStart,
          giveUpAtMs: giveUp,
          attempt,
          startedAtMs: attemptAt,
          fallbackEligible,
          allAttemptsFallbackEligible: all,
          class: cls,
        } = e.data;
        const { problem: _p, status: _s, ...kept } = ctx;
        const answer = judgedAnswer(e.data, discovery);
        ctx = {
          ...kept,
          answer,
          ...(ctx.smtpRuledOut === undefined && attempt !== undefined && ruling(raw, attempt, attemptAt, discovery)),
          ...(attempt !== undefined && { attempt }),
          ...(attemptAt !== undefined && { attemptAtMs: attemptAt }),
          ...(windowStart !== undefined && { firstAttemptAtMs: windowStart }),
          ...(windowEnd !== undefined && { fallbackWindowEndMs: windowEnd }),
          ...(giveUp !== undefined && { giveUpAtMs: giveUp }),
          ...(typeof fallbackEligible === "boolean" && { fallbackEligible }),
          ...(typeof all === "boolean" && { allAttemptsFallbackEligible: all }),
          ...(cls !== undefined && { attemptClass: cls }),
          ...(problem !== undefined && { problem: problemIdentifier(problem) }),
          ...(status !== undefined && { status }),
          judgedSeq: e.seq,
        };
        break;
      }
      case "timer.set": {
        const { retry, atMs: at, giveUpAtMs: giveUp } = e.data;
        ctx = {
          ...ctx,
          ...(retry !== undefined && { retry }),
          ...(at !== undefined && { retryAtMs: at }),
          ...(giveUp !== undefined && ctx.giveUpAtMs === undefined && { giveUpAtMs: giveUp }),
          timerSeq: e.seq,
        };
        break;
      }
      case "machine.transition": {
        const d = e.data;
        const from = d.from ?? "";
        const to = d.to ?? "";
        const event = d.event ?? "";
        const recorded = d.transition;
        const matches = transitionsMatching(graph, {
          from,
          to,
          event,
          ...(recorded !== undefined && { transition: recorded }),
        });
        const t = matches[0];
        const meta = metaOf(t);
        // Pending as the guard saw it: before this transition's own actions and entry gave outcomes.
        const pending = recipients.filter((r) => !done.has(r.toLowerCase()));
        for (const r of fresh) done.add(r);
        fresh = [];
        // One numbering: the attempt the event names (for postToEndpoint, the attempt under way, not the last judged).
        const attempt = d.attempt ?? (started > 0 ? started : ctx.attempt);
        const context: GuardContext = { ...ctx, ...(attempt !== undefined && { attempt }), pending };
        const name = recorded ?? meta.name ?? (t?.label || "(unnamed)");
        const row = d.row ?? meta.row;
        const rules = d.rules !== undefined && d.rules.length > 0 ? [...d.rules] : [...(meta.rules ?? [])];
        history.push({
          index: history.length,
          seq: e.seq,
          timeMs: e.timeMs,
          at: formatOffset(e.timeMs, startMs),
          from,
          to,
          ...(t !== undefined && { transitionId: t.id }),
          name,
          ...(row !== undefined && { row }),
          rules,
          gaps: [...(d.gaps ?? [])],
          event,
          ...(t?.guard !== undefined && { guard: t.guard }),
          context,
          pendingAfter: recipients.filter((r) => !done.has(r.toLowerCase())),
          why: explain(name, context, startMs, e.timeMs),
        });
        break;
      }
    }
  }
  return {
    actor,
    ...(startedAtMs !== undefined && { startedAtMs }),
    ...(startedSeq !== undefined && { startedSeq }),
    initial,
    history,
  };
}

/** `429 rate_limited`, `rate_limited`, or undefined. */
/** `{ smtpRuledOut }` when the attempt judged by `e` ruled SMTP out ({@link smtpRuling}), else nothing. */
function ruling(
  e: RecordedEvent,
  attempt: number,
  attemptAt: number | undefined,
  discovery: readonly RecordedEvent[],
): { smtpRuledOut: { attempt: number; answer: string } } | undefined {
  const r = smtpRuling(e, attempt, attemptAt ?? e.timeMs, [], discovery);
  return r === undefined ? undefined : { smtpRuledOut: { attempt, answer: r.answer } };
}

function problemText(c: GuardContext): string | undefined {
  if (c.problem === undefined) return c.status === undefined ? undefined : String(c.status);
  return c.status === undefined ? c.problem : `${c.status} ${c.problem}`;
}

/**
 * ` (2:03:00 after the first attempt)` when the first attempt did not start with the run (a message
 * submitted later): the window counts from the first attempt, the offsets from the run's start.
 */
function since(c: GuardContext, startMs: number): string {
  if (c.attemptAtMs === undefined || c.firstAttemptAtMs === undefined || c.firstAttemptAtMs === startMs) return "";
  return ` (${formatOffset(c.attemptAtMs, c.firstAttemptAtMs).slice(1)} after the first attempt)`;
}

/** Why the transition's guard held, from the context it read, in the table's terms. */
export function explain(name: string, c: GuardContext, startMs: number, atMs: number): string {
  const at = (ms: number | undefined) => (ms === undefined ? "?" : formatOffset(ms, startMs));
  const every = c.allAttemptsFallbackEligible === false ? "not every attempt eligible" : "every attempt eligible";
  const problem = problemText(c);
  const attempt = c.attempt === undefined ? "attempt" : `attempt ${c.attempt}`;
  const pending = c.pending.length === 0 ? "nothing pending" : `pending: ${c.pending.join(", ")}`;
  // The answer of the attempt just judged: every reason names the attempt and the answer that decided.
  const answered = c.answer ?? problem;
  const answer = answered === undefined ? "" : ` — ${answered}`;
  switch (name) {
    case "fallBackToSmtpAfterWindow":
      return `${attempt} at ${at(c.attemptAtMs)}${since(c, startMs)} ≥ window end ${at(c.fallbackWindowEndMs)}, ${every}${answer}`;
    case "retryWithinFallbackWindow":
      return `${attempt} at ${at(c.attemptAtMs)}${since(c, startMs)} < window end ${at(c.fallbackWindowEndMs)}, ${every}${answer}`;
    case "retryNotFallbackEligible":
      return `${attempt} not fallback-eligible (${c.answer ?? problem ?? "?"}), ${pending}`;
    case "retrySmtpRuledOut": {
      const by = c.smtpRuledOut;
      return `${attempt}: ${c.answer ?? problem ?? "?"}, fallback-eligible, but ${by === undefined ? "an earlier attempt" : `attempt ${by.attempt}'s ${by.answer}`} ruled SMTP out, ${pending}`;
    }
    case "retryDeferredRecipients":
      return `${attempt}: deferred${problem !== undefined ? ` (${problem})` : ""}, never SMTP: a new delivery at the next attempt, ${pending}`;
    case "giveUpAfterAttempt":
    case "giveUpWhileRetrying":
      return `${at(atMs)} ≥ give-up ${at(c.giveUpAtMs)} (5 days after the first attempt), after ${attempt}, ${pending}`;
    case "finishAllAccepted":
      return `${attempt}: every recipient accepted, nothing pending`;
    case "finishNothingPending":
      return `${attempt}: every recipient has a final outcome${answered !== undefined ? ` (last: ${answered})` : ""}`;
    case "handOffNoCommonVersion":
      return `${attempt}: no protocol version in common${answer}: SMTP`;
    case "deliverByPlainSmtp":
      return `${attempt}: no service record, ${every}${answer}: plain SMTP`;
    case "retryDeferredAsNewDelivery":
      return `${attempt} at ${at(c.retryAtMs)}: deferred recipients get a new delivery, ${pending}`;
    case "retrySameDelivery":
      return `${attempt} at ${at(c.retryAtMs)}, same delivery and key, ${pending}`;
    case "postToEndpoint":
      return `${attempt}: endpoint found`;
    case "discoveryEnded":
      return `${attempt}: discovery ended without an endpoint${answer}`;
    case "answersRead":
      return `${attempt}: answers read${answer}`;
    case "senderFault":
      return `${attempt}: the sender failed`;
    case "handedOver":
      return `handed to SMTP: ${pending}`;
    default:
      return pending;
  }
}

/** Where the actor is at a point of its history. */
export interface ChartAt {
  /** The leaf state path, or undefined before the actor started. */
  readonly state?: string;
  /** The transition just taken (the last one up to that point). */
  readonly last?: HistoryRow;
  /** How many times each graph transition fired up to that point. */
  readonly counts: ReadonlyMap<string, number>;
}

/** The index of the last history row at or before `timeMs` (-1 for none). */
export function rowAtTime(chart: ActorChart, timeMs: number): number {
  let lo = 0;
  let hi = chart.history.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((chart.history[mid]?.timeMs ?? Infinity) <= timeMs) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The actor after history row `index` (-1: before any transition). */
export function chartAtRow(chart: ActorChart, index: number): ChartAt {
  const counts = new Map<string, number>();
  const upTo = Math.min(index, chart.history.length - 1);
  for (let i = 0; i <= upTo; i++) {
    const id = chart.history[i]?.transitionId;
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const last = upTo >= 0 ? chart.history[upTo] : undefined;
  const state = last !== undefined ? last.to : chart.startedAtMs !== undefined ? chart.initial : undefined;
  return { ...(state !== undefined && { state }), ...(last !== undefined && { last }), counts };
}

/** The actor at virtual time `timeMs`: the state it is in, the transition just taken, the counts so far. */
export function chartAt(chart: ActorChart, timeMs: number): ChartAt {
  if (chart.startedAtMs === undefined || timeMs < chart.startedAtMs) return { counts: new Map() };
  return chartAtRow(chart, rowAtTime(chart, timeMs));
}

/** Every transition fired per graph transition over the whole history. */
export function fireCounts(chart: ActorChart): Map<string, number> {
  return new Map(chartAtRow(chart, chart.history.length - 1).counts);
}

/** The graph's transitions the actor never took (in the events given). */
export function neverTaken(chart: ActorChart, graph: DeliveryGraph = deliveryGraph()): string[] {
  const counts = fireCounts(chart);
  return graph.transitions.filter((t) => !counts.has(t.id)).map((t) => t.id);
}

/** The state's path and every ancestor's (`attemptingOverService.judging` → both), to highlight the active ones. */
export function activeStates(leaf: string | undefined): string[] {
  if (leaf === undefined) return [];
  const parts = leaf.split(".");
  return parts.map((_, i) => parts.slice(0, i + 1).join("."));
}
