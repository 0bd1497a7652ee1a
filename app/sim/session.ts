/**
 * A live, controllable simulation run: the logic behind the app's simulation
 * worker (app/sim/worker.ts), speaking the messages of app/sim/sessionProtocol.ts.
 * It needs no Worker: give it a `post` function and hand it commands, in Node
 * as in a browser.
 *
 * The session builds the world as `mailscope run` does (loadScenario, then
 * createWorld), drives the world's scheduler with its own controls
 * (`runRealtime` at a speed, `step`, `pause`) instead of `world.run()`, and
 * ends exactly where `world.run()` ends: when no event is left, or at the
 * horizon. It then checks the run with `checkScenarioRun`, the function
 * `mailscope run` uses, so the trace — and its hash — is the same as the one
 * `runScenarioText` gives for the same scenario and seed, however the run was
 * paused, stepped, run to a time and resumed on the way: the scheduler orders
 * events by (virtual time, sequence) only, and a pause falls between events.
 *
 * Wall time is read here for one thing: to send at most one message per
 * frame (~16 ms) while running. It never reaches the simulation.
 */
import { traceHash } from "../trace/exportJson.ts";
import { checkScenarioRun, worldErrorAt } from "./runScenario.ts";
import { emlReader, formatScenarioError, loadScenario, readingsNotation, type LoadedScenario } from "./scenario.ts";
import { constantsNotation } from "./constants.ts";
import { resolveWindow, type TimeWindow } from "./faultScope.ts";
import type { PlaybackProgress } from "./scheduler.ts";
import type {
  FaultSummary,
  PlaybackSpeed,
  SessionCommand,
  SessionMessage,
  SessionProgress,
  SessionSummary,
  StartCommand,
} from "./sessionProtocol.ts";
import { receiversOfRun } from "./receivers.ts";
import { createWorld, WorldError, type World, type WorldOptions } from "./world.ts";

/** Posts a message to the app (in a worker: `postMessage`). */
export type SessionPost = (message: SessionMessage, transfer?: Transferable[]) => void;

/** What {@link createSimulationSession} may be told. */
export interface SimulationSessionOptions {
  /** Least wall time between two `events` / `progress` messages while running, ms. Default 16 (one animation frame). */
  readonly frameMs?: number;
  /** The wall clock that paces those messages, ms. Default `performance.now()`. Never read by the simulation. */
  readonly wallClock?: () => number;
  /** How the world's scheduler yields to the host (see world.ts). Default the world's. */
  readonly scheduler?: WorldOptions["scheduler"];
}

/**
 * Where a session is. `ready` and `paused` take play, resume, step, runTo and
 * finish; `running` takes pause, setSpeed, finish and cancel; a new `start` is
 * taken before any run, and after one finished or was cancelled.
 */
export type SessionPhase =
  "empty" | "starting" | "ready" | "running" | "stepping" | "paused" | "checking" | "finished" | "cancelled";

/** A session: one run at a time. */
export interface SimulationSession {
  /**
   * Obeys one command; never throws (a command that cannot be obeyed is
   * answered with an `error` message). Resolves when the command has been
   * carried out: `play`, `resume`, `runTo` and `finish` when the run stops
   * (paused, at its time, finished), `pause` once `paused` is posted. A worker
   * does not wait for it: `pause` must reach a running session.
   */
  handle(command: SessionCommand): Promise<void>;
  readonly phase: SessionPhase;
}

/** Before any `play` or `setSpeed`, `resume` plays in real time. */
const DEFAULT_SPEED: PlaybackSpeed = 1;
const DEFAULT_FRAME_MS = 16;

/** What a running drive was asked to do from outside. */
type Interrupt = "pause" | "finish" | "cancel";

/** The run of a started session. */
interface Live {
  readonly world: World;
  readonly loaded: LoadedScenario;
  readonly mailscope: string | undefined;
  speed: PlaybackSpeed;
  /** Whether the running drive plays at `speed` (a runTo or a finish runs at full speed). */
  playing: boolean;
  /** Trace events posted so far. */
  sent: number;
  /** Wall time of the last `events` / `progress` message. */
  lastPostMs: number;
  playheadMs: number;
}

/** A live session that posts its messages through `post`. */
export function createSimulationSession(post: SessionPost, options: SimulationSessionOptions = {}): SimulationSession {
  const frameMs = options.frameMs ?? DEFAULT_FRAME_MS;
  const wallClock = options.wallClock ?? (() => performance.now());
  let phase: SessionPhase = "empty";
  let live: Live | undefined;
  let interrupt: Interrupt | undefined;
  /** The start, drive, step or check in progress: cancel waits for it. */
  let current: Promise<void> | undefined;

  const send = (message: SessionMessage, transfer?: Transferable[]): void => {
    try {
      post(message, transfer);
    } catch {
      // A closed port or a throwing test double: nothing to tell it then.
    }
  };
  const fail = (message: string): void => send({ type: "error", message });

  function busy(work: Promise<void>): Promise<void> {
    const done = work.finally(() => {
      if (current === done) current = undefined;
    });
    current = done;
    return done;
  }

  // ---------------------------------------------------------------------------
  // Where the run is

  function progressOf(run: Live): SessionProgress {
    const { scheduler, recorder } = run.world;
    const nowMs = scheduler.now();
    const next = scheduler.nextEventAtMs();
    return {
      nowMs,
      playheadMs: Math.max(run.playheadMs, nowMs),
      events: recorder.events.length,
      pendingEvents: scheduler.pendingEvents,
      ...(next !== undefined && { nextEventAtMs: next }),
    };
  }

  /** No event is left before the horizon: the run is over, as `world.run()` would stop. */
  function atEnd(run: Live): boolean {
    const next = run.world.scheduler.nextEventAtMs();
    return next === undefined || next > run.world.horizonMs;
  }

  /** Posts the trace events not yet posted, with the progress; or the progress alone when asked. */
  function flush(run: Live, progressAlone: boolean): void {
    const events = run.world.recorder.events;
    run.lastPostMs = wallClock();
    if (events.length > run.sent) {
      const batch = events.slice(run.sent);
      run.sent = events.length;
      send({ type: "events", events: batch, progress: progressOf(run) });
    } else if (progressAlone) {
      send({ type: "progress", progress: progressOf(run) });
    }
  }

  function onProgress(run: Live, progress: PlaybackProgress): void {
    run.playheadMs = progress.playheadMs;
    // Nothing left to run before the horizon: stop here rather than play idle time up to it.
    if (atEnd(run)) run.world.scheduler.pause();
    if (wallClock() - run.lastPostMs >= frameMs) flush(run, true);
  }

  // ---------------------------------------------------------------------------
  // Commands

  async function start(command: StartCommand): Promise<void> {
    phase = "starting";
    interrupt = undefined;
    live = undefined;
    const invalid = (errors: readonly string[]): void => {
      phase = "empty";
      send({ type: "invalid", errors });
    };
    const load = await loadScenario(command.text, {
      ...(command.file !== undefined && { file: command.file }),
      // A Uint8Array as the protocol says; a bare ArrayBuffer (a transferred file) is taken too.
      readFile: emlReader(command.emls, command.emlErrors),
    });
    if (!load.ok) return invalid(load.errors.map(formatScenarioError));
    const { loaded } = load;
    let world: World;
    try {
      world = await createWorld(loaded.scenario, {
        ...(command.seed !== undefined && { seed: command.seed }),
        ...(command.readings !== undefined && { readings: command.readings }),
        recordBodies: command.recordBodies === true,
        emls: loaded.emls,
        ...(options.scheduler !== undefined && { scheduler: options.scheduler }),
      });
    } catch (error) {
      if (!(error instanceof WorldError)) throw error;
      return invalid([formatScenarioError(worldErrorAt(error, command.file))]);
    }
    if (interrupt === "cancel") return; // cancel posts "cancelled"
    live = {
      world,
      loaded,
      mailscope: command.mailscope,
      speed: DEFAULT_SPEED,
      playing: false,
      sent: 0,
      lastPostMs: wallClock(),
      playheadMs: world.startMs,
    };
    phase = "ready";
    send({ type: "ready", summary: summarize(world, loaded) });
  }

  /**
   * Runs the scheduler until the run ends, the runTo time is reached, or an
   * interrupt (pause, finish, cancel) stops it. Interrupts are read before
   * each scheduler run starts, so one that came between two runs is not lost.
   */
  async function drive(run: Live, mode: "play" | "finish" | { readonly untilMs: number }): Promise<void> {
    phase = "running";
    let reached = false;
    let error: string | undefined;
    try {
      for (;;) {
        const asked = interrupt;
        interrupt = undefined;
        if (asked === "cancel") return;
        if (atEnd(run)) break;
        if (asked === "finish") {
          mode = "finish";
          reached = false;
        }
        if (asked === "pause" || reached) return pauseHere(run);
        const { scheduler, horizonMs } = run.world;
        run.playing = mode === "play";
        const untilMs = typeof mode === "object" ? Math.min(mode.untilMs, horizonMs) : horizonMs;
        const result = await scheduler.runRealtime(
          mode === "play" ? factorOf(run.speed) : Infinity,
          (progress) => onProgress(run, progress),
          { untilMs, frameMs },
        );
        run.playing = false;
        reached = typeof mode === "object" && result.reason === "until";
      }
    } catch (cause) {
      run.playing = false;
      if (interrupt === "cancel") return;
      error = describe(cause);
    }
    await conclude(run, error);
  }

  function pauseHere(run: Live): void {
    phase = "paused";
    flush(run, false);
    send({ type: "paused", progress: progressOf(run) });
  }

  async function step(run: Live): Promise<void> {
    phase = "stepping";
    let error: string | undefined;
    try {
      if (!atEnd(run)) {
        const stepped = await run.world.scheduler.step();
        run.playheadMs = run.world.scheduler.now();
        flush(run, false);
        send({
          type: "stepped",
          progress: progressOf(run),
          ...(stepped !== undefined && { label: stepped.label }),
        });
        if (!atEnd(run)) {
          phase = "paused";
          return;
        }
      }
    } catch (cause) {
      error = describe(cause);
    }
    await conclude(run, error);
  }

  /** Ends the run as `runLoadedScenario` does, checks it with the same function, and posts `finished`. */
  async function conclude(run: Live, error?: string): Promise<void> {
    phase = "checking";
    const { world } = run;
    let complete = false;
    if (error === undefined) {
      // As world.run(): the clock goes on to the horizon (no event is left before it, so none runs).
      try {
        await world.scheduler.run({ untilMs: world.horizonMs });
        // The DNS changes the run has reached, as world.run() traces them at its end.
        world.dns.traceChangesUntil(world.scheduler.now());
        complete = world.scheduler.pendingEvents === 0;
      } catch (cause) {
        error = describe(cause);
      }
    }
    const checked = checkScenarioRun(world, run.loaded, {
      complete,
      ...(error !== undefined && { error }),
      ...(run.mailscope !== undefined && { mailscope: run.mailscope }),
    });
    run.playheadMs = world.scheduler.now();
    flush(run, false);
    const { events: _events, ...head } = checked.trace;
    const hash = await traceHash(checked.trace);
    phase = "finished";
    send({
      type: "finished",
      progress: progressOf(run),
      result: {
        passed: checked.passed,
        complete: checked.complete,
        endMs: checked.endMs,
        invariants: checked.invariants,
        expectations: checked.expectations,
        ...(checked.error !== undefined && { error: checked.error }),
        hash,
        reproduce: checked.reproduce,
        trace: head,
      },
    });
  }

  async function cancel(): Promise<void> {
    interrupt = "cancel";
    if (phase === "running") live?.world.scheduler.pause();
    while (current !== undefined) await current.catch(() => undefined);
    interrupt = undefined;
    live = undefined;
    phase = "cancelled";
    send({ type: "cancelled" });
  }

  /** Why a command cannot be obeyed in this phase. */
  function refusal(type: string): string {
    switch (phase) {
      case "empty":
        return `${type}: no run: start one first`;
      case "starting":
        return `${type}: the run is still being built`;
      case "running":
        return `${type}: the run is running: pause it first (setSpeed changes its speed)`;
      case "stepping":
        return `${type}: a step is in progress`;
      case "checking":
        return `${type}: the run is being checked`;
      case "finished":
        return `${type}: the run is finished: start another`;
      case "cancelled":
        return `${type}: the run was cancelled: start another`;
      case "ready":
      case "paused":
        return `${type}: nothing is running`;
    }
  }

  async function dispatch(command: SessionCommand): Promise<void> {
    const stopped = phase === "ready" || phase === "paused";
    switch (command.type) {
      case "start": {
        if (phase !== "empty" && phase !== "finished" && phase !== "cancelled") {
          return fail(`start: a run is in progress (${phase}); cancel it first`);
        }
        const problem = startProblem(command);
        if (problem !== undefined) return fail(`start: ${problem}`);
        return busy(start(command));
      }
      case "play":
      case "setSpeed": {
        if (!isSpeed(command.speed)) {
          return fail(
            `${command.type}: a speed is a number > 0 (virtual ms per wall ms) or "max", not ${show(command.speed)}`,
          );
        }
        if (
          command.type === "setSpeed" &&
          live !== undefined &&
          (stopped || phase === "running" || phase === "stepping")
        ) {
          live.speed = command.speed;
          if (live.playing) live.world.scheduler.setRealtimeFactor(factorOf(command.speed));
          return;
        }
        if (command.type === "play" && live !== undefined && stopped) {
          live.speed = command.speed;
          return busy(drive(live, "play"));
        }
        return fail(refusal(command.type));
      }
      case "resume":
        if (live === undefined || !stopped) return fail(refusal("resume"));
        return busy(drive(live, "play"));
      case "runTo": {
        const { timeMs } = command;
        if (typeof timeMs !== "number" || Number.isNaN(timeMs)) {
          return fail(`runTo: timeMs is a virtual time in ms since the epoch, not ${show(timeMs)}`);
        }
        if (live === undefined || !stopped) return fail(refusal("runTo"));
        const nowMs = live.world.scheduler.now();
        if (timeMs < nowMs) {
          return fail(`runTo: the run is at ${isoTime(nowMs)} already, past ${isoTime(timeMs)}; runTo goes forward`);
        }
        return busy(drive(live, { untilMs: timeMs }));
      }
      case "step":
        if (live === undefined || !stopped) return fail(refusal("step"));
        return busy(step(live));
      case "pause": {
        if (live === undefined || phase !== "running") return fail(refusal("pause"));
        if (interrupt !== "cancel") interrupt = "pause";
        live.world.scheduler.pause();
        return current;
      }
      case "finish": {
        if (live !== undefined && phase === "running") {
          if (interrupt === undefined || interrupt === "pause") interrupt = "finish";
          live.world.scheduler.pause();
          return current;
        }
        if (live === undefined || !stopped) return fail(refusal("finish"));
        return busy(drive(live, "finish"));
      }
      case "cancel":
        if (phase === "empty" || phase === "cancelled") return fail(refusal("cancel"));
        return cancel();
      default:
        return fail(`unknown command ${show((command as { type?: unknown }).type)}`);
    }
  }

  return {
    get phase() {
      return phase;
    },
    async handle(command) {
      try {
        if (typeof command !== "object" || command === null) {
          return fail(`a command is an object with a type, not ${show(command)}`);
        }
        await dispatch(command);
      } catch (error) {
        // A bug, not a command's fault: say so, and leave the session where it can be started again.
        if (phase === "starting") phase = "empty";
        fail(`${(command as { type?: unknown } | null)?.type ?? "command"} failed: ${describe(error)}`);
      }
    },
  };
}

/**
 * What the app shows of a scenario before it runs (sessionProtocol.ts
 * {@link SessionSummary}): its domains, messages, faults with their windows,
 * the readings in force and the horizon, read from the built world.
 */
export function summarize(world: World, loaded: LoadedScenario): SessionSummary {
  const { scenario, startMs } = world;
  const receivers = receiversOfRun(scenario, world.readings);
  const constants = constantsNotation(world.constants);
  return {
    name: scenario.name,
    description: scenario.description,
    ...(loaded.file !== undefined && { file: loaded.file }),
    seed: world.seed,
    readings: readingsNotation(world.readings),
    ...(constants !== undefined && { constants }),
    startMs,
    horizonMs: world.horizonMs,
    domains: [...world.domains.values()].map((d) => {
      const receiverAt = receivers.get(d.name);
      return { name: d.name, receiver: d.receiver !== undefined, ...(receiverAt !== undefined && { receiverAt }) };
    }),
    messages: world.messages.map((m) => ({
      id: m.id,
      messageId: m.messageId,
      atMs: m.atMs,
      from: m.from,
      to: m.to,
      senderDomain: m.senderDomain,
    })),
    faults: faultSummaries(world),
  };
}

/**
 * The scenario's faults, each with its window (an open start is the start of
 * the run; an open end has no `untilMs`). Ids are the ones the trace cites:
 * the fault's `id`, else `<position>:<kind>` as network.ts and dnsZone.ts name
 * them. DNS faults' kinds are prefixed `dns-` (a DNS `timeout` is not a network
 * one); a DNS change is a fault of kind `dns-change` from its time on.
 */
function faultSummaries(world: World): FaultSummary[] {
  const { faults } = world.scenario;
  const { startMs } = world;
  const windowOf = (w: TimeWindow): { fromMs: number; untilMs?: number } => ({
    fromMs: Math.max(w.fromMs, startMs),
    ...(Number.isFinite(w.untilMs) && { untilMs: w.untilMs }),
  });
  const out: FaultSummary[] = [];
  faults.network.forEach((f, i) => {
    const scope =
      f.kind === "partition"
        ? `${f.between[0]} ↔ ${f.between[1]}`
        : joinScope([f.method, f.host, f.path, f.source !== undefined ? `from ${f.source}` : undefined]);
    out.push({
      id: f.id ?? `${i}:${f.kind}`,
      kind: f.kind,
      scope,
      ...windowOf(resolveWindow(f, startMs)),
      ...(f.probability !== undefined && { probability: f.probability }),
    });
  });
  faults.dns.forEach((f, i) => {
    out.push({
      id: f.id ?? `${i}:${f.kind}`,
      kind: `dns-${f.kind}`,
      scope: joinScope([f.type, f.name, f.source !== undefined ? `from ${f.source}` : undefined]),
      ...windowOf(resolveWindow(f, startMs)),
      ...(f.probability !== undefined && { probability: f.probability }),
    });
  });
  faults.dnsChanges.forEach((c, i) => {
    out.push({
      id: `dnsChanges[${i}]`,
      kind: "dns-change",
      scope: c.name,
      ...windowOf(resolveWindow({ from: c.at }, startMs)),
    });
  });
  return out;
}

function joinScope(parts: readonly (string | undefined)[]): string {
  const given = parts.filter((p): p is string => p !== undefined && p !== "");
  return given.length === 0 ? "*" : given.join(" ");
}

function isSpeed(speed: unknown): speed is PlaybackSpeed {
  return speed === "max" || (typeof speed === "number" && speed > 0);
}

function factorOf(speed: PlaybackSpeed): number {
  return speed === "max" ? Infinity : speed;
}

/** What is wrong with a start command that came over a message port, if anything. */
function startProblem(command: StartCommand): string | undefined {
  if (typeof command.text !== "string") return "text is the scenario's YAML, a string";
  if (command.file !== undefined && typeof command.file !== "string") return "file is a string";
  if (command.seed !== undefined && typeof command.seed !== "number" && typeof command.seed !== "string") {
    return "seed is a number or a string";
  }
  if (
    command.readings !== undefined &&
    !(
      Array.isArray(command.readings) &&
      command.readings.every(
        (r: unknown) => Array.isArray(r) && r.length === 2 && r.every((part: unknown) => typeof part === "string"),
      )
    )
  ) {
    return 'readings are pairs of strings, [["G16", "4h"]]';
  }
  if (command.emls !== undefined && (typeof command.emls !== "object" || command.emls === null)) {
    return "emls maps each eml path to its bytes (a Uint8Array)";
  }
  if (
    command.emlErrors !== undefined &&
    (typeof command.emlErrors !== "object" ||
      command.emlErrors === null ||
      !Object.values(command.emlErrors).every((m: unknown) => typeof m === "string"))
  ) {
    return "emlErrors maps each eml path to why it could not be read (a string)";
  }
  return undefined;
}

function isoTime(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
