/**
 * Trace events → the timeline's lanes: one reader per event name, each
 * adding what its event says to a {@link TimelineState} (a live run's next
 * batch adds to the same state), and {@link timelineOf}, which makes the
 * timeline of what was read: lanes in order, each message's DSN lanes after
 * it, the bands and marks that apply to each lane.
 */
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import type {
  AttemptOutcome,
  Band,
  Lane,
  Mark,
  RecipientResult,
  RetryConnector,
  RetryPlan,
  Timeline,
} from "./timeline.ts";
import { OUTCOME_TEXT } from "./timeline.ts";
import {
  deliveryEnd,
  fallbackBand,
  ruledOutMark,
  laneRuledOut,
  smtpRulingOfLane,
  type LaneFacts,
  type PendingResult,
  type RuledOutAt,
} from "./timelineApplies.ts";
import { formatOffset } from "./time.ts";
import { constantsOf } from "../../../app/sim/constants.ts";
import { SPEC_CONSTANTS } from "../../../app/protocol/specConstants.ts";
import { actorOfDelivery, parseDeliveryActorId } from "../../../app/trace/deliveryIds.ts";
import { dataOf, type ReadData } from "../../../app/trace/eventReader.ts";
import { isTraceEventName, type TraceEventName } from "../../../app/trace/events.ts";
import { textOf } from "../../../app/trace/values.ts";
import { pushAll } from "../../../app/protocol/lists.ts";

type Data = Readonly<Record<string, unknown>>;

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

interface LaneBuilder extends LaneFacts {
  readonly messageId: string;
  readonly domain: string;
  readonly senderDomain: string;
  readonly recipients: string[];
  fallbackWindowStartMs?: number;
  fallbackWindowEndMs?: number;
  giveUpAtMs?: number;
  deliveryEndMs?: number;
  readonly retries: RetryPlan[];
  /** Exchanges since its current attempt began, and per-recipient statuses. */
  pendingExchanges: string[];
  pendingStatuses: string[];
  attemptMarks: number[];
  /** Per-recipient results of the attempt under way (numbered and timed when it is judged). */
  pendingResults: (PendingResult & { rule: string | undefined; seq: number })[];
  readonly recipientResults: Map<string, RecipientResult[]>;
  readonly recipientOutcomes: Map<string, { outcome: string; timeMs: number; rule: string | undefined; seq: number }>;
  ruledOut?: RuledOutAt;
}

/** What the timeline keeps of the events read so far: a live run's next batch adds to it. */
export interface TimelineState {
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
  /** The retry schedule's cap in force (RETRY-2): the `spec.constants` event's, else SPEC.md's. */
  retryCapMs: number;
}

export const newTimelineState = (startMs: number): TimelineState => ({
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
  retryCapMs: SPEC_CONSTANTS.retryCapMs,
});

/** The delivery machine's final states (app/sender/deliveryMachine.ts): the delivery is over. */
const FINAL_STATES: ReadonlySet<string> = new Set(["finished", "handedToSmtp", "bounced"]);

/** One event named `N` as its reader sees it: its data as the catalogue types it, its delivery actor (when it names one), the run's start. */
interface Read<N extends TraceEventName> {
  readonly state: TimelineState;
  readonly e: RecordedEvent;
  readonly d: ReadData<N>;
  readonly actorId: string | undefined;
  readonly startMs: number;
}

/** The lane of a message's delivery to the domain of one of `recipients`. */
function laneFor(state: TimelineState, messageId: string, recipients: readonly string[]): LaneBuilder | undefined {
  for (const r of recipients) {
    const lane = state.lanes.get(`${messageId}→${domainOf(r)}`);
    if (lane) return lane;
  }
  return undefined;
}

/** The lane that delivers to `mailbox`: the message's own, else the last lane with that recipient. */
function laneOfMailbox(state: TimelineState, mailbox: string, messageId?: string): LaneBuilder | undefined {
  if (messageId) {
    const id = messageId.replace(/^<|>$/g, "");
    const own = state.lanes.get(`${id}→${domainOf(mailbox)}`);
    if (own) return own;
  }
  let found: LaneBuilder | undefined;
  for (const lane of state.lanes.values()) if (lane.recipients.includes(mailbox.toLowerCase())) found = lane;
  return found;
}

const laneOfActor = ({ state, actorId }: Read<TraceEventName>): LaneBuilder | undefined =>
  actorId ? state.lanes.get(actorId) : undefined;

function machineStarted({ state, e, d, actorId }: Read<"machine.started">): void {
  if (!actorId) return;
  const parsed = parseDeliveryActorId(actorId);
  state.lanes.set(actorId, {
    id: actorId,
    messageId: d.messageId ?? parsed?.messageId ?? actorId,
    domain: d.domain ?? parsed?.domain ?? "",
    senderDomain: e.domain ?? "",
    recipients: (d.recipients ?? []).map((r) => r.toLowerCase()),
    startMs: e.timeMs,
    retries: [],
    pendingExchanges: [],
    pendingStatuses: [],
    attemptMarks: [],
    pendingResults: [],
    recipientResults: new Map(),
    recipientOutcomes: new Map(),
  });
}

function machineTransition(read: Read<"machine.transition">): void {
  const lane = laneOfActor(read);
  const to = read.d.to;
  if (lane && to !== undefined && FINAL_STATES.has(to)) lane.deliveryEndMs ??= read.e.timeMs;
}

function attemptStarted({ state, e, d }: Read<"attempt.started">): void {
  const id = d.deliveryId;
  const actor = id === undefined ? undefined : actorOfDelivery(id);
  if (actor && e.domain) state.currentActor.set(e.domain, actor);
}

function dnsAnswer({ state, d }: Read<"dns.answer">): void {
  const name = d.name;
  if (!name || d.kind !== "answer" || d.records === undefined) return;
  const domain = name.replace(/^_svc\./, "").toLowerCase();
  for (const r of d.records as (Data | null)[]) {
    const target = textOf(r?.["target"]);
    if (target && target !== ".") state.hostDomain.set(target.toLowerCase(), domain);
  }
}

function discoveryResolved({ state, d }: Read<"discovery.resolved">): void {
  const { origin, domain } = d;
  const host = origin ? hostOf(origin) : undefined;
  if (host && domain) state.hostDomain.set(host, domain.toLowerCase());
}

function httpRequest({ state, e, d }: Read<"http.request">): void {
  const x = d.exchangeId;
  const actor = e.domain ? state.currentActor.get(e.domain) : undefined;
  if (x && actor) {
    state.exchangeActor.set(x, actor);
    state.lanes.get(actor)?.pendingExchanges.push(x);
  }
}

function recipientResult({ state, e, d }: Read<"recipient.result">): void {
  const id = d.deliveryId;
  const actor = id === undefined ? undefined : actorOfDelivery(id);
  const status = d.status;
  const lane = actor ? state.lanes.get(actor) : undefined;
  if (!lane || !status) return;
  lane.pendingStatuses.push(status);
  lane.pendingResults.push({
    recipient: (d.recipient ?? "?").toLowerCase(),
    status,
    problem: d.problem?.replace(/^.*\//, ""),
    rule: d.rule,
    seq: e.seq,
  });
}

/** An attempt's judgement: its mark, coloured by how it ended; its recipients' results; what it ruled out. */
function attemptJudged(read: Read<"attempt.judged">): void {
  const { state, e, d, startMs } = read;
  const lane = laneOfActor(read);
  if (!lane) return;
  const n = d.attempt ?? lane.attemptMarks.length + 1;
  const started = d.startedAtMs ?? e.timeMs;
  const ended = d.endedAtMs ?? e.timeMs;
  if (n === 1) {
    const { fallbackWindowStartMs: ws, fallbackWindowEndMs: we, giveUpAtMs: g } = d;
    if (ws !== undefined) lane.fallbackWindowStartMs = ws;
    if (we !== undefined) lane.fallbackWindowEndMs = we;
    if (g !== undefined) lane.giveUpAtMs = g;
  }
  const cls = d.class;
  const outcome = attemptOutcome(cls, d.fallbackEligible === true, lane.pendingStatuses);
  const rule = d.rule;
  const answer =
    cls === "results"
      ? `results: ${lane.pendingStatuses.join(", ") || "none"}`
      : [d.status, d.problem?.replace(/^.*\//, ""), d.detail].filter((x) => x !== undefined).join(" ");
  const summary = `attempt ${n} at ${formatOffset(started, startMs)}: ${OUTCOME_TEXT[outcome]}${answer ? ` — ${answer}` : ""}${rule ? ` [${rule}]` : ""}`;
  lane.ruledOut ??= smtpRulingOfLane(e, n, started, lane.pendingResults, lane.pendingExchanges);
  lane.attemptMarks.push(state.marks.length);
  state.marks.push({
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
}

function timerSet(read: Read<"timer.set">): void {
  const { state, e, d } = read;
  const lane = laneOfActor(read);
  if (!lane) return;
  const retry = d.retry ?? lane.retries.length + 1;
  const from = d.attemptStartedAtMs ?? e.timeMs;
  const at = d.atMs ?? e.timeMs;
  const giveUp = d.giveUpAtMs ?? lane.giveUpAtMs;
  const base = d.baseDelayMs ?? 0;
  lane.retries.push({
    retry,
    attempt: retry + 1,
    attemptStartedAtMs: from,
    baseDelayMs: base,
    jitteredDelayMs: d.jitteredDelayMs ?? base,
    jitter: d.jitter === true,
    lowerBoundDelayMs: d.lowerBoundDelayMs,
    decidedBy: d.decidedBy ?? (d.reason === "retry-after" ? "retry-after" : "base-delay"),
    delayMs: at - from,
    atMs: at,
    happened: giveUp === undefined || at < giveUp,
    seq: e.seq,
  });
  const lowerBound = d.lowerBoundDelayMs;
  const boundFrom = d.lowerBoundFrom;
  state.connectors.push({
    lane: lane.id,
    retry,
    fromMs: from,
    toMs: at,
    decidedBy: d.decidedBy ?? "base-delay",
    happened: giveUp === undefined || at < giveUp,
    seq: e.seq,
    ...(base > 0 && base >= state.retryCapMs && { capMs: state.retryCapMs }),
    ...(lowerBound !== undefined && { lowerBoundDelayMs: lowerBound }),
    ...(boundFrom !== undefined && { lowerBoundFrom: boundFrom }),
  });
}

/** The draft's numbers the run follows (note 0065): the retry schedule's cap, for the arcs' words. */
function specConstants({ state, d }: Read<"spec.constants">): void {
  if (d.constants !== undefined) state.retryCapMs = constantsOf(d.constants).retryCapMs;
}

function smtpHandoff({ state, e, d, startMs }: Read<"smtp.handoff">): void {
  const lane = laneFor(state, d.messageId ?? "", d.recipients ?? []);
  const reason = d.reason ?? "";
  const accepted = d.accepted !== false;
  const rule = d.rule;
  if (lane) lane.deliveryEndMs ??= e.timeMs;
  state.marks.push({
    id: `h:${e.seq}`,
    kind: "handoff",
    lane: lane?.id,
    timeMs: e.timeMs,
    seq: e.seq,
    label: `SMTP ${reason}`,
    summary: `SMTP ${reason}: handed to SMTP at ${formatOffset(e.timeMs, startMs)}${accepted ? "" : " (relay refused)"}${rule ? ` [${rule}]` : ""}`,
    ...(rule !== undefined && { rule }),
    exchangeIds: [],
  });
}

function deliveryBounced({ state, e, d, startMs }: Read<"delivery.bounced">): void {
  const lane = laneFor(state, d.messageId ?? "", d.recipients ?? []);
  const rule = d.rule;
  if (lane) lane.deliveryEndMs ??= e.timeMs;
  state.marks.push({
    id: `b:${e.seq}`,
    kind: "bounce",
    lane: lane?.id,
    timeMs: e.timeMs,
    seq: e.seq,
    label: "bounced",
    summary: `bounced at ${formatOffset(e.timeMs, startMs)} after ${d.attempts ?? "?"} attempts${rule ? ` [${rule}]` : ""}`,
    ...(rule !== undefined && { rule }),
    exchangeIds: [],
  });
}

function recipientOutcome({ state, e, d }: Read<"recipient.outcome">): void {
  const messageId = d.messageId ?? "";
  const recipient = d.recipient ?? "";
  const lane = state.lanes.get(`${messageId}→${domainOf(recipient)}`);
  lane?.recipientOutcomes.set(recipient.toLowerCase(), {
    outcome: d.outcome ?? "?",
    timeMs: e.timeMs,
    rule: d.rule,
    seq: e.seq,
  });
}

function dsnSent({ state, e, d, startMs }: Read<"dsn.sent">): void {
  const messageId = d.messageId ?? "";
  const dsnId = d.dsnMessageId;
  const reason = d.reason ?? "";
  const recipients = d.recipients ?? [];
  const lane = laneFor(state, messageId, recipients) ?? laneOfMailbox(state, recipients[0] ?? "", messageId);
  if (dsnId && lane) state.dsnParent.set(dsnId, lane.id);
  if (dsnId) state.dsnOfMessage.set(dsnId, { messageId, reason });
  const rule = d.rule;
  state.marks.push({
    id: `d:${e.seq}`,
    kind: "dsn",
    lane: lane?.id,
    timeMs: e.timeMs,
    seq: e.seq,
    label: "DSN",
    summary: `DSN (${reason}) sent to ${d.to ?? "?"} at ${formatOffset(e.timeMs, startMs)}${rule ? ` [${rule}]` : ""}`,
    ...(rule !== undefined && { rule }),
    exchangeIds: [],
  });
}

/** The receiver's events the timeline marks. */
type ReceiverEventName =
  "mailbox.delivered" | "failure.after-acceptance" | "idempotency.replay" | "idempotency.conflict";

/** The fields of a receiver's event that place its mark. */
interface ReceiverFields {
  readonly exchangeId?: string;
  readonly mailbox?: string;
  readonly messageId?: string;
}

/** A receiver's event as a mark: `label`, and what happened in words (given its mailbox). */
function receiverMark(
  { state, e, startMs }: Read<ReceiverEventName>,
  d: ReceiverFields,
  label: string,
  what: (mailbox: string) => string,
): void {
  const x = d.exchangeId;
  const mailbox = d.mailbox ?? "";
  const actor = x ? state.exchangeActor.get(x) : undefined;
  const lane = (actor ? state.lanes.get(actor) : undefined) ?? laneOfMailbox(state, mailbox, d.messageId);
  state.marks.push({
    id: `r:${e.seq}`,
    kind: "receiver",
    lane: lane?.id,
    timeMs: e.timeMs,
    seq: e.seq,
    label,
    summary: `${e.domain ?? "receiver"}: ${what(mailbox)} at ${formatOffset(e.timeMs, startMs)}`,
    exchangeIds: x ? [x] : [],
  });
}

function faultWindow({ state, e, d }: Read<"fault.window">): void {
  state.faults.push({
    id: d.id ?? String(e.seq),
    layer: d.layer ?? "network",
    kind: d.kind ?? "fault",
    scope: d.scope ?? {},
    fromMs: d.fromMs ?? e.timeMs,
    untilMs: d.untilMs ?? undefined,
  });
}

function dnsChanged({ state, e, d }: Read<"dns.changed">): void {
  state.dnsChanges.push({ name: d.name ?? "", seq: e.seq, timeMs: e.timeMs, gone: d.records === null });
}

/** The reader of each event name the timeline draws from, keyed by the catalogue's names. */
const READERS: { readonly [N in TraceEventName]?: (read: Read<N>) => void } = {
  "machine.started": machineStarted,
  "machine.transition": machineTransition,
  "attempt.started": attemptStarted,
  "dns.answer": dnsAnswer,
  "discovery.resolved": discoveryResolved,
  "http.request": httpRequest,
  "recipient.result": recipientResult,
  "attempt.judged": attemptJudged,
  "timer.set": timerSet,
  "spec.constants": specConstants,
  "smtp.handoff": smtpHandoff,
  "delivery.bounced": deliveryBounced,
  "recipient.outcome": recipientOutcome,
  "dsn.sent": dsnSent,
  "mailbox.delivered": (read) => receiverMark(read, read.d, "stored", (mailbox) => `stored in ${mailbox}`),
  "failure.after-acceptance": (read) =>
    receiverMark(
      read,
      read.d,
      "failure",
      (mailbox) => `failure after acceptance at ${mailbox} (${read.d.status ?? ""})`,
    ),
  "idempotency.replay": (read) => receiverMark(read, read.d, "replay", () => "idempotent replay of a stored response"),
  "idempotency.conflict": (read) => receiverMark(read, read.d, "conflict", () => "idempotency key conflict"),
  "fault.window": faultWindow,
  "dns.changed": dnsChanged,
};

/** Reads `events` into `state`: lanes, marks, connectors, faults and DNS changes so far. */
export function readTimelineEvents(state: TimelineState, events: readonly RecordedEvent[], startMs: number): void {
  for (const e of events) {
    state.endMs = Math.max(state.endMs, e.timeMs);
    // Any event that names a delivery actor makes it the sending domain's current one.
    const actorId = textOf(e.data?.["deliveryActor"]);
    if (actorId && e.domain) state.currentActor.set(e.domain, actorId);
    if (!isTraceEventName(e.name)) continue;
    // One reader per name: the name and the data read for it go together (TypeScript cannot follow that here).
    const reader = READERS[e.name] as ((read: Read<TraceEventName>) => void) | undefined;
    reader?.({ state, e, d: dataOf(e, e.name) ?? {}, actorId, startMs });
  }
}

/** A lane of the timeline from what was read of its delivery. */
function laneOf(state: TimelineState, b: LaneBuilder, labels: ReadonlyMap<string, string>): Lane {
  const dsn = state.dsnOfMessage.get(b.messageId);
  const parent = state.dsnParent.get(b.messageId);
  const ruledOut = laneRuledOut(b);
  return {
    id: b.id,
    messageId: b.messageId,
    domain: b.domain,
    senderDomain: b.senderDomain,
    recipients: b.recipients,
    kind: dsn ? "dsn" : "message",
    ...(parent !== undefined && { parent }),
    label: dsn
      ? `DSN of ${shortId(dsn.messageId, labels)} → ${b.domain}`
      : `${shortId(b.messageId, labels)} → ${b.domain}`,
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
}

/** The lanes in the order the actors started, each message's DSN lanes right after it. */
function orderedLanes(state: TimelineState, labels: ReadonlyMap<string, string>): Lane[] {
  const { lanes, dsnParent } = state;
  const built = [...lanes.values()];
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
    ordered.push(laneOf(state, b, labels));
    for (const c of children.get(b.id) ?? []) place(c);
  };
  for (const b of built) if (!dsnParent.has(b.messageId) || !lanes.has(dsnParent.get(b.messageId) ?? "")) place(b);
  for (const b of built) place(b);
  return ordered;
}

/** The lanes of each recipient domain, and those of the domains a name falls under (itself and its parents). */
function lanesByDomain(ordered: readonly Lane[]) {
  const lanesOfDomain = new Map<string, Lane[]>();
  for (const lane of ordered) {
    const list = lanesOfDomain.get(lane.domain);
    if (list) list.push(lane);
    else lanesOfDomain.set(lane.domain, [lane]);
  }
  const lanesUnder = (name: string): Lane[] => {
    const out: Lane[] = [];
    const parts = name.split(".");
    for (let i = 0; i < parts.length; i++) pushAll(out, lanesOfDomain.get(parts.slice(i).join(".")) ?? []);
    return out;
  };
  return { lanesOfDomain, lanesUnder };
}

/** Each fault's band on the lanes of the hosts or names it hit (all lanes when it names neither). */
function faultBands(state: TimelineState, ordered: readonly Lane[]): Band[] {
  const { lanesOfDomain, lanesUnder } = lanesByDomain(ordered);
  const bands: Band[] = [];
  for (const f of state.faults) {
    const host = textOf(f.scope["host"])?.toLowerCase();
    const name = textOf(f.scope["name"])?.toLowerCase();
    const source = textOf(f.scope["source"])?.toLowerCase();
    const hit =
      f.layer === "dns"
        ? name === undefined
          ? ordered
          : lanesUnder(name)
        : host === undefined
          ? ordered
          : [...new Set([...(lanesOfDomain.get(state.hostDomain.get(host) ?? "") ?? []), ...lanesUnder(host)])];
    for (const lane of hit) {
      if (source !== undefined && source !== lane.senderDomain) continue;
      bands.push({ lane: lane.id, kind: "fault", fromMs: f.fromMs, untilMs: f.untilMs, label: `${f.id} (${f.kind})` });
    }
  }
  return bands;
}

/** Each DNS change's mark on the lanes of its domain (or of no lane, when none delivers there). */
function dnsMarks(state: TimelineState, ordered: readonly Lane[], startMs: number): Mark[] {
  const { lanesOfDomain } = lanesByDomain(ordered);
  const marks: Mark[] = [];
  for (const c of state.dnsChanges) {
    const domain = c.name.replace(/^_svc\./, "");
    const targets = [
      ...new Set([
        ...(lanesOfDomain.get(domain) ?? []),
        ...(lanesOfDomain.get(state.hostDomain.get(c.name) ?? "") ?? []),
      ]),
    ];
    for (const lane of targets.length ? targets : [undefined])
      marks.push({
        id: `n:${c.seq}:${lane?.id ?? ""}`,
        kind: "dns",
        lane: lane?.id,
        timeMs: c.timeMs,
        seq: c.seq,
        label: "DNS",
        summary: `DNS: ${c.name} ${c.gone ? "removed" : "changed"} at ${formatOffset(c.timeMs, startMs)}`,
        exchangeIds: [],
      });
  }
  return marks;
}

/** The timeline of what `state` read: lanes in order, bands, DNS marks, everything sorted. */
export function timelineOf(state: TimelineState, startMs: number, labels: ReadonlyMap<string, string>): Timeline {
  const ordered = orderedLanes(state, labels);
  // The marks so far, and those added here: the state's own list goes on growing.
  const marks = [...state.marks];
  const bands: Band[] = [];
  for (const lane of state.lanes.values()) {
    const mark = ruledOutMark(lane, startMs);
    if (mark) marks.push(mark);
    const band = fallbackBand(lane, startMs);
    if (band) bands.push(band);
  }
  pushAll(bands, faultBands(state, ordered));
  pushAll(marks, dnsMarks(state, ordered, startMs));
  marks.sort((a, b) => a.timeMs - b.timeMs || a.seq - b.seq);
  return { startMs, endMs: state.endMs, lanes: ordered, marks, connectors: [...state.connectors], bands };
}
