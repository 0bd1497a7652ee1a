/**
 * How a session's run moves (session.ts): the drive that runs the world's scheduler until the run ends, reaches
 * its time, meets a stop or is interrupted; a jump back, which builds the world again; the stops it posts; and
 * the run's end, checked as `mailscope run` checks it.
 */
import { traceHash, withoutEvents } from "../trace/exportJson.ts";
import type { PlaybackStop } from "./breakpoints.ts";
import { checkScenarioRun } from "./runScenario.ts";
import type { PlaybackProgress } from "./scheduler.ts";
import {
  atEnd,
  factorOf,
  flush,
  levelOf,
  liveRun,
  progressOf,
  refuse,
  stopsIn,
  type DriveMode,
  type Jump,
  type Live,
  type SessionState,
} from "./sessionState.ts";
import { createWorld } from "./world.ts";
import { errorMessage } from "../errorMessage.ts";

/**
 * Runs the scheduler until the run ends, the runTo time is reached, a stop
 * (a breakpoint, the step's event) is met, or an interrupt (pause, finish,
 * cancel, a jump) stops it. Interrupts are read before each scheduler run
 * starts, so one that came between two runs is not lost. A jump (`jump`, or
 * one asked for while running) runs to its time as fast as possible; to a
 * time before the clock, from a world built again. A play or a step first
 * reads the events held back at the last stop: the next stop may be among them.
 */
export async function drive(s: SessionState, first: Live, mode: DriveMode, jump?: Jump): Promise<void> {
  s.phase = typeof mode === "object" && "step" in mode ? "stepping" : "running";
  let run = first;
  let reached = false;
  let error: string | undefined;
  let jumpTo = jump;
  // A step that ran or showed anything and met no event of its level stops at the end rather than ending the run.
  const executed = first.world.scheduler.executedEvents;
  const scanned = first.finder.scanned;
  const moved = () => run !== first || run.world.scheduler.executedEvents > executed || run.finder.scanned > scanned;
  try {
    for (;;) {
      const asked = s.interrupt;
      s.interrupt = undefined;
      if (asked === "cancel") return;
      if (typeof asked === "object") jumpTo = asked;
      if (jumpTo !== undefined) {
        const { toMs } = jumpTo;
        jumpTo = undefined;
        mode = { untilMs: toMs };
        s.phase = "running";
        reached = false;
        run.found = undefined;
        if (toMs < run.world.scheduler.now()) {
          const again = await goBack(s, run);
          if (again === undefined) return;
          run = again;
          continue; // read what was asked while the world was built (a pause, a cancel)
        }
      }
      if (asked === "finish") {
        mode = "finish";
        s.phase = "running";
        reached = false;
        run.found = undefined;
      }
      // Read by place from the recorder's store (decision 0225): the session does not hold the events as objects.
      const events = run.world.recorder;
      if (stopsIn(mode)) {
        const stop = run.found ?? run.finder.next(events, levelOf(mode));
        run.found = undefined;
        if (stop !== undefined) return stopHere(s, run, mode, stop);
      } else run.finder.skip(events);
      if (atEnd(run)) {
        const level = levelOf(mode);
        if (level !== undefined && moved()) return stopHere(s, run, mode, { kind: "end", level });
        break;
      }
      if (asked === "pause" || reached) return pauseHere(s, run);
      const ran = await runScheduler(s, run, mode);
      if (typeof ran === "object") return stopHere(s, run, mode, ran);
      reached = ran;
    }
  } catch (cause) {
    run.playing = false;
    if (s.interrupt === "cancel") return;
    error = errorMessage(cause);
  }
  await conclude(s, run, error);
}

/**
 * One run of the scheduler in a drive's mode, to the horizon, the runTo time or a breakpoint at a time, whichever
 * comes first (it also pauses at a stop the finder meets, at the end, and when asked). Returns the breakpoint at a
 * time it stopped at, else whether it reached the runTo time.
 */
async function runScheduler(s: SessionState, run: Live, mode: DriveMode): Promise<PlaybackStop | boolean> {
  const { scheduler, horizonMs } = run.world;
  let untilMs = typeof mode === "object" && "untilMs" in mode ? Math.min(mode.untilMs, horizonMs) : horizonMs;
  // A breakpoint at a time stops the run there as a jump to that time does.
  const atTime = stopsIn(mode) ? run.finder.nextTime(scheduler.now()) : undefined;
  const byTime = atTime !== undefined && atTime.atMs <= untilMs ? atTime : undefined;
  if (byTime !== undefined) untilMs = byTime.atMs;
  run.playing = mode === "play";
  const result = await scheduler.runRealtime(
    mode === "play" ? factorOf(run.speed) : Infinity,
    (progress) => onProgress(s, run, progress, mode),
    { untilMs, frameMs: s.frameMs },
  );
  run.playing = false;
  if (byTime !== undefined && result.reason === "until" && run.found === undefined) {
    return { kind: "time", id: byTime.id, atMs: byTime.atMs };
  }
  return typeof mode === "object" && "untilMs" in mode && result.reason === "until";
}

/** After each event of the simulation (and each frame of a wait): reads what it traced, stops at a stop. */
function onProgress(s: SessionState, run: Live, progress: PlaybackProgress, mode: DriveMode): void {
  run.playheadMs = progress.playheadMs;
  const events = run.world.recorder;
  if (!stopsIn(mode)) run.finder.skip(events);
  else if (run.found === undefined) {
    const stop = run.finder.next(events, levelOf(mode));
    if (stop !== undefined) {
      run.found = stop;
      run.world.scheduler.pause();
    }
  }
  // Nothing left to run before the horizon: stop here rather than play idle time up to it.
  if (atEnd(run)) run.world.scheduler.pause();
  if (s.wallClock() - run.lastPostMs >= s.frameMs) flush(s, run, true);
}

/**
 * A jump to a time before the clock: the run built again to go there. Undefined when the drive ends here: a cancel
 * came meanwhile, or the world could not be built again (said, and the run stays where it was).
 */
async function goBack(s: SessionState, run: Live): Promise<Live | undefined> {
  try {
    return await rewind(s, run);
  } catch (cause) {
    // Built once already from the same inputs, the world builds again; if it did not, say so and stay.
    refuse(s, "runTo", `the run could not be started again to go back: ${errorMessage(cause)}`);
    if (run.concluded) s.phase = "finished";
    else pauseHere(s, run);
    return undefined;
  }
}

/**
 * The run at its start again, for a jump back: the world built as before (the same scenario, seed,
 * readings and eml bytes), so that running it to a time gives the events the first run gave up to then.
 * Says "rewound" once it is built; undefined when a cancel came meanwhile.
 */
async function rewind(s: SessionState, run: Live): Promise<Live | undefined> {
  const world = await createWorld(run.loaded.scenario, run.worldOptions);
  if (s.interrupt === "cancel") return undefined;
  const again = liveRun(s, world, run.loaded, run.worldOptions, run.mailscope, run.speed);
  s.live = again;
  // The app keeps none of its events: the new world's come again from the first (those it traced while
  // being built included), with the seqs of the first run.
  s.send({ type: "rewound", progress: { ...progressOf(again), events: 0 } });
  return again;
}

/** A play or a step stopped at `stop`: the events up to it shown, the rest held; "stepped" or "paused" says why. */
function stopHere(s: SessionState, run: Live, mode: DriveMode, stop: PlaybackStop): void {
  s.phase = "paused";
  flush(s, run, false);
  const progress = progressOf(run);
  if (typeof mode === "object" && "step" in mode) {
    const label =
      stop.kind === "step" || stop.kind === "breakpoint"
        ? run.world.recorder.at(run.sent - 1)?.name
        : stop.kind === "end"
          ? "end"
          : "time";
    s.send({ type: "stepped", progress, stop, ...(label !== undefined && { label }) });
  } else s.send({ type: "paused", progress, stop });
}

function pauseHere(s: SessionState, run: Live): void {
  s.phase = "paused";
  flush(s, run, false);
  s.send({ type: "paused", progress: progressOf(run) });
}

/** Ends the run as `runLoadedScenario` does, checks it with the same function, and posts `finished`. */
async function conclude(s: SessionState, run: Live, error?: string): Promise<void> {
  s.phase = "checking";
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
      error = errorMessage(cause);
    }
  }
  const checked = checkScenarioRun(world, run.loaded, {
    complete,
    ...(error !== undefined && { error }),
    ...(run.mailscope !== undefined && { mailscope: run.mailscope }),
  });
  run.playheadMs = world.scheduler.now();
  run.endMs = checked.endMs;
  run.finder.skip(world.recorder);
  flush(s, run, false);
  // The members but the events, which are not read (a large run's stay in the store).
  const head = withoutEvents(checked.trace);
  const hash = await traceHash(checked.trace);
  s.phase = "finished";
  s.send({
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
