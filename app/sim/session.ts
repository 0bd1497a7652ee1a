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
 * For the same reason a jump to an earlier time builds the world again and
 * runs it to that time: it lands where a run from the start to that time does.
 *
 * Wall time is read here for one thing: to send at most one message per
 * frame (~16 ms) while running. It never reaches the simulation.
 */
import { traceHash } from "../trace/exportJson.ts";
import { offset } from "../trace/offset.ts";
import { checkScenarioRun, worldErrorAt } from "./runScenario.ts";
import { emlReader, formatScenarioError, loadScenario, readingsNotation, type LoadedScenario } from "./scenario.ts";
import { resolveWindow, type TimeWindow } from "./faultScope.ts";
import type { PlaybackProgress } from "./scheduler.ts";
import {
  refusal,
  type FaultSummary,
  type PlaybackSpeed,
  type SessionCommand,
  type SessionMessage,
  type SessionProgress,
  type SessionSummary,
  type StartCommand,
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
 * finish; `running` takes pause, setSpeed, runTo, finish and cancel;
 * `finished` takes a runTo to an earlier time; a new `start` is taken before
 * any run, and after one finished or was cancelled.
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

/** Before any `play`, `resume` with a speed or `setSpeed`, `resume` plays in real time. */
const DEFAULT_SPEED: PlaybackSpeed = 1;
const DEFAULT_FRAME_MS = 16;

/** A jump asked for while a run was running: it takes the run over. */
interface Jump {
  readonly toMs: number;
}

/** What a running drive was asked to do from outside. */
type Interrupt = "pause" | "finish" | "cancel" | Jump;

/** What a drive does: play at the speed, run to a time as fast as possible, or run to the end. */
type DriveMode = "play" | "finish" | { readonly untilMs: number };

/** The run of a started session. */
interface Live {
  readonly world: World;
  readonly loaded: LoadedScenario;
  /** How the world was built: a jump back builds it again the same way. */
  readonly worldOptions: WorldOptions;
  readonly mailscope: string | undefined;
  speed: PlaybackSpeed;
  /** Whether the running drive plays at `speed` (a runTo or a finish runs at full speed). */
  playing: boolean;
  /** Trace events posted so far. */
  sent: number;
  /** Wall time of the last `events` / `progress` message. */
  lastPostMs: number;
  playheadMs: number;
  /** Checked and reported `finished`: only a jump back runs it again (from a world built again). */
  concluded: boolean;
  /** Where the run ended, once concluded (its last event; `mailscope run`'s end). */
  endMs?: number;
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
  const refuse = (command: string, why: string): void => send(refusal(command, why));

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
    const worldOptions: WorldOptions = {
      ...(command.seed !== undefined && { seed: command.seed }),
      ...(command.readings !== undefined && { readings: command.readings }),
      recordBodies: command.recordBodies === true,
      emls: loaded.emls,
      ...(options.scheduler !== undefined && { scheduler: options.scheduler }),
    };
    let world: World;
    try {
      world = await createWorld(loaded.scenario, worldOptions);
    } catch (error) {
      if (!(error instanceof WorldError)) throw error;
      return invalid([formatScenarioError(worldErrorAt(error, command.file))]);
    }
    if (interrupt === "cancel") return; // cancel posts "cancelled"
    live = liveRun(world, loaded, worldOptions, command.mailscope, DEFAULT_SPEED);
    phase = "ready";
    send({ type: "ready", summary: summarize(world, loaded) });
  }

  function liveRun(
    world: World,
    loaded: LoadedScenario,
    worldOptions: WorldOptions,
    mailscope: string | undefined,
    speed: PlaybackSpeed,
  ): Live {
    return {
      world,
      loaded,
      worldOptions,
      mailscope,
      speed,
      playing: false,
      sent: 0,
      lastPostMs: wallClock(),
      playheadMs: world.startMs,
      concluded: false,
    };
  }

  /**
   * The run at its start again, for a jump back: the world built as before (the same scenario, seed,
   * readings and eml bytes), so that running it to a time gives the events the first run gave up to then.
   * Says "rewound" once it is built; undefined when a cancel came meanwhile.
   */
  async function rewind(run: Live): Promise<Live | undefined> {
    const world = await createWorld(run.loaded.scenario, run.worldOptions);
    if (interrupt === "cancel") return undefined;
    const again = liveRun(world, run.loaded, run.worldOptions, run.mailscope, run.speed);
    live = again;
    // The app keeps none of its events: the new world's come again from the first (those it traced while
    // being built included), with the seqs of the first run.
    send({ type: "rewound", progress: { ...progressOf(again), events: 0 } });
    return again;
  }

  /**
   * Runs the scheduler until the run ends, the runTo time is reached, or an
   * interrupt (pause, finish, cancel, a jump) stops it. Interrupts are read
   * before each scheduler run starts, so one that came between two runs is
   * not lost. A jump (`jump`, or one asked for while running) runs to its time
   * as fast as possible; to a time before the clock, from a world built again.
   */
  async function drive(first: Live, mode: DriveMode, jump?: Jump): Promise<void> {
    phase = "running";
    let run = first;
    let reached = false;
    let error: string | undefined;
    let jumpTo = jump;
    try {
      for (;;) {
        const asked = interrupt;
        interrupt = undefined;
        if (asked === "cancel") return;
        if (typeof asked === "object") jumpTo = asked;
        if (jumpTo !== undefined) {
          const { toMs } = jumpTo;
          jumpTo = undefined;
          mode = { untilMs: toMs };
          reached = false;
          if (toMs < run.world.scheduler.now()) {
            let again: Live | undefined;
            try {
              again = await rewind(run);
            } catch (cause) {
              // Built once already from the same inputs, the world builds again; if it did not, say so and stay.
              refuse("runTo", `the run could not be started again to go back: ${describe(cause)}`);
              if (run.concluded) {
                phase = "finished";
                return;
              }
              return pauseHere(run);
            }
            if (again === undefined) return;
            run = again;
            continue; // read what was asked while the world was built (a pause, a cancel)
          }
        }
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

  /** Where a runTo goes: ahead from ready or paused, anywhere while running, back from the end. */
  function runTo(timeMs: number): Promise<void> | void {
    if (live === undefined) return refuse("runTo", whyNot());
    const nowMs = live.world.scheduler.now();
    switch (phase) {
      case "running":
        if (interrupt !== "cancel") interrupt = { toMs: timeMs };
        live.world.scheduler.pause();
        return current;
      case "ready":
      case "paused":
        return busy(drive(live, { untilMs: timeMs }, { toMs: timeMs }));
      case "finished": {
        const endMs = live.endMs ?? nowMs;
        if (timeMs < endMs) return busy(drive(live, { untilMs: timeMs }, { toMs: timeMs }));
        return refuse(
          "runTo",
          `the run is over at ${offset(endMs, live.world.startMs)}: nothing happens after its end; jump to an earlier time`,
        );
      }
      default:
        return refuse("runTo", whyNot());
    }
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
    run.concluded = true;
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
    run.endMs = checked.endMs;
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

  /** Why a command cannot be obeyed in this phase, in words for the person at the controls. */
  function whyNot(): string {
    switch (phase) {
      case "empty":
        return "no scenario is loaded";
      case "starting":
        return "the run is still being built";
      case "running":
        return "the run is playing; pause it first";
      case "stepping":
        return "a step is in progress";
      case "checking":
        return "the run is being checked";
      case "finished":
        return "the run is over; restart it to run it again";
      case "cancelled":
        return "the run was stopped; start another";
      case "ready":
      case "paused":
        return "nothing is playing";
    }
  }

  async function dispatch(command: SessionCommand): Promise<void> {
    const stopped = phase === "ready" || phase === "paused";
    switch (command.type) {
      case "start": {
        if (phase !== "empty" && phase !== "finished" && phase !== "cancelled") {
          return refuse("start", `a run is in progress (${phase}); stop it first`);
        }
        const problem = startProblem(command);
        if (problem !== undefined) return refuse("start", problem);
        return busy(start(command));
      }
      case "play":
      case "setSpeed":
      case "resume": {
        if ((command.type !== "resume" || command.speed !== undefined) && !isSpeed(command.speed)) {
          return refuse(
            command.type,
            `a speed is a number > 0 (virtual ms per wall ms) or "max", not ${show(command.speed)}`,
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
        if (command.type !== "setSpeed" && live !== undefined && stopped) {
          if (command.speed !== undefined) live.speed = command.speed;
          return busy(drive(live, "play"));
        }
        return refuse(command.type, whyNot());
      }
      case "runTo": {
        const { timeMs } = command;
        if (typeof timeMs !== "number" || Number.isNaN(timeMs)) {
          return refuse("runTo", `a time is a number of ms since the epoch, not ${show(timeMs)}`);
        }
        return runTo(timeMs);
      }
      case "step":
        if (live === undefined || !stopped) return refuse("step", whyNot());
        return busy(step(live));
      case "pause": {
        if (live === undefined || phase !== "running") return refuse("pause", whyNot());
        if (interrupt !== "cancel") interrupt = "pause";
        live.world.scheduler.pause();
        return current;
      }
      case "finish": {
        if (live !== undefined && phase === "running") {
          if (interrupt !== "cancel") interrupt = "finish";
          live.world.scheduler.pause();
          return current;
        }
        if (live === undefined || !stopped) return refuse("finish", whyNot());
        return busy(drive(live, "finish"));
      }
      case "cancel":
        if (phase === "empty" || phase === "cancelled") return refuse("cancel", whyNot());
        return cancel();
      default:
        return refuse(String((command as { type?: unknown }).type), "this session knows no such command");
    }
  }

  return {
    get phase() {
      return phase;
    },
    async handle(command) {
      try {
        if (typeof command !== "object" || command === null) {
          return send({ type: "error", message: `A command is an object with a type, not ${show(command)}.` });
        }
        await dispatch(command);
      } catch (error) {
        // A bug, not a command's fault: say so, and leave the session where it can be started again.
        if (phase === "starting") phase = "empty";
        refuse(String((command as { type?: unknown } | null)?.type ?? "command"), `it failed: ${describe(error)}`);
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
  return {
    name: scenario.name,
    description: scenario.description,
    ...(loaded.file !== undefined && { file: loaded.file }),
    seed: world.seed,
    readings: readingsNotation(world.readings),
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

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
