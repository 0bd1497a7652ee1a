/**
 * The delivery timeline's data, from trace events alone (a live run and an
 * imported trace draw the same picture): one lane per delivery actor
 * (message → recipient domain, DSN deliveries as lanes of their own linked to
 * the message they report on), the marks on them (attempts coloured by how
 * they ended, SMTP hand-offs, bounces, DSNs, receiver-side events), retry
 * connectors, the fallback window band and the give-up line, fault bands on
 * the lanes of the hosts they hit, DNS changes; the time axis (linear or log)
 * with labels readable at any zoom; and what the view needs to stay fast on a
 * big trace — the marks in the visible window only, thinned to one per pixel
 * column, and counts per time bucket for the overview.
 */
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { maxOf, minOf, pushAll } from "../../../app/protocol/lists.ts";

/** How an attempt ended, as the timeline colours it. */
export type AttemptOutcome =
  | "accepted"
  | "rejected"
  | "deferred"
  | "temporary-eligible"
  | "temporary"
  | "permanent"
  | "no-service"
  | "no-common-version";

export const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = [
  "accepted",
  "rejected",
  "deferred",
  "temporary-eligible",
  "temporary",
  "permanent",
  "no-service",
  "no-common-version",
];

/** Words for the legend and the summaries. */
export const OUTCOME_TEXT: Readonly<Record<AttemptOutcome, string>> = {
  accepted: "accepted",
  rejected: "rejected",
  deferred: "deferred",
  "temporary-eligible": "temporary failure, fallback-eligible",
  temporary: "temporary, not fallback-eligible",
  permanent: "permanent failure",
  "no-service": "no service (SMTP)",
  "no-common-version": "no common version",
};

/** The colour of each outcome (marks, legend, overview bars, the exported image): the same in both themes. */
export const OUTCOME_COLOUR: Readonly<Record<string, string>> = {
  accepted: "#1f8a45",
  rejected: "#c0362c",
  deferred: "#2f7fd0",
  "temporary-eligible": "#e08a00",
  temporary: "#8a5cf6",
  permanent: "#7a1010",
  "no-service": "#6b7280",
  "no-common-version": "#0e7490",
};

/**
 * The overview's line of deliveries in flight, per theme: a pink that no outcome's colour is near (the
 * deferred bars' blue least of all), at 3:1 or more against the panel's surface in each theme (WCAG's
 * contrast for a graphic; timeline.test.ts computes both).
 */
export const IN_FLIGHT_COLOUR = { light: "#db2777", dark: "#f472b6" } as const;

export type MarkKind = "attempt" | "handoff" | "bounce" | "dsn" | "receiver" | "dns" | "ruled-out";

/** One thing drawn at one time on one lane (or, for a DNS change, across the lanes of its domain). */
export interface Mark {
  /** Unique in the timeline: `a:<lane>:<n>`, `h:<seq>` … */
  readonly id: string;
  readonly kind: MarkKind;
  /** The lane it sits on; undefined for a DNS change of a name no lane delivers to. */
  readonly lane: string | undefined;
  readonly timeMs: number;
  /** The seq of the event it is drawn from. */
  readonly seq: number;
  /** Attempts: the attempt's number, its outcome, its start (timeMs is when it started). */
  readonly attempt?: number;
  readonly outcome?: AttemptOutcome;
  readonly endMs?: number;
  /** Short text on or under the mark (`3`, `SMTP fallback`, `DSN`). */
  readonly label: string;
  /** The hover summary: attempt, time, answer, rule. */
  readonly summary: string;
  readonly rule?: string;
  /** The HTTP exchanges it made or answered (`x3`), for the inspector. */
  readonly exchangeIds: readonly string[];
}

/** The wait between two attempts: from the start of one to the start of the next. */
export interface RetryConnector {
  readonly lane: string;
  readonly retry: number;
  readonly fromMs: number;
  readonly toMs: number;
  readonly decidedBy: string;
  /** False when the give-up came first and the retry never happened. */
  readonly happened: boolean;
  readonly seq: number;
}

export interface Band {
  readonly lane: string;
  readonly fromMs: number;
  /** Undefined: never ends. */
  readonly untilMs: number | undefined;
  readonly label: string;
  readonly kind: "fallback-window" | "fault";
  /**
   * A fallback window the delivery ended inside (accepted, handed to SMTP,
   * bounced): the window's own end, later than `untilMs`, which is the
   * delivery's end.
   */
  readonly windowEndMs?: number;
}

/** The retry plan of one retry (`timer.set`), delays from the start of the attempt before it. */
export interface RetryPlan {
  readonly retry: number;
  /** The attempt it starts: retry + 1. */
  readonly attempt: number;
  readonly attemptStartedAtMs: number;
  readonly baseDelayMs: number;
  readonly jitteredDelayMs: number;
  readonly jitter: boolean;
  readonly lowerBoundDelayMs: number | undefined;
  /** `base-delay`, `jittered-delay`, `retry-after`, `attempt-end`. */
  readonly decidedBy: string;
  /** The delay actually waited, start to start. */
  readonly delayMs: number;
  readonly atMs: number;
  readonly happened: boolean;
  readonly seq: number;
}

export interface Lane {
  /** The delivery actor: `<messageId>→<domain>`. */
  readonly id: string;
  readonly messageId: string;
  readonly domain: string;
  readonly senderDomain: string;
  readonly recipients: readonly string[];
  readonly kind: "message" | "dsn";
  /** For a DSN's lane: the lane of the message it reports on. */
  readonly parent?: string;
  /** `m1 → b.example`, `DSN of m1 → a.example`. */
  readonly label: string;
  readonly startMs: number;
  /**
   * When the delivery (the delivery actor) ended — every recipient has its
   * outcome, or the machine reached finished, handedToSmtp or bounced —
   * else undefined (still going). A delivery with several recipients goes on
   * after its first recipient's outcome (the others retried).
   */
  readonly endMs: number | undefined;
  readonly fallbackWindowEndMs?: number;
  readonly giveUpAtMs?: number;
  readonly retries: readonly RetryPlan[];
  /** One sub-lane per recipient: its result at each attempt that answered it, and how it ended. */
  readonly recipientLanes: readonly RecipientLane[];
  /**
   * Where SMTP fallback was ruled out for the delivery, when it was and the delivery went on after it (a
   * retry): from then on the fallback window decides nothing (ERR-23, STATE-5).
   */
  readonly fallbackRuledOut?: FallbackRuledOut;
}

/**
 * The attempt whose answer ruled SMTP fallback out for a delivery (the first `attempt.judged` whose
 * `allAttemptsFallbackEligible` is false): a request-level 4xx such as 429 rate_limited, or per-recipient
 * results (deferred, rejected), which never fall back (ERR-23).
 */
export interface FallbackRuledOut {
  readonly attempt: number;
  /** When the attempt started, and when it was judged (its answer read). */
  readonly timeMs: number;
  readonly judgedAtMs: number;
  /** The `attempt.judged` event's seq: the evidence. */
  readonly seq: number;
  /** The answer that decided: `429 rate_limited`, `per-recipient results: bob@b.example deferred (mailbox_full)`. */
  readonly answer: string;
  /** ERR-23 for an authenticated answer (a 4xx problem, per-recipient results), else the attempt's own rule. */
  readonly rule: string | undefined;
  /** `SMTP ruled out at attempt 1: 429 rate_limited, ERR-23`. */
  readonly text: string;
}

/** One recipient's result in one attempt's answer (`recipient.result`). */
export interface RecipientResult {
  readonly attempt: number;
  /** When the attempt started (the result is drawn under the attempt's mark). */
  readonly timeMs: number;
  /** `accepted`, `rejected`, `deferred`. */
  readonly status: string;
  readonly problem: string | undefined;
  readonly rule: string | undefined;
  readonly seq: number;
}

/** A recipient of a delivery: its results, attempt by attempt, and its outcome (`recipient.outcome`). */
export interface RecipientLane {
  readonly recipient: string;
  readonly results: readonly RecipientResult[];
  readonly outcome:
    | { readonly outcome: string; readonly timeMs: number; readonly rule: string | undefined; readonly seq: number }
    | undefined;
}

export interface Timeline {
  readonly startMs: number;
  /** The last event's time. */
  readonly endMs: number;
  readonly lanes: readonly Lane[];
  /** All marks, by time. */
  readonly marks: readonly Mark[];
  readonly connectors: readonly RetryConnector[];
  readonly bands: readonly Band[];
}

type Data = Readonly<Record<string, unknown>>;
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** `m1@a.example` → `m1`, when the label map has it. */
function shortId(messageId: string, labels: ReadonlyMap<string, string>): string {
  return labels.get(messageId) ?? messageId;
}

function domainOf(address: string): string {
  const at = address.lastIndexOf("@");
  return (at < 0 ? address : address.slice(at + 1)).toLowerCase();
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** `+h:mm:ss`, as the CLI prints an offset, with the ms when there are any. */
export function offsetText(timeMs: number, startMs: number): string {
  const total = Math.round(timeMs - startMs);
  const abs = Math.abs(total);
  const s = Math.floor(abs / 1000);
  const frac = abs % 1000;
  return `${total < 0 ? "-" : "+"}${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}${frac > 0 ? `.${String(frac).padStart(3, "0")}` : ""}`;
}

/** A duration in words: `58 s`, `2 min`, `1 h 3 min`, `5 d`. */
export function durationText(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${+(abs / 1000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  if (abs < 3_600_000) {
    const m = Math.floor(abs / 60_000);
    const s = Math.round((abs % 60_000) / 1000);
    return s ? `${m} min ${s} s` : `${m} min`;
  }
  if (abs < 86_400_000) {
    const h = Math.floor(abs / 3_600_000);
    const m = Math.round((abs % 3_600_000) / 60_000);
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  const d = Math.floor(abs / 86_400_000);
  const h = Math.round((abs % 86_400_000) / 3_600_000);
  return h ? `${d} d ${h} h` : `${d} d`;
}

function attemptOutcome(cls: string | undefined, eligible: boolean, statuses: readonly string[]): AttemptOutcome {
  switch (cls) {
    case "results":
      if (statuses.includes("deferred")) return "deferred";
      if (statuses.length > 0 && statuses.every((s) => s === "rejected")) return "rejected";
      return "accepted";
    case "permanent":
      return "permanent";
    case "no-service":
      return "no-service";
    case "no-common-version":
      return "no-common-version";
    default:
      return eligible ? "temporary-eligible" : "temporary";
  }
}

interface LaneBuilder {
  id: string;
  messageId: string;
  domain: string;
  senderDomain: string;
  recipients: string[];
  startMs: number;
  fallbackWindowStartMs?: number;
  fallbackWindowEndMs?: number;
  giveUpAtMs?: number;
  /** When the delivery actor reached a final state (finished, handed to SMTP, bounced). */
  deliveryEndMs?: number;
  retries: RetryPlan[];
  /** Exchanges since its current attempt began, and per-recipient statuses. */
  pendingExchanges: string[];
  pendingStatuses: string[];
  attemptMarks: number[];
  /** Per-recipient results of the attempt under way (numbered and timed when it is judged). */
  pendingResults: {
    recipient: string;
    status: string;
    problem: string | undefined;
    rule: string | undefined;
    seq: number;
  }[];
  recipientResults: Map<string, RecipientResult[]>;
  recipientOutcomes: Map<string, { outcome: string; timeMs: number; rule: string | undefined; seq: number }>;
  /** The attempt that ruled SMTP fallback out, and its exchanges (shown once a retry follows it). */
  ruledOut?: FallbackRuledOut & { readonly exchangeIds: readonly string[] };
}

/** What the timeline keeps of the events read so far: a live run's next batch adds to it. */
interface TimelineState {
  readonly lanes: Map<string, LaneBuilder>;
  readonly marks: Mark[];
  readonly connectors: RetryConnector[];
  readonly faults: {
    id: string;
    layer: string;
    scope: Data;
    fromMs: number;
    untilMs: number | undefined;
    kind: string;
  }[];
  readonly dnsChanges: { name: string; seq: number; timeMs: number; gone: boolean }[];
  /** The actor last active in each sending domain: exchanges it starts are its own. */
  readonly currentActor: Map<string, string>;
  readonly exchangeActor: Map<string, string>;
  readonly hostDomain: Map<string, string>;
  /** dsnMessageId → the lane of the message it reports on. */
  readonly dsnParent: Map<string, string>;
  readonly dsnOfMessage: Map<string, { messageId: string; reason: string }>;
  endMs: number;
}

const newTimelineState = (startMs: number): TimelineState => ({
  lanes: new Map(),
  marks: [],
  connectors: [],
  faults: [],
  dnsChanges: [],
  currentActor: new Map(),
  exchangeActor: new Map(),
  hostDomain: new Map(),
  dsnParent: new Map(),
  dsnOfMessage: new Map(),
  endMs: startMs,
});

/** The delivery machine's final states (app/sender/deliveryMachine.ts): the delivery is over. */
const FINAL_STATES: ReadonlySet<string> = new Set(["finished", "handedToSmtp", "bounced"]);

/** The events last built and what was read of them: the next call, one batch longer, reads only the batch. */
let kept: { events: readonly RecordedEvent[]; startMs: number; state: TimelineState } | undefined;

/** Whether `events` starts with every event of `before` (the same objects): a later batch of the same run. */
function continues(events: readonly RecordedEvent[], before: readonly RecordedEvent[]): boolean {
  if (events.length < before.length) return false;
  for (let i = before.length - 1; i >= 0; i--) if (events[i] !== before[i]) return false;
  return true;
}

/**
 * The timeline of a trace's events. `labels` maps Message-IDs to the
 * scenario's message ids (`m1@a.example` → `m1`) for the lane labels.
 *
 * Called again with the same events and more (a live run's next batch), it
 * reads only the events added (issue 12: a batch's work in proportion to the
 * batch), and gives what a build from scratch gives.
 */
export function buildTimeline(
  events: readonly RecordedEvent[],
  startMs: number,
  labels: ReadonlyMap<string, string> = new Map(),
): Timeline {
  const before = kept !== undefined && kept.startMs === startMs && continues(events, kept.events) ? kept : undefined;
  const state = before?.state ?? newTimelineState(startMs);
  readTimelineEvents(state, before === undefined ? events : events.slice(before.events.length), startMs);
  kept = { events, startMs, state };
  return timelineOf(state, startMs, labels);
}

/** Reads `events` into `state`: lanes, marks, connectors, faults and DNS changes so far. */
function readTimelineEvents(state: TimelineState, events: readonly RecordedEvent[], startMs: number): void {
  const { lanes, marks, connectors, faults, dnsChanges, currentActor, exchangeActor, hostDomain } = state;
  const { dsnParent, dsnOfMessage } = state;

  const laneFor = (messageId: string, recipients: readonly string[]): LaneBuilder | undefined => {
    for (const r of recipients) {
      const lane = lanes.get(`${messageId}→${domainOf(r)}`);
      if (lane) return lane;
    }
    return undefined;
  };
  const laneOfMailbox = (mailbox: string, messageId?: string): LaneBuilder | undefined => {
    if (messageId) {
      const id = messageId.replace(/^<|>$/g, "");
      const own = lanes.get(`${id}→${domainOf(mailbox)}`);
      if (own) return own;
    }
    let found: LaneBuilder | undefined;
    for (const lane of lanes.values()) if (lane.recipients.includes(mailbox.toLowerCase())) found = lane;
    return found;
  };

  for (const e of events) {
    const d = e.data as Data;
    state.endMs = Math.max(state.endMs, e.timeMs);
    const actorId = str(d["deliveryActor"]);
    if (actorId && e.domain) currentActor.set(e.domain, actorId);
    switch (e.name) {
      case "machine.started": {
        if (!actorId) break;
        const messageId = str(d["messageId"]) ?? actorId.split("→")[0] ?? actorId;
        lanes.set(actorId, {
          id: actorId,
          messageId,
          domain: str(d["domain"]) ?? actorId.split("→")[1] ?? "",
          senderDomain: e.domain ?? "",
          recipients: strs(d["recipients"]).map((r) => r.toLowerCase()),
          startMs: e.timeMs,
          retries: [],
          pendingExchanges: [],
          pendingStatuses: [],
          attemptMarks: [],
          pendingResults: [],
          recipientResults: new Map(),
          recipientOutcomes: new Map(),
        });
        break;
      }
      case "machine.transition": {
        const lane = actorId ? lanes.get(actorId) : undefined;
        const to = str(d["to"]);
        if (lane && to !== undefined && FINAL_STATES.has(to)) lane.deliveryEndMs ??= e.timeMs;
        break;
      }
      case "attempt.started": {
        const deliveryId = str(d["deliveryId"]);
        const actor = deliveryId?.replace(/#\d+$/, "");
        if (actor && e.domain) currentActor.set(e.domain, actor);
        break;
      }
      case "dns.answer": {
        const name = str(d["name"]);
        if (name && d["kind"] === "answer" && Array.isArray(d["records"])) {
          const domain = name.replace(/^_svc\./, "").toLowerCase();
          for (const r of d["records"] as Data[]) {
            const target = str(r["target"]);
            if (target && target !== ".") hostDomain.set(target.toLowerCase(), domain);
          }
        }
        break;
      }
      case "discovery.resolved": {
        const origin = str(d["origin"]);
        const domain = str(d["domain"]);
        const host = origin ? hostOf(origin) : undefined;
        if (host && domain) hostDomain.set(host, domain.toLowerCase());
        break;
      }
      case "http.request": {
        const x = str(d["exchangeId"]);
        const actor = e.domain ? currentActor.get(e.domain) : undefined;
        if (x && actor) {
          exchangeActor.set(x, actor);
          lanes.get(actor)?.pendingExchanges.push(x);
        }
        break;
      }
      case "recipient.result": {
        const actor = str(d["deliveryId"])?.replace(/#\d+$/, "");
        const status = str(d["status"]);
        const lane = actor ? lanes.get(actor) : undefined;
        if (lane && status) {
          lane.pendingStatuses.push(status);
          lane.pendingResults.push({
            recipient: (str(d["recipient"]) ?? "?").toLowerCase(),
            status,
            problem: str(d["problem"])?.replace(/^.*\//, ""),
            rule: str(d["rule"]),
            seq: e.seq,
          });
        }
        break;
      }
      case "attempt.judged": {
        const lane = actorId ? lanes.get(actorId) : undefined;
        if (!lane) break;
        const n = num(d["attempt"]) ?? lane.attemptMarks.length + 1;
        const started = num(d["startedAtMs"]) ?? e.timeMs;
        const ended = num(d["endedAtMs"]) ?? e.timeMs;
        if (n === 1) {
          const ws = num(d["fallbackWindowStartMs"]);
          const we = num(d["fallbackWindowEndMs"]);
          const g = num(d["giveUpAtMs"]);
          if (ws !== undefined) lane.fallbackWindowStartMs = ws;
          if (we !== undefined) lane.fallbackWindowEndMs = we;
          if (g !== undefined) lane.giveUpAtMs = g;
        }
        const cls = str(d["class"]);
        const eligible = d["fallbackEligible"] === true;
        const outcome = attemptOutcome(cls, eligible, lane.pendingStatuses);
        const rule = str(d["rule"]);
        const status = num(d["status"]);
        const problem = str(d["problem"])?.replace(/^.*\//, "");
        const answer =
          cls === "results"
            ? `results: ${lane.pendingStatuses.join(", ") || "none"}`
            : [status, problem, str(d["detail"])].filter((x) => x !== undefined).join(" ");
        const summary = `attempt ${n} at ${offsetText(started, startMs)}: ${OUTCOME_TEXT[outcome]}${answer ? ` — ${answer}` : ""}${rule ? ` [${rule}]` : ""}`;
        // The attempt after which SMTP fallback is no longer possible: the flag the machine keeps (STATE-3's
        // "every attempt so far ended in a fallback-eligible failure"), or, in a trace without it, this
        // attempt's own eligibility (a no-service answer decides nothing).
        const all = d["allAttemptsFallbackEligible"];
        const rulesOut = typeof all === "boolean" ? !all : !eligible && cls !== "no-service";
        if (rulesOut && lane.ruledOut === undefined) {
          const authenticated = cls === "results" || (status !== undefined && status >= 400 && status < 500);
          const why =
            cls === "results"
              ? `per-recipient results: ${
                  lane.pendingResults
                    .filter((r) => r.status !== "accepted")
                    .map((r) => `${r.recipient} ${r.status}${r.problem ? ` (${r.problem})` : ""}`)
                    .join(", ") || "accepted"
                }`
              : `${[status, problem ?? cls].filter((x) => x !== undefined).join(" ")}${d["stage"] === "capabilities" ? " (capabilities GET)" : ""}`;
          const cited = authenticated ? "ERR-23" : rule;
          lane.ruledOut = {
            attempt: n,
            timeMs: started,
            judgedAtMs: e.timeMs,
            seq: e.seq,
            answer: why,
            rule: cited,
            text: `SMTP ruled out at attempt ${n}: ${why}${cited ? `, ${cited}` : ""}`,
            exchangeIds: lane.pendingExchanges,
          };
        }
        lane.attemptMarks.push(marks.length);
        marks.push({
          id: `a:${lane.id}:${n}`,
          kind: "attempt",
          lane: lane.id,
          timeMs: started,
          endMs: ended,
          seq: e.seq,
          attempt: n,
          outcome,
          label: String(n),
          summary,
          ...(rule !== undefined && { rule }),
          exchangeIds: lane.pendingExchanges,
        });
        lane.pendingExchanges = [];
        lane.pendingStatuses = [];
        for (const r of lane.pendingResults) {
          const list = lane.recipientResults.get(r.recipient);
          const result = { ...r, attempt: n, timeMs: started };
          if (list) list.push(result);
          else lane.recipientResults.set(r.recipient, [result]);
        }
        lane.pendingResults = [];
        break;
      }
      case "timer.set": {
        const lane = actorId ? lanes.get(actorId) : undefined;
        if (!lane) break;
        const retry = num(d["retry"]) ?? lane.retries.length + 1;
        const from = num(d["attemptStartedAtMs"]) ?? e.timeMs;
        const at = num(d["atMs"]) ?? e.timeMs;
        const giveUp = num(d["giveUpAtMs"]) ?? lane.giveUpAtMs;
        const base = num(d["baseDelayMs"]) ?? 0;
        const lower = num(d["lowerBoundDelayMs"]);
        lane.retries.push({
          retry,
          attempt: retry + 1,
          attemptStartedAtMs: from,
          baseDelayMs: base,
          jitteredDelayMs: num(d["jitteredDelayMs"]) ?? base,
          jitter: d["jitter"] === true,
          lowerBoundDelayMs: lower,
          decidedBy: str(d["decidedBy"]) ?? (d["reason"] === "retry-after" ? "retry-after" : "base-delay"),
          delayMs: at - from,
          atMs: at,
          happened: giveUp === undefined || at < giveUp,
          seq: e.seq,
        });
        connectors.push({
          lane: lane.id,
          retry,
          fromMs: from,
          toMs: at,
          decidedBy: str(d["decidedBy"]) ?? "base-delay",
          happened: giveUp === undefined || at < giveUp,
          seq: e.seq,
        });
        break;
      }
      case "smtp.handoff": {
        const messageId = str(d["messageId"]) ?? "";
        const lane = laneFor(messageId, strs(d["recipients"]));
        const reason = str(d["reason"]) ?? "";
        const accepted = d["accepted"] !== false;
        const rule = str(d["rule"]);
        if (lane) lane.deliveryEndMs ??= e.timeMs;
        marks.push({
          id: `h:${e.seq}`,
          kind: "handoff",
          lane: lane?.id,
          timeMs: e.timeMs,
          seq: e.seq,
          label: `SMTP ${reason}`,
          summary: `SMTP ${reason}: handed to SMTP at ${offsetText(e.timeMs, startMs)}${accepted ? "" : " (relay refused)"}${rule ? ` [${rule}]` : ""}`,
          ...(rule !== undefined && { rule }),
          exchangeIds: [],
        });
        break;
      }
      case "delivery.bounced": {
        const messageId = str(d["messageId"]) ?? "";
        const lane = laneFor(messageId, strs(d["recipients"]));
        const rule = str(d["rule"]);
        if (lane) lane.deliveryEndMs ??= e.timeMs;
        marks.push({
          id: `b:${e.seq}`,
          kind: "bounce",
          lane: lane?.id,
          timeMs: e.timeMs,
          seq: e.seq,
          label: "bounced",
          summary: `bounced at ${offsetText(e.timeMs, startMs)} after ${num(d["attempts"]) ?? "?"} attempts${rule ? ` [${rule}]` : ""}`,
          ...(rule !== undefined && { rule }),
          exchangeIds: [],
        });
        break;
      }
      case "recipient.outcome": {
        const messageId = str(d["messageId"]) ?? "";
        const recipient = str(d["recipient"]) ?? "";
        const lane = lanes.get(`${messageId}→${domainOf(recipient)}`);
        if (lane)
          lane.recipientOutcomes.set(recipient.toLowerCase(), {
            outcome: str(d["outcome"]) ?? "?",
            timeMs: e.timeMs,
            rule: str(d["rule"]),
            seq: e.seq,
          });
        break;
      }
      case "dsn.sent": {
        const messageId = str(d["messageId"]) ?? "";
        const dsnId = str(d["dsnMessageId"]);
        const reason = str(d["reason"]) ?? "";
        const recipients = strs(d["recipients"]);
        const lane = laneFor(messageId, recipients) ?? laneOfMailbox(recipients[0] ?? "", messageId);
        if (dsnId && lane) dsnParent.set(dsnId, lane.id);
        if (dsnId) dsnOfMessage.set(dsnId, { messageId, reason });
        const rule = str(d["rule"]);
        marks.push({
          id: `d:${e.seq}`,
          kind: "dsn",
          lane: lane?.id,
          timeMs: e.timeMs,
          seq: e.seq,
          label: "DSN",
          summary: `DSN (${reason}) sent to ${str(d["to"]) ?? "?"} at ${offsetText(e.timeMs, startMs)}${rule ? ` [${rule}]` : ""}`,
          ...(rule !== undefined && { rule }),
          exchangeIds: [],
        });
        break;
      }
      case "mailbox.delivered":
      case "failure.after-acceptance":
      case "idempotency.replay":
      case "idempotency.conflict": {
        const x = str(d["exchangeId"]);
        const mailbox = str(d["mailbox"]) ?? "";
        const actor = x ? exchangeActor.get(x) : undefined;
        const lane = (actor ? lanes.get(actor) : undefined) ?? laneOfMailbox(mailbox, str(d["messageId"]));
        const what =
          e.name === "mailbox.delivered"
            ? `stored in ${mailbox}`
            : e.name === "failure.after-acceptance"
              ? `failure after acceptance at ${mailbox} (${str(d["status"]) ?? ""})`
              : e.name === "idempotency.replay"
                ? "idempotent replay of a stored response"
                : "idempotency key conflict";
        marks.push({
          id: `r:${e.seq}`,
          kind: "receiver",
          lane: lane?.id,
          timeMs: e.timeMs,
          seq: e.seq,
          label:
            e.name === "mailbox.delivered"
              ? "stored"
              : e.name === "failure.after-acceptance"
                ? "failure"
                : e.name === "idempotency.replay"
                  ? "replay"
                  : "conflict",
          summary: `${e.domain ?? "receiver"}: ${what} at ${offsetText(e.timeMs, startMs)}`,
          exchangeIds: x ? [x] : [],
        });
        break;
      }
      case "fault.window": {
        faults.push({
          id: str(d["id"]) ?? String(e.seq),
          layer: str(d["layer"]) ?? "network",
          kind: str(d["kind"]) ?? "fault",
          scope: (d["scope"] as Data | undefined) ?? {},
          fromMs: num(d["fromMs"]) ?? e.timeMs,
          untilMs: num(d["untilMs"]),
        });
        break;
      }
      case "dns.changed": {
        const name = str(d["name"]) ?? "";
        dnsChanges.push({ name, seq: e.seq, timeMs: e.timeMs, gone: d["records"] === null });
        break;
      }
      default:
        break;
    }
  }
}

/**
 * When a delivery ended: its actor reached a final state (finished,
 * handedToSmtp, bounced, or the hand-off or bounce that ends it), or, in a
 * trace without the machine's transitions, the last of its recipients'
 * outcomes once every recipient has one. Undefined while it goes on.
 */
function deliveryEnd(lane: LaneBuilder): number | undefined {
  if (lane.deliveryEndMs !== undefined) return lane.deliveryEndMs;
  if (lane.recipients.length === 0 || lane.recipients.some((r) => !lane.recipientOutcomes.has(r))) return undefined;
  let last = -Infinity;
  for (const o of lane.recipientOutcomes.values()) last = Math.max(last, o.timeMs);
  return last;
}

/**
 * Where SMTP fallback was ruled out for a delivery, when the delivery went on after that attempt (a retry
 * was planned after it): a delivery that ended there (accepted, rejected) was never going to fall back.
 */
function ruledOutOf(lane: LaneBuilder): LaneBuilder["ruledOut"] {
  const r = lane.ruledOut;
  return r !== undefined && lane.retries.some((p) => p.retry >= r.attempt) ? r : undefined;
}

/** The timeline of what `state` read: lanes in order, bands, DNS marks, everything sorted. */
function timelineOf(state: TimelineState, startMs: number, labels: ReadonlyMap<string, string>): Timeline {
  const { lanes, connectors, faults, dnsChanges, hostDomain, dsnParent, dsnOfMessage, endMs } = state;
  // The marks so far, and the DNS changes' added below: the state's own list goes on growing.
  const marks = [...state.marks];
  // Lanes in the order the actors started, each message's DSN lanes right after it.
  const built = [...lanes.values()];
  const laneOut = (b: LaneBuilder): Lane => {
    const dsn = dsnOfMessage.get(b.messageId);
    const parent = dsnParent.get(b.messageId);
    const label = dsn
      ? `DSN of ${shortId(dsn.messageId, labels)} → ${b.domain}`
      : `${shortId(b.messageId, labels)} → ${b.domain}`;
    const ruledOut = ruledOutOf(b);
    return {
      id: b.id,
      messageId: b.messageId,
      domain: b.domain,
      senderDomain: b.senderDomain,
      recipients: b.recipients,
      kind: dsn ? "dsn" : "message",
      ...(parent !== undefined && { parent }),
      label,
      startMs: b.startMs,
      endMs: deliveryEnd(b),
      ...(b.fallbackWindowEndMs !== undefined && { fallbackWindowEndMs: b.fallbackWindowEndMs }),
      ...(b.giveUpAtMs !== undefined && { giveUpAtMs: b.giveUpAtMs }),
      retries: [...b.retries],
      recipientLanes: [...new Set([...b.recipients, ...b.recipientResults.keys(), ...b.recipientOutcomes.keys()])].map(
        (recipient) => ({
          recipient,
          results: [...(b.recipientResults.get(recipient) ?? [])],
          outcome: b.recipientOutcomes.get(recipient),
        }),
      ),
      ...(ruledOut !== undefined && {
        fallbackRuledOut: {
          attempt: ruledOut.attempt,
          timeMs: ruledOut.timeMs,
          judgedAtMs: ruledOut.judgedAtMs,
          seq: ruledOut.seq,
          answer: ruledOut.answer,
          rule: ruledOut.rule,
          text: ruledOut.text,
        },
      }),
    };
  };
  const ordered: Lane[] = [];
  const placed = new Set<string>();
  const children = new Map<string, LaneBuilder[]>();
  for (const b of built) {
    const parent = dsnParent.get(b.messageId);
    if (parent && lanes.has(parent)) children.set(parent, [...(children.get(parent) ?? []), b]);
  }
  const place = (b: LaneBuilder) => {
    if (placed.has(b.id)) return;
    placed.add(b.id);
    ordered.push(laneOut(b));
    for (const c of children.get(b.id) ?? []) place(c);
  };
  for (const b of built) if (!dsnParent.has(b.messageId) || !lanes.has(dsnParent.get(b.messageId) ?? "")) place(b);
  for (const b of built) place(b);

  const bands: Band[] = [];
  for (const lane of lanes.values()) {
    const windowEnd = lane.fallbackWindowEndMs;
    const ruledOut = ruledOutOf(lane);
    if (ruledOut !== undefined)
      marks.push({
        id: `f:${lane.id}`,
        kind: "ruled-out",
        lane: lane.id,
        timeMs: ruledOut.timeMs,
        seq: ruledOut.seq,
        attempt: ruledOut.attempt,
        label: "SMTP ruled out",
        summary: `${ruledOut.text} (${offsetText(ruledOut.timeMs, startMs)}): no SMTP fallback for this delivery, its fallback window decides nothing`,
        ...(ruledOut.rule !== undefined && { rule: ruledOut.rule }),
        exchangeIds: ruledOut.exchangeIds,
      });
    if (windowEnd === undefined) continue;
    const fromMs = lane.fallbackWindowStartMs ?? lane.startMs;
    // The window matters while the delivery goes on and may still fall back: one that ended inside it
    // (accepted, handed to SMTP, bounced) has its band end there, one whose fallback an answer ruled out
    // (ERR-23) where that answer came, not run on to a window end that decides nothing. A delivery that
    // ended, or lost its fallback, before any retry that could fall back (accepted at its first attempt,
    // rate limited at it) has no band: the window never applied to it.
    const ended = deliveryEnd(lane);
    const cutAt = Math.min(ended ?? Infinity, ruledOut?.judgedAtMs ?? Infinity);
    const lastOpen = ruledOut?.attempt ?? Infinity;
    if (cutAt !== Infinity && !lane.retries.some((r) => r.retry < lastOpen && r.attemptStartedAtMs < cutAt)) continue;
    bands.push(
      cutAt < windowEnd
        ? {
            lane: lane.id,
            kind: "fallback-window",
            fromMs,
            untilMs: cutAt,
            windowEndMs: windowEnd,
            label:
              ruledOut !== undefined && ruledOut.judgedAtMs === cutAt
                ? `fallback window (to ${offsetText(windowEnd, startMs)}, closed at attempt ${ruledOut.attempt}: SMTP ruled out)`
                : `fallback window (to ${offsetText(windowEnd, startMs)}, cut where the delivery ended)`,
          }
        : { lane: lane.id, kind: "fallback-window", fromMs, untilMs: windowEnd, label: "fallback window" },
    );
  }
  // The lanes of each recipient domain, and the domains a name falls under (itself and its parents).
  const lanesOfDomain = new Map<string, Lane[]>();
  for (const lane of ordered) {
    const list = lanesOfDomain.get(lane.domain);
    if (list) list.push(lane);
    else lanesOfDomain.set(lane.domain, [lane]);
  }
  const lanesUnder = (name: string): Lane[] => {
    const out: Lane[] = [];
    const labels = name.split(".");
    for (let i = 0; i < labels.length; i++) pushAll(out, lanesOfDomain.get(labels.slice(i).join(".")) ?? []);
    return out;
  };
  for (const f of faults) {
    const host = str(f.scope["host"])?.toLowerCase();
    const name = str(f.scope["name"])?.toLowerCase();
    const source = str(f.scope["source"])?.toLowerCase();
    const hit =
      f.layer === "dns"
        ? name === undefined
          ? ordered
          : lanesUnder(name)
        : host === undefined
          ? ordered
          : [...new Set([...(lanesOfDomain.get(hostDomain.get(host) ?? "") ?? []), ...lanesUnder(host)])];
    for (const lane of hit) {
      if (source !== undefined && source !== lane.senderDomain) continue;
      bands.push({ lane: lane.id, kind: "fault", fromMs: f.fromMs, untilMs: f.untilMs, label: `${f.id} (${f.kind})` });
    }
  }
  for (const c of dnsChanges) {
    const domain = c.name.replace(/^_svc\./, "");
    const targets = [
      ...new Set([...(lanesOfDomain.get(domain) ?? []), ...(lanesOfDomain.get(hostDomain.get(c.name) ?? "") ?? [])]),
    ];
    for (const lane of targets.length ? targets : [undefined])
      marks.push({
        id: `n:${c.seq}:${lane?.id ?? ""}`,
        kind: "dns",
        lane: lane?.id,
        timeMs: c.timeMs,
        seq: c.seq,
        label: "DNS",
        summary: `DNS: ${c.name} ${c.gone ? "removed" : "changed"} at ${offsetText(c.timeMs, startMs)}`,
        exchangeIds: [],
      });
  }
  marks.sort((a, b) => a.timeMs - b.timeMs || a.seq - b.seq);
  return { startMs, endMs, lanes: ordered, marks, connectors: [...connectors], bands };
}

// ---------------------------------------------------------------- scales and the axis

export type ScaleKind = "linear" | "log";

/** Maps virtual time to x and back, over a window of the run. */
export interface TimeScale {
  readonly kind: ScaleKind;
  readonly fromMs: number;
  readonly toMs: number;
  readonly width: number;
  x(timeMs: number): number;
  timeAt(x: number): number;
}

/** Log scale unit: time from the start in seconds, +1 so that the start maps to 0. */
const logOf = (ms: number) => Math.log10(1 + Math.max(0, ms) / 1000);
const unlog = (v: number) => (10 ** v - 1) * 1000;

/**
 * A scale from [fromMs, toMs] to [0, width]. Log measures time since
 * `startMs` (a 1-minute retry and a 5-day give-up visible together).
 */
export function timeScale(kind: ScaleKind, fromMs: number, toMs: number, width: number, startMs: number): TimeScale {
  const span = Math.max(1, toMs - fromMs);
  if (kind === "linear")
    return {
      kind,
      fromMs,
      toMs,
      width,
      x: (t) => ((t - fromMs) / span) * width,
      timeAt: (x) => fromMs + (x / width) * span,
    };
  const a = logOf(fromMs - startMs);
  const b = Math.max(a + 1e-9, logOf(toMs - startMs));
  return {
    kind,
    fromMs,
    toMs,
    width,
    x: (t) => ((logOf(t - startMs) - a) / (b - a)) * width,
    timeAt: (x) => startMs + unlog(a + (x / width) * (b - a)),
  };
}

const SECOND = 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const STEPS = [
  1,
  10,
  100,
  SECOND,
  5 * SECOND,
  10 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  5 * DAY,
  10 * DAY,
  30 * DAY,
];

/** An axis label: `+5d` on whole days when the step is days, `+2:03:00`, `+0:00:01.500` below a second. */
export function tickLabel(offsetMs: number, stepMs: number): string {
  if (stepMs >= DAY && offsetMs % DAY === 0) return `+${offsetMs / DAY}d`;
  const text = offsetText(offsetMs, 0);
  return stepMs >= SECOND ? text.replace(/\.\d{3}$/, "") : text;
}

export interface Tick {
  readonly timeMs: number;
  readonly x: number;
  readonly label: string;
}

/** Ticks at least `minGapPx` apart, labelled as offsets from `startMs`. */
export function ticks(scale: TimeScale, startMs: number, minGapPx = 90): Tick[] {
  const out: Tick[] = [];
  if (scale.kind === "log") {
    const candidates = [0, SECOND, 10 * SECOND, MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, DAY, 5 * DAY, 30 * DAY];
    let lastX = -Infinity;
    for (const c of candidates) {
      const t = startMs + c;
      if (t < scale.fromMs || t > scale.toMs) continue;
      const x = scale.x(t);
      if (x - lastX < minGapPx) continue;
      lastX = x;
      out.push({ timeMs: t, x, label: c >= DAY ? `+${c / DAY}d` : tickLabel(c, c || SECOND) });
    }
    return out;
  }
  const span = scale.toMs - scale.fromMs;
  const wanted = span / Math.max(1, scale.width / minGapPx);
  const step = STEPS.find((s) => s >= wanted) ?? Math.ceil(wanted / (30 * DAY)) * 30 * DAY;
  const first = Math.ceil((scale.fromMs - startMs) / step) * step;
  for (let o = first; startMs + o <= scale.toMs; o += step) {
    const t = startMs + o;
    out.push({ timeMs: t, x: scale.x(t), label: tickLabel(o, step) });
  }
  return out;
}

// ---------------------------------------------------------------- what is drawn

/** The first index in `marks` (sorted by time) at or after `timeMs`. */
function lowerBound(marks: readonly Mark[], timeMs: number): number {
  let lo = 0;
  let hi = marks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((marks[mid]?.timeMs ?? 0) < timeMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The marks in [fromMs, toMs], found by binary search (the marks are sorted by time). */
export function marksInWindow(marks: readonly Mark[], fromMs: number, toMs: number): Mark[] {
  const out: Mark[] = [];
  for (let i = lowerBound(marks, fromMs); i < marks.length; i++) {
    const m = marks[i];
    if (!m || m.timeMs > toMs) break;
    out.push(m);
  }
  return out;
}

/** A mark drawn for several that fall in one pixel column of one lane: the first, and how many. */
export interface DrawnMark {
  readonly mark: Mark;
  readonly x: number;
  readonly count: number;
}

/**
 * The marks of the visible lanes in the visible window, at most one per lane,
 * kind and `columnPx` column: what the view draws, however big the trace.
 */
export function drawnMarks(
  marks: readonly Mark[],
  scale: TimeScale,
  lanes: ReadonlySet<string>,
  columnPx = 2,
): DrawnMark[] {
  const out: DrawnMark[] = [];
  const last = new Map<string, { col: number; index: number }>();
  for (const m of marksInWindow(marks, scale.fromMs, scale.toMs)) {
    if (m.lane === undefined ? false : !lanes.has(m.lane)) continue;
    const x = scale.x(m.timeMs);
    const col = Math.floor(x / columnPx);
    const key = `${m.lane ?? ""}|${m.kind}`;
    const prev = last.get(key);
    if (prev && prev.col === col) {
      const d = out[prev.index];
      if (d) out[prev.index] = { ...d, count: d.count + 1 };
      continue;
    }
    last.set(key, { col, index: out.length });
    out.push({ mark: m, x, count: 1 });
  }
  return out;
}

/** What one lane draws, found once per timeline so that a pan or zoom looks at that lane's own things only. */
export interface LaneItems {
  /** The lane's marks and those of no lane (DNS changes of no delivered domain), by time. */
  readonly marks: readonly Mark[];
  readonly bands: readonly Band[];
  /** The retries that happened (those the give-up cut short are not drawn). */
  readonly connectors: readonly RetryConnector[];
  /** The lane ended in a bounce (its give-up line then goes without its own label). */
  readonly bounced: boolean;
}

const NO_ITEMS: LaneItems = { marks: [], bands: [], connectors: [], bounced: false };

/**
 * Each lane's marks, bands and connectors, in one pass over the timeline's:
 * a lane's redraw then costs in proportion to what it has, not to the whole
 * trace (issue 13: pans and zooms at 30 frames per second on 100k events).
 */
export function itemsByLane(timeline: Timeline): ReadonlyMap<string, LaneItems> {
  type Builder = { marks: Mark[]; bands: Band[]; connectors: RetryConnector[]; bounced: boolean };
  const out = new Map<string, Builder>();
  const of = (lane: string): Builder => {
    let b = out.get(lane);
    if (!b) {
      b = { marks: [], bands: [], connectors: [], bounced: false };
      out.set(lane, b);
    }
    return b;
  };
  for (const lane of timeline.lanes) of(lane.id);
  const global: Mark[] = [];
  for (const m of timeline.marks) {
    if (m.lane === undefined) {
      global.push(m);
      continue;
    }
    const b = of(m.lane);
    b.marks.push(m);
    if (m.kind === "bounce") b.bounced = true;
  }
  for (const band of timeline.bands) of(band.lane).bands.push(band);
  for (const c of timeline.connectors) if (c.happened) of(c.lane).connectors.push(c);
  if (global.length > 0)
    for (const b of out.values())
      b.marks =
        b.marks.length === 0 ? global : [...b.marks, ...global].sort((x, y) => x.timeMs - y.timeMs || x.seq - y.seq);
  return out;
}

/** A lane's items, or nothing for a lane the timeline does not have. */
export const laneItems = (items: ReadonlyMap<string, LaneItems>, lane: string): LaneItems =>
  items.get(lane) ?? NO_ITEMS;

/** The connectors that reach into [fromMs, toMs]. */
export function connectorsInWindow(
  connectors: readonly RetryConnector[],
  fromMs: number,
  toMs: number,
): RetryConnector[] {
  return connectors.filter((c) => c.toMs >= fromMs && c.fromMs <= toMs);
}

/** Counts in one time bucket of the overview. */
export interface Bucket {
  readonly fromMs: number;
  readonly toMs: number;
  /** Attempts by outcome. */
  readonly attempts: Readonly<Record<AttemptOutcome, number>>;
  readonly handoffs: number;
  readonly dsns: number;
  readonly bounces: number;
  /** Deliveries started and not yet ended (Lane.endMs: the delivery actor's end) in the bucket. */
  readonly inFlight: number;
}

const zeroOutcomes = (): Record<AttemptOutcome, number> => ({
  accepted: 0,
  rejected: 0,
  deferred: 0,
  "temporary-eligible": 0,
  temporary: 0,
  permanent: 0,
  "no-service": 0,
  "no-common-version": 0,
});

/**
 * The whole run as `count` buckets of equal time (linear) or equal log-width:
 * the overview chart's bars. They cover the start to `toMs` (default the last
 * event): the lanes' whole window, so that each bar sits over the lanes' time
 * it counts, and two stacked timelines on one axis (Compare) bucket alike.
 */
export function buckets(
  timeline: Timeline,
  count: number,
  kind: ScaleKind = "linear",
  toMs: number = timeline.endMs,
): Bucket[] {
  const n = Math.max(1, Math.floor(count));
  const scale = timeScale(kind, timeline.startMs, Math.max(toMs, timeline.startMs + 1), n, timeline.startMs);
  const edges = Array.from({ length: n + 1 }, (_, i) => scale.timeAt(i));
  const rows = Array.from({ length: n }, (_, i) => ({
    fromMs: edges[i] ?? 0,
    toMs: edges[i + 1] ?? 0,
    attempts: zeroOutcomes(),
    handoffs: 0,
    dsns: 0,
    bounces: 0,
    inFlight: 0,
  }));
  const indexOf = (t: number) => Math.min(n - 1, Math.max(0, Math.floor(scale.x(t))));
  for (const m of timeline.marks) {
    const row = rows[indexOf(m.timeMs)];
    if (!row) continue;
    if (m.kind === "attempt" && m.outcome) row.attempts[m.outcome] += 1;
    else if (m.kind === "handoff") row.handoffs += 1;
    else if (m.kind === "dsn") row.dsns += 1;
    else if (m.kind === "bounce") row.bounces += 1;
  }
  // In flight: +1 where a delivery starts, −1 after the bucket where the delivery ended (not its first
  // recipient's outcome: the others may be retried for days); a running sum.
  const delta = new Array<number>(n + 1).fill(0);
  for (const lane of timeline.lanes) {
    delta[indexOf(lane.startMs)] = (delta[indexOf(lane.startMs)] ?? 0) + 1;
    if (lane.endMs !== undefined) delta[indexOf(lane.endMs) + 1] = (delta[indexOf(lane.endMs) + 1] ?? 0) - 1;
  }
  let running = 0;
  for (let i = 0; i < n; i++) {
    running += delta[i] ?? 0;
    const row = rows[i];
    if (row) row.inFlight = running;
  }
  return rows;
}

/**
 * The overview's line of deliveries in flight over `width` × `height`
 * pixels (the lanes' plot): a step per bucket, drawn from the bucket's left
 * edge to its right edge as the bars are, from x = 0 to x = width exactly,
 * the most in flight at the top (1 px in, for the stroke).
 */
export function inFlightPath(rows: readonly Bucket[], width: number, height: number): string {
  const n = rows.length;
  if (n === 0) return "";
  const peak = maxOf(
    rows.map((r) => r.inFlight),
    1,
  );
  const y = (v: number) => r1(height - 1 - (v / peak) * (height - 2));
  const x = (i: number) => r1((i / n) * width);
  let d = `M0,${y(rows[0]?.inFlight ?? 0)}`;
  rows.forEach((r, i) => {
    if (i > 0) d += ` V${y(r.inFlight)}`;
    d += ` H${x(i + 1)}`;
  });
  return d;
}

const r1 = (v: number) => Math.round(v * 10) / 10;

/** The lanes to draw: those in the scrolled viewport, and `overscan` more on each side. */
export function visibleLaneRange(
  laneCount: number,
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  overscan = 2,
): { readonly first: number; readonly last: number } {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(laneCount - 1, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return { first, last };
}

/** Where each lane row sits when some lanes show their recipients' sub-lanes. */
export interface LaneLayout {
  /** The top of each lane, by index, and after the last one the total height. */
  readonly tops: readonly number[];
  readonly height: number;
}

/** The rows' tops: a lane is `rowHeight` tall, plus `subHeight` per recipient when it is unfolded. */
export function laneLayout(
  lanes: readonly Lane[],
  unfolded: ReadonlySet<string>,
  rowHeight: number,
  subHeight: number,
): LaneLayout {
  const tops: number[] = [];
  let y = 0;
  for (const lane of lanes) {
    tops.push(y);
    y += rowHeight + (unfolded.has(lane.id) ? lane.recipientLanes.length * subHeight : 0);
  }
  tops.push(y);
  return { tops, height: y };
}

/** The lanes (with their sub-lanes) in the scrolled viewport of a layout, and `overscan` more each side. */
export function visibleLaneRangeOf(
  layout: LaneLayout,
  scrollTop: number,
  viewportHeight: number,
  overscan = 2,
): { readonly first: number; readonly last: number } {
  const count = layout.tops.length - 1;
  // The last lane whose top is at or above y.
  const at = (y: number) => {
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((layout.tops[mid] ?? 0) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  if (count <= 0) return { first: 0, last: -1 };
  return {
    first: Math.max(0, at(scrollTop) - overscan),
    last: Math.min(count - 1, at(scrollTop + viewportHeight) + overscan),
  };
}

/**
 * The window moved by `dxPx` pixels of `scale` (a drag to the right shows
 * earlier times), kept within [minMs, maxMs]: on a log scale too, since the
 * move is made in the scale's own units.
 */
export function panWindow(scale: TimeScale, dxPx: number, minMs: number, maxMs: number): readonly [number, number] {
  // How far each way the window can go before an end leaves the run.
  const room = dxPx > 0 ? -scale.x(minMs) : scale.width - scale.x(maxMs);
  const dx = dxPx > 0 ? Math.min(dxPx, Math.max(0, room)) : Math.max(dxPx, Math.min(0, room));
  if (dx === 0) return [scale.fromMs, scale.toMs];
  return [Math.max(minMs, scale.timeAt(-dx)), Math.min(maxMs, scale.timeAt(scale.width - dx))];
}

/**
 * The window zoomed by `factor` (< 1 zooms in) around the pixel `atPx`, kept
 * within [minMs, maxMs]; undefined when it would show the whole run (no zoom).
 */
export function zoomWindow(
  scale: TimeScale,
  factor: number,
  atPx: number,
  minMs: number,
  maxMs: number,
): readonly [number, number] | undefined {
  const from = Math.max(minMs, scale.timeAt(atPx - atPx * factor));
  const to = Math.min(maxMs, scale.timeAt(atPx + (scale.width - atPx) * factor));
  if (from <= minMs && to >= maxMs) return undefined;
  return to - from < 1 ? [scale.fromMs, scale.toMs] : [from, to];
}

/**
 * The window a gesture on the overview asks for, its bars `bucketCount` buckets over `scale` (the lanes'
 * whole window): a drag from `x0` to `x1` (px from the plot's left) brushes that range; a click (a move
 * of less than `slop` px) the bucket under it. Undefined for a gesture off the plot.
 */
export function overviewWindow(
  scale: TimeScale,
  x0: number,
  x1: number,
  bucketCount: number,
  slop = 6,
): readonly [number, number] | undefined {
  const w = scale.width;
  const clamp = (x: number) => Math.min(w, Math.max(0, x));
  if (Math.abs(x1 - x0) >= slop) {
    const a = clamp(Math.min(x0, x1));
    const b = clamp(Math.max(x0, x1));
    return b - a < 1 ? undefined : [scale.timeAt(a), scale.timeAt(b)];
  }
  if (x0 < 0 || x0 > w) return undefined;
  const n = Math.max(1, Math.floor(bucketCount));
  const i = Math.min(n - 1, Math.floor((x0 / w) * n));
  return [scale.timeAt((i * w) / n), scale.timeAt(((i + 1) * w) / n)];
}

/** How far a hover text sits from the pointer. */
export const TIP_GAP = 12;

/**
 * Where a hover text `width` wide goes beside the pointer at `x`: to its right, or to its left where it
 * would run past `right` (the box's right edge), kept inside the box's left edge.
 */
export function tipPlace(
  x: number,
  width: number,
  right: number,
): { readonly left: number; readonly side: "right" | "left" } {
  if (x + TIP_GAP + width <= right) return { left: x + TIP_GAP, side: "right" };
  return { left: Math.max(0, x - TIP_GAP - width), side: "left" };
}

/** The next mark from `current` in a direction, over the lanes' marks in time order (keyboard navigation). */
export function neighbourMark(
  marks: readonly Mark[],
  current: string | undefined,
  direction: "next" | "previous" | "up" | "down",
  lanes: readonly Lane[],
): Mark | undefined {
  const attempts = marks.filter((m) => m.lane !== undefined);
  if (attempts.length === 0) return undefined;
  const at = attempts.findIndex((m) => m.id === current);
  const here = attempts[at];
  if (!here) return direction === "previous" ? attempts[attempts.length - 1] : attempts[0];
  if (direction === "next" || direction === "previous") {
    const own = attempts.filter((m) => m.lane === here.lane);
    const i = own.indexOf(here);
    return own[direction === "next" ? i + 1 : i - 1] ?? here;
  }
  const li = lanes.findIndex((l) => l.id === here.lane);
  const target = lanes[direction === "down" ? li + 1 : li - 1];
  if (!target) return here;
  const own = attempts.filter((m) => m.lane === target.id);
  let best: Mark | undefined;
  for (const m of own) if (!best || Math.abs(m.timeMs - here.timeMs) < Math.abs(best.timeMs - here.timeMs)) best = m;
  return best ?? here;
}

// ---------------------------------------------------------------- the retry-delay chart

export interface RetryChartRow {
  /** The attempt the delay comes before. */
  readonly attempt: number;
  /** Minutes, for the chart. */
  readonly base: number;
  readonly jittered: number;
  /** The ±20 % band around the base delay, when jitter is on: [low, high]. */
  readonly band: readonly [number, number] | undefined;
  readonly lowerBound: number | undefined;
  /** The delay actually waited, start to start. */
  readonly actual: number;
  readonly decidedBy: string;
  readonly happened: boolean;
  readonly atMs: number;
}

export interface RetryChart {
  readonly rows: readonly RetryChartRow[];
  /**
   * The first attempt made at or after the fallback window's end, when the window still decided something
   * there (no answer had ruled SMTP fallback out).
   */
  readonly fallbackWindowEndAttempt: number | undefined;
  /** Where SMTP fallback was ruled out: the window's end then decides nothing. */
  readonly fallbackRuledOut: FallbackRuledOut | undefined;
  /** The last attempt before the give-up, when the actor gave up. */
  readonly giveUpAfterAttempt: number | undefined;
  /** The cap of the schedule, in minutes (60), when some retry reached it. */
  readonly capMinutes: number | undefined;
  /**
   * The waits the schedule gave the capped retries after jitter (RETRY-3 multiplies the capped delay, G16),
   * in minutes, when jitter was on: the waits beside the cap can be longer than it.
   */
  readonly cappedJitter: { readonly minMinutes: number; readonly maxMinutes: number } | undefined;
  /** The delay axis' ticks, in minutes: 0 and even steps (1, 2, 5, 10, 15, 30, 60 … minutes) past the longest. */
  readonly delayTicks: readonly number[];
}

/** Steps of the delay axis, in minutes. */
const DELAY_STEPS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 360, 720, 1440];

/** Ticks from 0 past `top` minutes in even steps, at most `most` + 1 of them. */
export function delayTicks(top: number, most = 6): number[] {
  const step = DELAY_STEPS.find((s) => top / s <= most) ?? Math.ceil(top / most / 1440) * 1440;
  const count = Math.max(1, Math.ceil(top / step - 1e-9));
  return Array.from({ length: count + 1 }, (_, i) => i * step);
}

/**
 * The give-up time when it applies to the lane (STATE-7): the delivery was still undelivered then — it
 * bounced there, or it goes on. A delivery that ended before it (accepted, rejected, handed to SMTP)
 * never reached it: its lane draws no give-up line.
 */
export function giveUpOf(lane: Lane): number | undefined {
  const g = lane.giveUpAtMs;
  return g !== undefined && (lane.endMs === undefined || lane.endMs >= g) ? g : undefined;
}

/** The retry-delay chart of one lane: attempt number against the delay before it, in minutes. */
export function retryChart(lane: Lane): RetryChart {
  const min = (ms: number) => ms / MINUTE;
  const rows = lane.retries.map((r): RetryChartRow => ({
    attempt: r.attempt,
    base: min(r.baseDelayMs),
    jittered: min(r.jitteredDelayMs),
    band: r.jitter ? [min(r.baseDelayMs * 0.8), min(r.baseDelayMs * 1.2)] : undefined,
    lowerBound: r.lowerBoundDelayMs !== undefined ? min(r.lowerBoundDelayMs) : undefined,
    actual: min(r.delayMs),
    decidedBy: r.decidedBy,
    happened: r.happened,
    atMs: r.atMs,
  }));
  const end = lane.fallbackRuledOut === undefined ? lane.fallbackWindowEndMs : undefined;
  const after = end === undefined ? undefined : rows.find((r) => r.happened && r.atMs >= end);
  const missed = rows.find((r) => !r.happened);
  const capped = lane.retries.filter((r) => r.baseDelayMs >= HOUR);
  const jittered = capped.filter((r) => r.jitter).map((r) => r.jitteredDelayMs / MINUTE);
  const top = maxOf(
    rows.map((r) => Math.max(r.actual, r.band?.[1] ?? 0, r.lowerBound ?? 0)),
    0,
  );
  return {
    rows,
    fallbackWindowEndAttempt: after?.attempt,
    fallbackRuledOut: lane.fallbackRuledOut,
    giveUpAfterAttempt: missed ? missed.attempt - 1 : undefined,
    capMinutes: capped.length > 0 ? 60 : undefined,
    cappedJitter: jittered.length > 0 ? { minMinutes: minOf(jittered), maxMinutes: maxOf(jittered) } : undefined,
    delayTicks: delayTicks(top),
  };
}

/** Words for a decider. */
export const DECIDER_TEXT: Readonly<Record<string, string>> = {
  "base-delay": "schedule (base delay)",
  "jittered-delay": "schedule (jittered)",
  "retry-after": "Retry-After lower bound",
  "attempt-end": "the attempt's end",
};

/**
 * The attempt a moment of a delivery actor belongs to: the last attempt mark on the actor's lane that
 * started at or before `timeMs` (a transition of the statechart's history selects it in the timeline).
 */
export function attemptMarkAt(timeline: Timeline, lane: string, timeMs: number): Mark | undefined {
  let found: Mark | undefined;
  for (const mark of timeline.marks) {
    if (mark.timeMs > timeMs) break;
    if (mark.kind === "attempt" && mark.lane === lane) found = mark;
  }
  return found;
}
