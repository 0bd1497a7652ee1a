/**
 * The simulator's event loop: a discrete-event scheduler over a virtual clock
 * (ARCHITECTURE.md "Determinism").
 *
 * Events are ordered by (virtual time, sequence number): two events at the
 * same time run in the order they were scheduled. Time jumps from event to
 * event, so five quiet days cost nothing. Each event's work — promises,
 * WebCrypto, actor steps — is finished before the next event starts.
 *
 * "Finished" needs care. WebCrypto and body reads settle on real host
 * macrotasks, so draining microtasks is not enough. The scheduler therefore
 * keeps an explicit set of outstanding work: the simulated ports put every
 * host-async operation they start through {@link Scheduler.track} (body
 * reads, digests, crypto). After an event it loops: yield one real host
 * macrotask (which also drains every microtask queued so far), wait for the
 * tracked set to empty, and stop only after a yield in which nothing new
 * happened — no work tracked, no event scheduled or cancelled, no
 * {@link Scheduler.touch}.
 *
 * Track only work that settles without virtual time passing. A promise that
 * waits on the virtual clock (a {@link Scheduler.sleep}, a simulated Fetch or
 * Resolver with latency) settles only when a later event runs, so tracking it
 * would stall the loop; a real-time watchdog turns such a stall into an error
 * that says so.
 *
 * Every WebCrypto operation of the core goes through app/protocol/webCrypto.ts,
 * and the scheduler tracks each one started while an event runs or settles.
 * Other host work nobody tracked is covered only by the yield: `setTimeout(0)` gives it at least a
 * millisecond in Node and four in a busy browser worker, far more than an
 * Ed25519 signature or a digest of a message takes, and its completion counts
 * as activity once it schedules or tracks anything. That is a margin, not a
 * guarantee; tracking is the guarantee.
 *
 * The host's real timers are used in two places only, never to read time:
 * to yield a macrotask between settling rounds, and to pace playback in
 * {@link Scheduler.runRealtime}. Both are injectable, so tests can use fake
 * timers.
 */
import { errorWithName } from "../errorMessage.ts";
import { observeWebCrypto } from "../protocol/webCrypto.ts";
import { formatOffset } from "../trace/offset.ts";
import type { Clock } from "../ports.ts";

/** A WebCrypto operation whose result waits for its batch (see `#holdWebCrypto`): how it ended, once it has. */
interface HeldOperation {
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  fulfilled: boolean;
  value: unknown;
}

/** 2026-01-01T00:00:00Z, the default start of a run. */
export const DEFAULT_START_MS = Date.UTC(2026, 0, 1);

/** The host timer used to pace playback. Never used to read time. */
export interface HostTimers {
  setTimeout(fn: () => void, delayMs: number): unknown;
}

// Captured at load, so that a test installing fake timers later does not
// freeze the settling yields and the watchdog, which must be real.
const realSetTimeout = globalThis.setTimeout.bind(globalThis);
const realClearTimeout = globalThis.clearTimeout.bind(globalThis);
const realHost: HostTimers = { setTimeout: (fn, delayMs) => realSetTimeout(fn, delayMs) };

/** One real macrotask: `setTimeout(0)` of the host. Every microtask queued before it has run when it resolves. */
export function hostMacrotask(): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, 0));
}

/**
 * One real macrotask through a MessageChannel: no 1 ms (Node) or 4 ms (nested
 * browser timers) clamp, so a run costs microseconds per event. It gives host
 * work less time than `setTimeout(0)` does, so use it only when every piece of
 * host work (crypto included) goes through {@link Scheduler.track}.
 */
export function messageChannelMacrotask(): Promise<void> {
  return new Promise((resolve) => messageChannelTurn(resolve));
}

/**
 * {@link messageChannelMacrotask} without its promise: `then` is called in the turn itself, after every
 * microtask queued before it. The world's scheduler settles each event on ~3 of these turns; a promise and
 * an `await` per turn were a fifth of what the scheduler allocated (decision 0240).
 */
function messageChannelTurn(then: () => void): void {
  const channel = (turns.channel ??= openTurnChannel());
  turns.waiting.push(then);
  turns.posted++;
  channel.port2.postMessage(undefined);
}

/**
 * One MessageChannel serves every {@link messageChannelMacrotask} (opening one
 * per turn costs ten times the turn): each message posted resolves the oldest
 * waiter, in order. An open port keeps Node's event loop alive, so the channel
 * is closed once a real timer finds that no turn was asked for since it was
 * armed, and opened again on the next turn.
 */
const turns: {
  channel: MessageChannel | undefined;
  readonly waiting: (() => void)[];
  /** Turns asked for, ever: the idle check compares it with the count it saw. */
  posted: number;
  idleTimer: boolean;
} = { channel: undefined, waiting: [], posted: 0, idleTimer: false };

function openTurnChannel(): MessageChannel {
  const channel = new MessageChannel();
  const onTurn = (): void => {
    turns.waiting.shift()?.();
    if (!turns.idleTimer) armIdleClose(turns.posted);
  };
  // Node's port also takes a listener in its own style, called with the message's data alone: no
  // `MessageEvent` (and its time stamp) made for each turn, ~0.16 µs of a turn's ~0.6 (decision 0260).
  // A web port has `onmessage` only; either way the turn is the same message on the same channel.
  const port = channel.port1 as MessagePort & { on?: (type: "message", listener: () => void) => unknown };
  if (typeof port.on === "function") port.on("message", onTurn);
  else port.onmessage = onTurn;
  return channel;
}

/**
 * Closes the turn channel now when no turn is waiting: a run that ended lets
 * the process exit at once instead of after the idle check (50–100 ms, all
 * of a short `mailscope run` after its last line). The next turn opens it again.
 */
function closeIdleTurnChannel(): void {
  if (turns.waiting.length > 0 || turns.channel === undefined) return;
  turns.channel.port1.close();
  turns.channel = undefined;
}

function armIdleClose(seen: number): void {
  turns.idleTimer = true;
  const timer: unknown = realSetTimeout(() => {
    turns.idleTimer = false;
    if (turns.posted !== seen || turns.waiting.length > 0) {
      armIdleClose(turns.posted);
      return;
    }
    turns.channel?.port1.close();
    turns.channel = undefined;
  }, 50);
  // The open port keeps a host's event loop alive while turns run; this check need not (Node's timers have unref).
  (timer as { unref?: () => void }).unref?.();
}

/** What {@link createScheduler} may be told. */
export interface SchedulerOptions {
  /** Virtual time at the start, ms since the epoch. Default {@link DEFAULT_START_MS}. */
  readonly startMs?: number;
  /** Host timers that pace playback. Default: the real ones. */
  readonly host?: HostTimers;
  /** Yields one host macrotask while settling an event. Default {@link hostMacrotask}; see {@link messageChannelMacrotask}. */
  readonly yieldToHost?: () => Promise<void>;
  /** Consecutive quiet yields that end the settling of an event. Default 1. */
  readonly quietYields?: number;
  /** Real ms that tracked work may take before the run fails as stalled. Default 30 000. */
  readonly stallMs?: number;
}

/** Why a run stopped. */
export type RunStop = "idle" | "until" | "paused" | "limit";

/** The outcome of {@link Scheduler.run} and friends. */
export interface RunResult {
  /** `idle`: no events left; `until`: reached the time asked for; `paused`: {@link Scheduler.pause}; `limit`: `maxEvents` ran. */
  readonly reason: RunStop;
  /** Virtual time when it stopped. */
  readonly nowMs: number;
  /** Events run by this call. */
  readonly events: number;
}

/** How far to run. */
export interface RunOptions {
  /** Run every event at or before this virtual time, then set the clock to it. */
  readonly untilMs?: number;
  /** Stop after this many events. */
  readonly maxEvents?: number;
}

/** One event as {@link Scheduler.step} reports it. */
export interface StepResult {
  readonly id: number;
  readonly timeMs: number;
  readonly label: string;
}

/** Where playback is, for a progress bar or a clock display. */
export interface PlaybackProgress {
  /** The virtual clock: the time of the last event run (or the `untilMs` reached). */
  readonly nowMs: number;
  /** Where the playhead is shown, between events while waiting real time. Never behind `nowMs`. */
  readonly playheadMs: number;
  /** Events run since the scheduler was created. */
  readonly executedEvents: number;
  readonly pendingEvents: number;
  readonly nextEventAtMs: number | undefined;
}

/** Options of {@link Scheduler.runRealtime}. */
export interface RealtimeOptions {
  /** Stop at this virtual time, as {@link RunOptions.untilMs}. */
  readonly untilMs?: number;
  /** Longest real wait between two progress reports, ms. Default 50. */
  readonly frameMs?: number;
}

/** The event loop of one simulation. */
export interface Scheduler {
  /** The virtual clock: `now()` is virtual time, `setTimeout` schedules an event. Hand it to XState as `clock`. */
  readonly clock: Clock;
  readonly startMs: number;
  /** Virtual time, ms since the epoch. */
  now(): number;
  /**
   * Schedules `fn` at virtual time `timeMs` (a time in the past means now). If
   * `fn` returns a promise, its rejection fails the run; it is not awaited,
   * since it may wait on virtual time: track its host work where it starts.
   */
  at(timeMs: number, fn: () => unknown, label?: string): number;
  /** Schedules `fn` `delayMs` after now. */
  after(delayMs: number, fn: () => unknown, label?: string): number;
  /** Cancels a scheduled event; false when it already ran or never existed. */
  cancel(id: unknown): boolean;
  /** Resolves when the virtual clock reaches now + `delayMs` (an event of its own). Do not {@link track} it. */
  sleep(delayMs: number, label?: string): Promise<void>;
  /** Registers host-async work that settles without virtual time passing; the next event waits for it. Returns `work`. */
  track<T>(work: Promise<T>, label?: string): Promise<T>;
  /** Tells the scheduler something happened, so settling yields once more (for example, on every trace event). */
  touch(): void;
  /**
   * Fails the run with `error`, as a failing event would: the event running now (or the next one to run)
   * ends by throwing it, whichever way the run is driven (the world's event budget).
   */
  fail(error: Error): void;
  readonly pendingEvents: number;
  readonly executedEvents: number;
  nextEventAtMs(): number | undefined;
  /** `running` while a run is in progress; `paused` after {@link pause} stopped one. */
  readonly state: "idle" | "running" | "paused";
  /** Runs events at full speed until none are left, `untilMs` is reached, or {@link pause}. */
  run(options?: RunOptions): Promise<RunResult>;
  /** `run({ untilMs })`. */
  runUntil(timeMs: number): Promise<RunResult>;
  /** Runs exactly the next event; `undefined` when there is none. */
  step(): Promise<StepResult | undefined>;
  /**
   * Plays back in real time scaled by `factor` (virtual ms per real ms: 1 is
   * real time, 60 a minute per second, `Infinity` as fast as possible),
   * waiting on the host timers between events and reporting progress.
   */
  runRealtime(
    factor: number,
    onProgress?: (progress: PlaybackProgress) => void,
    options?: RealtimeOptions,
  ): Promise<RunResult>;
  /** Changes the playback factor, also in the middle of a wait. */
  setRealtimeFactor(factor: number): void;
  /** Stops the current run after the event in progress (or in the middle of a playback wait). */
  pause(): void;
  /** Continues a paused run the way it was started. */
  resume(): Promise<RunResult>;
}

/**
 * A failure inside the simulation: an event threw, or tracked work stalled. Says when and where: the
 * time as an offset from the run's start (`+2:00:00`, as the app and `mailscope run` write times) when
 * `startMs` is given.
 */
export class SimulationError extends Error {
  readonly timeMs: number;
  readonly eventLabel: string;
  constructor(message: string, timeMs: number, eventLabel: string, cause?: unknown, startMs?: number) {
    const at = startMs !== undefined ? formatOffset(timeMs, startMs) : new Date(timeMs).toISOString();
    super(`${message} (event "${eventLabel}" at ${at})`, { cause });
    this.name = "SimulationError";
    this.timeMs = timeMs;
    this.eventLabel = eventLabel;
  }
}

interface QueuedEvent {
  readonly id: number;
  readonly timeMs: number;
  readonly seq: number;
  /** What the event runs; once it is cancelled, nothing (see {@link EventScheduler.cancel}). */
  fn: () => unknown;
  readonly label: string;
  cancelled: boolean;
}

/** A cancelled event's work: it is never run. */
const cancelledWork = (): undefined => undefined;

type LastRun =
  | { readonly mode: "run"; readonly options: RunOptions }
  | {
      readonly mode: "realtime";
      readonly onProgress: ((progress: PlaybackProgress) => void) | undefined;
      readonly options: RealtimeOptions;
    };

/** A new scheduler at `options.startMs` with no events. */
export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  return new EventScheduler(options);
}

class EventScheduler implements Scheduler {
  readonly startMs: number;
  readonly clock: Clock;
  #nowMs: number;
  #playheadMs: number;
  #seq = 0;
  #executed = 0;
  #pending = 0;
  readonly #heap: QueuedEvent[] = [];
  readonly #byId = new Map<number, QueuedEvent>();
  readonly #tracked = new Map<Promise<unknown>, string>();
  /** WebCrypto operations of this event, held until all of them have finished. */
  readonly #heldCrypto: HeldOperation[] = [];
  #cryptoOutstanding = 0;
  /** Settles the tracked work that stands for the batch of held operations, once they are released. */
  #releaseBatch: (() => void) | undefined;
  #activity = false;
  #failure: Error | undefined;
  #state: "idle" | "running" | "paused" = "idle";
  #pauseRequested = false;
  #factor = 1;
  #last: LastRun | undefined;
  readonly #host: HostTimers;
  readonly #yield: () => Promise<void>;
  readonly #quietYields: number;
  readonly #stallMs: number;

  constructor(options: SchedulerOptions) {
    this.startMs = options.startMs ?? DEFAULT_START_MS;
    this.#nowMs = this.startMs;
    this.#playheadMs = this.startMs;
    this.#host = options.host ?? realHost;
    this.#yield = options.yieldToHost ?? hostMacrotask;
    this.#quietYields = Math.max(1, options.quietYields ?? 1);
    this.#stallMs = options.stallMs ?? 30_000;
    this.clock = {
      now: () => this.#nowMs,
      setTimeout: (fn, timeoutMs) => this.after(timeoutMs, fn, "timer"),
      clearTimeout: (id) => {
        this.cancel(id);
      },
    };
  }

  now(): number {
    return this.#nowMs;
  }

  get state(): "idle" | "running" | "paused" {
    return this.#state;
  }

  get pendingEvents(): number {
    return this.#pending;
  }

  get executedEvents(): number {
    return this.#executed;
  }

  at(timeMs: number, fn: () => unknown, label = "event"): number {
    const seq = ++this.#seq;
    const time = Number.isFinite(timeMs) ? Math.max(timeMs, this.#nowMs) : this.#nowMs;
    const event: QueuedEvent = { id: seq, timeMs: time, seq, fn, label, cancelled: false };
    heapPush(this.#heap, event);
    this.#byId.set(event.id, event);
    this.#pending++;
    this.#activity = true;
    return event.id;
  }

  after(delayMs: number, fn: () => unknown, label?: string): number {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    return this.at(this.#nowMs + delay, fn, label);
  }

  cancel(id: unknown): boolean {
    if (typeof id !== "number") return false;
    const event = this.#byId.get(id);
    if (event === undefined || event.cancelled) return false;
    event.cancelled = true;
    // The event stays in the heap until its time comes up (a retry's give-up timer: days), skipped then; what its
    // work holds (an XState timer's actor and system, a delivery's context and message) is let go of now.
    event.fn = cancelledWork;
    this.#byId.delete(id);
    this.#pending--;
    this.#activity = true;
    return true;
  }

  sleep(delayMs: number, label = "sleep"): Promise<void> {
    return new Promise((resolve) => {
      this.after(delayMs, resolve, label);
    });
  }

  track<T>(work: Promise<T>, label = "work"): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.#tracked.set(settled, label);
    this.#activity = true;
    void settled.then(() => {
      this.#tracked.delete(settled);
      this.#activity = true;
    });
    return work;
  }

  fail(error: Error): void {
    this.#activity = true;
    this.#failure ??= error;
  }

  touch(): void {
    this.#activity = true;
  }

  nextEventAtMs(): number | undefined {
    return this.#peek()?.timeMs;
  }

  // -------------------------------------------------------------------------
  // Running

  run(options: RunOptions = {}): Promise<RunResult> {
    try {
      this.#begin({ mode: "run", options });
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.#finish(this.#runLoop(options));
  }

  runUntil(timeMs: number): Promise<RunResult> {
    return this.run({ untilMs: timeMs });
  }

  async step(): Promise<StepResult | undefined> {
    if (this.#state === "running") throw new Error("the scheduler is already running");
    const before = this.#state;
    this.#state = "running";
    try {
      const event = this.#popNext();
      if (event === undefined) return undefined;
      await this.#execute(event);
      return { id: event.id, timeMs: event.timeMs, label: event.label };
    } finally {
      this.#state = before;
    }
  }

  runRealtime(
    factor: number,
    onProgress?: (progress: PlaybackProgress) => void,
    options: RealtimeOptions = {},
  ): Promise<RunResult> {
    try {
      this.setRealtimeFactor(factor);
      this.#begin({ mode: "realtime", onProgress, options });
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.#finish(this.#realtimeLoop(onProgress, options));
  }

  setRealtimeFactor(factor: number): void {
    if (!(factor > 0)) throw new RangeError(`a playback factor is > 0 (Infinity: as fast as possible), not ${factor}`);
    this.#factor = factor;
  }

  pause(): void {
    if (this.#state === "running") this.#pauseRequested = true;
  }

  resume(): Promise<RunResult> {
    const last = this.#last;
    if (this.#state !== "paused" || last === undefined) {
      return Promise.reject(new Error("resume() continues a paused run; nothing is paused"));
    }
    return last.mode === "run" ? this.run(last.options) : this.runRealtime(this.#factor, last.onProgress, last.options);
  }

  #begin(last: LastRun): void {
    if (this.#state === "running") throw new Error("the scheduler is already running");
    this.#state = "running";
    this.#pauseRequested = false;
    this.#last = last;
  }

  async #finish(loop: Promise<RunResult>): Promise<RunResult> {
    try {
      const result = await loop;
      this.#state = result.reason === "paused" ? "paused" : "idle";
      return result;
    } catch (error) {
      this.#state = "idle";
      throw error;
    } finally {
      this.#pauseRequested = false;
      closeIdleTurnChannel();
    }
  }

  /** Runs events one after the other on callbacks: one promise per run, none per event (decision 0240). */
  #runLoop(options: RunOptions): Promise<RunResult> {
    return new Promise<RunResult>((resolve, reject) => {
      let events = 0;
      const stop = (reason: RunStop): void => {
        resolve(this.#result(reason, events));
      };
      const loop = (): void => {
        for (;;) {
          if (this.#pauseRequested) return stop("paused");
          if (options.maxEvents !== undefined && events >= options.maxEvents) return stop("limit");
          const next = this.#peek();
          if (next === undefined || (options.untilMs !== undefined && next.timeMs > options.untilMs)) {
            if (options.untilMs === undefined) return stop("idle");
            this.#advanceTo(options.untilMs);
            return stop("until");
          }
          const event = this.#popNext();
          if (event !== undefined) return this.#executeThen(event, ran);
        }
      };
      const ran = (failure?: unknown): void => {
        if (failure !== undefined) {
          reject(failure as Error);
          return;
        }
        events++;
        try {
          loop();
        } catch (error) {
          reject(error as Error);
        }
      };
      loop();
    });
  }

  async #realtimeLoop(
    onProgress: ((progress: PlaybackProgress) => void) | undefined,
    options: RealtimeOptions,
  ): Promise<RunResult> {
    const frameMs = Math.max(1, options.frameMs ?? 50);
    const report = (): void => onProgress?.(this.#progress());
    let events = 0;
    for (;;) {
      if (this.#pauseRequested) return this.#result("paused", events);
      const next = this.#peek();
      const targetMs =
        next === undefined
          ? options.untilMs
          : options.untilMs !== undefined
            ? Math.min(next.timeMs, options.untilMs)
            : next.timeMs;
      if (targetMs === undefined) {
        report();
        return this.#result("idle", events);
      }
      // Wait real time for the gap, one frame at a time, re-reading the factor each frame.
      this.#playheadMs = Math.max(this.#playheadMs, this.#nowMs);
      const factor = this.#factor;
      if (this.#playheadMs < targetMs && Number.isFinite(factor)) {
        const realMs = Math.min(frameMs, (targetMs - this.#playheadMs) / factor);
        await this.#hostWait(realMs);
        this.#playheadMs = Math.min(targetMs, this.#playheadMs + realMs * factor);
        report();
        continue;
      }
      if (next === undefined || next.timeMs > targetMs) {
        // Reached untilMs with no event there.
        this.#advanceTo(targetMs);
        report();
        return this.#result("until", events);
      }
      const event = this.#popNext();
      if (event !== undefined) {
        await this.#execute(event);
        events++;
        report();
      }
    }
  }

  #hostWait(realMs: number): Promise<void> {
    return new Promise((resolve) => {
      this.#host.setTimeout(resolve, realMs);
    });
  }

  #progress(): PlaybackProgress {
    return {
      nowMs: this.#nowMs,
      playheadMs: Math.max(this.#playheadMs, this.#nowMs),
      executedEvents: this.#executed,
      pendingEvents: this.#pending,
      nextEventAtMs: this.nextEventAtMs(),
    };
  }

  #result(reason: RunStop, events: number): RunResult {
    return { reason, nowMs: this.#nowMs, events };
  }

  #advanceTo(timeMs: number): void {
    if (timeMs > this.#nowMs) this.#nowMs = timeMs;
    this.#playheadMs = Math.max(this.#playheadMs, this.#nowMs);
  }

  // -------------------------------------------------------------------------
  // One event

  /** {@link #executeThen} as a promise (a step, playback). */
  #execute(event: QueuedEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#executeThen(event, (failure) => {
        if (failure === undefined) resolve();
        else reject(failure as Error);
      });
    });
  }

  /**
   * Runs `event`, settles it, then calls `done` with the failure that ended it, if any. Driven by callbacks
   * from turn to turn (no promise or `await` per turn): the checks between turns run in the turn itself, where
   * an `await` ran them in a microtask after it, with nothing queued between the two (decision 0240).
   */
  #executeThen(event: QueuedEvent, done: (failure?: unknown) => void): void {
    this.#advanceTo(event.timeMs);
    this.#executed++;
    // Every WebCrypto operation the core starts while this event runs or settles
    // (signatures, digests, key imports: app/protocol/webCrypto.ts) is tracked work,
    // so the next event waits for it whatever the machine's speed.
    // WebCrypto results are held until every operation started so far has
    // finished, then released together in the order the operations started.
    // Host threads finish in any order, and a delivery released early would run
    // ahead of one whose result was still on its way; released in batches, the
    // interleaving depends only on the code, never on the machine's speed.
    const stopObserving = observeWebCrypto((operation) => this.#holdWebCrypto(operation));
    const settled = (error?: unknown): void => {
      stopObserving();
      const failure = error ?? this.#failure;
      if (error === undefined) this.#failure = undefined;
      done(failure);
    };
    try {
      this.#start(event);
      this.#settle(event, settled);
    } catch (error) {
      settled(error);
    }
  }

  #holdWebCrypto(operation: Promise<unknown>): Promise<unknown> {
    let entry!: HeldOperation;
    const held = new Promise<unknown>((resolve, reject) => {
      entry = { resolve, reject, fulfilled: false, value: undefined };
    });
    // The batch is tracked once, as one piece of work, rather than each of its operations.
    if (this.#heldCrypto.length === 0) {
      this.track(new Promise<void>((resolve) => (this.#releaseBatch = resolve)), "webcrypto");
    }
    this.#heldCrypto.push(entry);
    this.#cryptoOutstanding++;
    const settled = (): void => {
      if (--this.#cryptoOutstanding > 0) return;
      const batch = this.#heldCrypto.splice(0);
      const releaseBatch = this.#releaseBatch;
      this.#releaseBatch = undefined;
      for (const done of batch) {
        if (done.fulfilled) done.resolve(done.value);
        else done.reject(done.value);
      }
      releaseBatch?.();
    };
    operation.then(
      (value) => {
        entry.fulfilled = true;
        entry.value = value;
        settled();
      },
      (reason: unknown) => {
        entry.value = reason;
        settled();
      },
    );
    return held;
  }

  /** Calls the event's function; a failure, thrown or rejected, fails the run at the end of the event. */
  #start(event: QueuedEvent): void {
    try {
      const result = event.fn();
      // Not tracked: an async event may wait on virtual time (a sleep, a Fetch). Its
      // host work is tracked where it starts; its failure still fails the run.
      if (isPromiseLike(result)) {
        Promise.resolve(result).catch((error: unknown) => {
          this.#fail(error, event);
        });
      }
    } catch (error) {
      this.#fail(error, event);
    }
  }

  /** Records the first failure; the run stops with it at the end of the event being settled. */
  #fail(cause: unknown, event: QueuedEvent): void {
    this.#activity = true;
    this.#failure ??= new SimulationError(
      `the event failed: ${errorWithName(cause)}`,
      event.timeMs,
      event.label,
      cause,
      this.startMs,
    );
  }

  /**
   * Yields to the host until tracked work is done and a yield passes with nothing new happening, then calls
   * `done` (with the error that stopped it, if any). The world's turns ({@link messageChannelMacrotask}) are
   * taken without a promise; another `yieldToHost` is awaited through its promise.
   */
  #settle(event: QueuedEvent, done: (error?: unknown) => void): void {
    let quiet = 0;
    const fastTurn = this.#yield === messageChannelMacrotask;
    const next = (): void => {
      // Failed from outside (fail()): a loop in zero virtual time never settles, so the run ends now.
      if (this.#failure !== undefined) {
        done();
        return;
      }
      this.#activity = false;
      if (fastTurn) messageChannelTurn(afterTurn);
      else this.#yield().then(afterTurn, done);
    };
    const afterTurn = (): void => {
      if (this.#tracked.size > 0) {
        quiet = 0;
        this.#waitTracked(event).then(next, done);
        return;
      }
      if (this.#activity) quiet = 0;
      else if (++quiet >= this.#quietYields) {
        done();
        return;
      }
      next();
    };
    next();
  }

  async #waitTracked(event: QueuedEvent): Promise<void> {
    // The watchdog runs on the real host timer even when playback uses fake ones.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stalled = new Promise<"stalled">((resolve) => {
      timer = realSetTimeout(() => resolve("stalled"), this.#stallMs);
    });
    const outcome = await Promise.race([Promise.all([...this.#tracked.keys()]), stalled]);
    realClearTimeout(timer);
    if (outcome === "stalled") {
      const labels = [...new Set(this.#tracked.values())].join(", ");
      throw new SimulationError(
        `tracked work (${labels}) did not settle within ${this.#stallMs} ms of real time; ` +
          "is a tracked promise waiting on virtual time (a sleep, a simulated Fetch or Resolver)? Track only host work",
        event.timeMs,
        event.label,
        undefined,
        this.startMs,
      );
    }
  }

  #peek(): QueuedEvent | undefined {
    const heap = this.#heap;
    while (heap.length > 0 && heap[0]?.cancelled === true) heapPop(heap);
    return heap[0];
  }

  #popNext(): QueuedEvent | undefined {
    const event = this.#peek();
    if (event === undefined) return undefined;
    heapPop(this.#heap);
    this.#byId.delete(event.id);
    this.#pending--;
    return event;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

// ---------------------------------------------------------------------------
// A binary min-heap on (timeMs, seq).

function before(a: QueuedEvent, b: QueuedEvent): boolean {
  return a.timeMs < b.timeMs || (a.timeMs === b.timeMs && a.seq < b.seq);
}

function heapPush(heap: QueuedEvent[], event: QueuedEvent): void {
  heap.push(event);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const p = heap[parent] as QueuedEvent;
    if (!before(event, p)) break;
    heap[i] = p;
    i = parent;
  }
  heap[i] = event;
}

function heapPop(heap: QueuedEvent[]): QueuedEvent | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length === 0 || last === undefined) return top;
  let i = 0;
  const n = heap.length;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= n) break;
    const right = left + 1;
    let child = left;
    if (right < n && before(heap[right] as QueuedEvent, heap[left] as QueuedEvent)) child = right;
    const c = heap[child] as QueuedEvent;
    if (!before(c, last)) break;
    heap[i] = c;
    i = child;
  }
  heap[i] = last;
  return top;
}
