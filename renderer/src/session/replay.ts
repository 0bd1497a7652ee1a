/**
 * Plays back a trace that is already whole, answering the session protocol
 * (app/sim/sessionProtocol.ts) as a live session would: events in batches at
 * a speed on the virtual clock, pause, step, run to a time, finish. It lets
 * the app play a run where the worker answers only the one-shot `run`
 * request, computing the whole trace first; it is pure apart from the ticker,
 * which tests replace.
 */
import { reproduceCommand } from "../../../app/trace/exportMarkdown.ts";
import type { RecordedEvent, Trace } from "../../../app/trace/schema.ts";
import { parseScenarioText, resolveReadings } from "../../../app/sim/scenario.ts";
import { receiversOfRun } from "../../../app/sim/receivers.ts";
import {
  refusal,
  type PlaybackSpeed,
  type ReceiverOfRun,
  type SessionMessage,
  type SessionProgress,
  type SessionResult,
  type SessionSummary,
} from "../../../app/sim/sessionProtocol.ts";

/** Wall time and timers, replaceable in tests. */
export interface Ticker {
  now(): number;
  /** Calls `fn` after `ms`; returns a function that cancels it. */
  schedule(fn: () => void, ms: number): () => void;
}

export const realTicker: Ticker = {
  now: () => performance.now(),
  schedule: (fn, ms) => {
    const id = setTimeout(fn, ms);
    return () => clearTimeout(id);
  },
};

/** Wall ms between batches: about one animation frame. */
export const FRAME_MS = 16;
/** Events per batch at full speed, so that the UI stays responsive. */
export const MAX_BATCH = 4000;

/** What the summary of a session says, read off a whole trace. */
export function summaryFromTrace(trace: Trace, description = ""): SessionSummary {
  const domains = new Map<string, boolean>();
  const messages: SessionSummary["messages"][number][] = [];
  for (const e of trace.events) {
    if (e.domain !== undefined && !domains.has(e.domain)) domains.set(e.domain, false);
    if (e.name.startsWith("receiver.") && e.domain !== undefined) domains.set(e.domain, true);
    const d = e.data ?? {};
    if (e.name === "message.submitted" && d["from"] !== null) {
      const messageId = String(d["messageId"] ?? "");
      messages.push({
        id: messageId.includes("@") ? messageId.slice(0, messageId.indexOf("@")) : messageId,
        messageId,
        atMs: e.timeMs,
        from: typeof d["from"] === "string" ? d["from"] : null,
        to: Array.isArray(d["to"]) ? d["to"].map(String) : [],
        senderDomain: e.domain ?? "",
      });
    }
  }
  const last = trace.events.at(-1)?.timeMs ?? trace.startedAtMs;
  return {
    name: trace.scenario.name,
    description,
    ...(trace.scenario.file !== undefined && { file: trace.scenario.file }),
    seed: trace.seed,
    readings: trace.readings,
    startMs: trace.startedAtMs,
    horizonMs: last,
    // Without `receiverAt`: the receivers of a trace are read from its scenario's text only when an
    // exchange is inspected (`receiversOfTrace`), not while the trace opens.
    domains: [...domains].map(([name, receiver]) => ({ name, receiver })),
    messages,
    faults: [],
  };
}

/**
 * The receivers of the run, from the scenario's text the trace carries and the readings it ran under
 * (built as the world built them); none when the trace has no text, or the text no longer parses.
 */
export function receiversOfTrace(trace: Pick<Trace, "scenario" | "readings">): ReadonlyMap<string, ReceiverOfRun> {
  const source = trace.scenario.source;
  if (source === undefined) return new Map();
  const parsed = parseScenarioText(source, trace.scenario.file);
  const readings = resolveReadings(Object.entries(trace.readings));
  return parsed.ok && readings.ok ? receiversOfRun(parsed.scenario, readings.readings) : new Map();
}

/** The result a finished session reports, for a whole trace and its run's verdict. */
export function resultFromTrace(
  trace: Trace,
  run: { readonly hash: string; readonly passed: boolean; readonly complete: boolean; readonly error?: string },
): SessionResult {
  const { events, ...head } = trace;
  return {
    passed: run.passed,
    complete: run.complete,
    endMs: events.at(-1)?.timeMs ?? trace.startedAtMs,
    invariants: trace.invariants ?? [],
    expectations: trace.expectations ?? [],
    ...(run.error !== undefined && { error: run.error }),
    hash: run.hash,
    reproduce: reproduceCommand(trace),
    trace: head,
  };
}

type PlayerState = "ready" | "playing" | "paused" | "finished" | "cancelled";

/**
 * One session over a whole trace. `post` receives the session's messages;
 * `isStepStop` says which events a step stops after (by default every one).
 */
export class TracePlayer {
  private sent = 0;
  private playheadMs: number;
  /** The speed of play; a runTo or a finish runs as fast as possible and leaves it as it was. */
  private speed: PlaybackSpeed = 1;
  private finishing = false;
  private state: PlayerState = "ready";
  private runToMs: number | undefined;
  private cancelTimer: (() => void) | undefined;
  private lastWall = 0;
  private readonly events: readonly RecordedEvent[];

  private readonly result: SessionResult;
  private readonly post: (message: SessionMessage) => void;
  private readonly ticker: Ticker;
  private readonly isStepStop: (event: RecordedEvent) => boolean;

  constructor(
    trace: Trace,
    result: SessionResult,
    post: (message: SessionMessage) => void,
    ticker: Ticker = realTicker,
    isStepStop: (event: RecordedEvent) => boolean = () => true,
  ) {
    this.result = result;
    this.post = post;
    this.ticker = ticker;
    this.isStepStop = isStepStop;
    this.events = trace.events;
    this.playheadMs = trace.startedAtMs;
  }

  /** Obeys one command of the protocol (all but `start`, which made this player). */
  handle(command: { readonly type: string; readonly speed?: PlaybackSpeed; readonly timeMs?: number }): void {
    if (this.state === "cancelled") return;
    switch (command.type) {
      case "play":
      case "resume":
        if (this.state === "finished") return this.refuse(command.type, "the run is over; restart it to run it again");
        if (this.state === "playing") return this.refuse(command.type, "the run is playing already");
        if (command.speed !== undefined) this.speed = command.speed;
        this.runToMs = undefined;
        return this.start();
      case "setSpeed":
        if (command.speed !== undefined) this.speed = command.speed;
        return;
      case "pause":
        if (this.state !== "playing") return this.refuse("pause", "nothing is playing");
        this.stop("paused");
        return this.post({ type: "paused", progress: this.progress() });
      case "step":
        if (this.state === "playing") return this.refuse("step", "the run is playing; pause it first");
        if (this.state === "finished") return this.refuse("step", "the run is over; restart it to run it again");
        return this.step();
      case "runTo": {
        const t = command.timeMs;
        if (typeof t !== "number" || !Number.isFinite(t)) return this.refuse("runTo", "no time was given");
        if (t < this.playheadMs) return this.rewind(t);
        if (this.state === "finished") return this.refuse("runTo", "the run is over at that time already");
        this.runToMs = t;
        return this.start();
      }
      case "finish":
        if (this.state === "finished") return this.refuse("finish", "the run is over already");
        this.runToMs = undefined;
        this.finishing = true;
        return this.start();
      case "cancel":
        this.stop("cancelled");
        return this.post({ type: "cancelled" });
      default:
        return this.refuse(command.type, "this session knows no such command");
    }
  }

  private refuse(command: string, why: string): void {
    this.post(refusal(command, why));
  }

  /**
   * A jump back: the player keeps the events up to `timeMs` — those a run from the start to that time
   * gives (the trace is whole and in time order) — and pauses there.
   */
  private rewind(timeMs: number): void {
    this.stop("paused");
    this.runToMs = undefined;
    let kept = 0;
    while (kept < this.sent && (this.events[kept]?.timeMs ?? Infinity) <= timeMs) kept += 1;
    this.sent = kept;
    this.playheadMs = timeMs;
    this.post({ type: "rewound", progress: this.progress() });
    this.post({ type: "paused", progress: this.progress() });
  }

  private progress(): SessionProgress {
    const next = this.events[this.sent];
    const nowMs = this.sent > 0 ? (this.events[this.sent - 1]?.timeMs ?? this.playheadMs) : this.playheadMs;
    return {
      nowMs,
      playheadMs: Math.max(this.playheadMs, nowMs),
      events: this.sent,
      pendingEvents: this.events.length - this.sent,
      ...(next !== undefined && { nextEventAtMs: next.timeMs }),
    };
  }

  /** How fast the events go now: as fast as possible for a runTo or a finish, else the speed of play. */
  private pace(): PlaybackSpeed {
    return this.runToMs !== undefined || this.finishing ? "max" : this.speed;
  }

  private start(): void {
    this.cancelTimer?.();
    this.state = "playing";
    this.lastWall = this.ticker.now();
    this.cancelTimer = this.ticker.schedule(() => this.tick(), 0);
  }

  private stop(state: PlayerState): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.state = state;
    if (state !== "playing") this.finishing = false;
  }

  private take(until: number, max: number): RecordedEvent[] {
    const out: RecordedEvent[] = [];
    while (this.sent < this.events.length && out.length < max) {
      const e = this.events[this.sent];
      if (e === undefined || e.timeMs > until) break;
      out.push(e);
      this.sent += 1;
    }
    return out;
  }

  private tick(): void {
    if (this.state !== "playing") return;
    const wall = this.ticker.now();
    const dt = Math.max(0, wall - this.lastWall);
    this.lastWall = wall;
    const cap = this.runToMs ?? Infinity;
    let batch: RecordedEvent[];
    const speed = this.pace();
    if (speed === "max") {
      batch = this.take(cap, MAX_BATCH);
      const last = batch.at(-1);
      if (last !== undefined) this.playheadMs = Math.max(this.playheadMs, last.timeMs);
      if (this.sent < this.events.length && (this.events[this.sent]?.timeMs ?? Infinity) > cap) this.playheadMs = cap;
    } else {
      const target = Math.min(cap, this.playheadMs + dt * speed);
      batch = this.take(target, Infinity);
      this.playheadMs = target;
    }
    if (batch.length > 0) this.post({ type: "events", events: batch, progress: this.progress() });
    if (this.sent >= this.events.length) {
      this.stop("finished");
      this.post({ type: "finished", progress: this.progress(), result: this.result });
    } else if (this.runToMs !== undefined && this.playheadMs >= this.runToMs) {
      this.runToMs = undefined;
      this.stop("paused");
      this.post({ type: "paused", progress: this.progress() });
    } else {
      if (batch.length === 0) this.post({ type: "progress", progress: this.progress() });
      this.cancelTimer = this.ticker.schedule(() => this.tick(), FRAME_MS);
    }
  }

  private step(): void {
    const batch: RecordedEvent[] = [];
    while (this.sent < this.events.length) {
      const e = this.events[this.sent];
      if (e === undefined) break;
      batch.push(e);
      this.sent += 1;
      if (this.isStepStop(e)) break;
    }
    const last = batch.at(-1);
    if (last !== undefined) this.playheadMs = Math.max(this.playheadMs, last.timeMs);
    this.state = "paused";
    if (batch.length > 0) this.post({ type: "events", events: batch, progress: this.progress() });
    this.post({ type: "stepped", progress: this.progress(), ...(last !== undefined && { label: last.name }) });
    if (this.sent >= this.events.length) {
      this.stop("finished");
      this.post({ type: "finished", progress: this.progress(), result: this.result });
    }
  }
}
