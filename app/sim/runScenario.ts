/**
 * One simulation run, start to end: load the scenario → build the world →
 * run it until every message has reached its outcomes and no event is left,
 * or until the horizon → check the invariants and the expectations (both
 * written into the trace as `invariant.checked` / `expectation.checked`
 * events and in the document's `invariants` / `expectations`) → the trace
 * document, with the scenario, the seed, the readings in force and the
 * Mailscope version.
 *
 * The same scenario and seed give the same trace, byte for byte, in Node, in a
 * browser and in a Web Worker (ARCHITECTURE.md "Determinism"): nothing here
 * reads the wall clock, and the world draws every random number from the seed.
 */
import type { CheckResult, Trace } from "../trace/schema.ts";
import { reproduceCommand } from "../trace/exportMarkdown.ts";
import { constantsNotation } from "./constants.ts";
import { checkExpectations } from "./expectations.ts";
import { normalizeAddress } from "../protocol/mailbox.ts";
import { buildModel, checkInvariants, INVARIANTS, type Model } from "./invariants.ts";
import { loadScenario, type LoadedScenario, type LoadScenarioOptions, type ScenarioError } from "./scenario.ts";
import { createWorld, WorldError, type World, type WorldOptions } from "./world.ts";
import { errorMessage } from "../errorMessage.ts";

/** The version a trace names when the caller does not say (the CLI passes package.json's). */
export const UNKNOWN_VERSION = "0.0.0-unknown";

/** What {@link runLoadedScenario} may be told. */
export interface RunScenarioOptions extends WorldOptions {
  /** The Mailscope version for the trace. */
  readonly mailscope?: string;
  /** Stop at this virtual time (ms since the epoch) instead of the scenario's horizon. */
  readonly untilMs?: number;
  /**
   * Called every {@link progressEvents} events of the run with where it
   * stands (the CLI prints it on long runs). The run and its trace are the
   * same with or without it.
   */
  readonly onProgress?: (progress: RunProgress) => void;
  /** Events between two {@link onProgress} calls. Default 100. */
  readonly progressEvents?: number;
  /**
   * Hears the deliveries the invariants rebuilt from the trace (invariants.ts `buildModel`), for a caller that
   * checks more over the same run (explore's run properties) without rebuilding them.
   */
  readonly onModel?: (model: Model) => void;
}

/** Where a run stands, for progress lines. */
export interface RunProgress {
  /** Virtual time since the start, ms. */
  readonly virtualMs: number;
  /** Where the run stops at the latest, ms after the start. */
  readonly horizonMs: number;
  /** Trace events so far. */
  readonly events: number;
  /** Messages of the scenario whose every recipient has its final outcome. */
  readonly messagesDone: number;
  /** Messages of the scenario. */
  readonly messages: number;
}

/** One recipient of one message at the end of the run. */
export interface RecipientRow {
  /** The scenario's id of the message (`m1`), or the trace's id for a DSN. */
  readonly message: string;
  readonly messageId: string;
  /** Whether the message is a DSN the run produced. */
  readonly dsn: boolean;
  readonly senderDomain: string;
  readonly recipient: string;
  /** The final outcome, or `pending` when the run stopped before it. */
  readonly outcome: string;
  readonly atMs?: number;
  readonly rule?: string;
  /** Why it went to SMTP, with outcome `smtp`. */
  readonly smtpReason?: string;
  /** Whether the SMTP relay accepted the hand-off (G18). */
  readonly smtpAccepted?: boolean;
}

/** A finished run. */
export interface ScenarioRun {
  readonly world: World;
  readonly trace: Trace;
  /** Every invariant and expectation passed, and the simulation raised no error. */
  readonly passed: boolean;
  /** No event was left: the run ended before the horizon. */
  readonly complete: boolean;
  /** Virtual time of the last event (or the horizon, when the run stopped there). */
  readonly endMs: number;
  readonly invariants: readonly CheckResult[];
  readonly expectations: readonly CheckResult[];
  readonly outcomes: readonly RecipientRow[];
  /** A failure inside the simulation (an event threw), if any. */
  readonly error?: string;
  /** `mailscope run <file> --seed N --set …`: reproduces this run. */
  readonly reproduce: string;
}

/**
 * Runs a loaded scenario to its end and checks it. Never throws for what the
 * simulation does: a failing event becomes a failed `simulation` check.
 *
 * @throws WorldError when the world cannot be built (a bad reading override, say).
 */
export async function runLoadedScenario(
  loaded: LoadedScenario,
  options: RunScenarioOptions = {},
): Promise<ScenarioRun> {
  const world = await createWorld(loaded.scenario, {
    ...options,
    emls: options.emls ?? loaded.emls,
  });
  let complete = false;
  let error: string | undefined;
  try {
    if (options.onProgress !== undefined)
      await runInSlices(world, options.untilMs ?? world.horizonMs, options.onProgress, options.progressEvents);
    complete = (await world.run(options.untilMs)).complete;
  } catch (cause) {
    error = errorMessage(cause);
  }
  return checkScenarioRun(world, loaded, {
    complete,
    ...(error !== undefined && { error }),
    ...(options.untilMs !== undefined && { untilMs: options.untilMs }),
    ...(options.mailscope !== undefined && { mailscope: options.mailscope }),
    ...(options.onModel !== undefined && { onModel: options.onModel }),
  });
}

/**
 * Runs `world` up to `untilMs` a slice of events at a time, reporting
 * progress after each; the caller's `world.run` then finishes (nothing is
 * left to run but the end of the clock and the DNS changes reached).
 */
async function runInSlices(
  world: World,
  untilMs: number,
  onProgress: (progress: RunProgress) => void,
  sliceEvents = 100,
): Promise<void> {
  // Messages done: every recipient of a scenario message has its recipient.outcome.
  const waiting = new Map<string, Set<string>>();
  for (const m of world.messages) {
    const left = waiting.get(m.messageId) ?? new Set<string>();
    for (const to of m.to) left.add(normalizeAddress(to));
    waiting.set(m.messageId, left);
  }
  let done = [...waiting.values()].filter((left) => left.size === 0).length;
  const unsubscribe = world.recorder.subscribe((event) => {
    if (event.name !== "recipient.outcome") return;
    const data = event.data as { messageId?: unknown; recipient?: unknown } | undefined;
    const left = typeof data?.messageId === "string" ? waiting.get(data.messageId) : undefined;
    if (left === undefined || left.size === 0 || typeof data?.recipient !== "string") return;
    left.delete(normalizeAddress(data.recipient));
    if (left.size === 0) done++;
  });
  const report = (): void =>
    onProgress({
      virtualMs: world.scheduler.now() - world.startMs,
      horizonMs: untilMs - world.startMs,
      events: world.recorder.length,
      messagesDone: done,
      messages: waiting.size,
    });
  try {
    for (;;) {
      const result = await world.scheduler.run({ untilMs, maxEvents: Math.max(1, sliceEvents) });
      report();
      if (result.reason !== "limit") return;
    }
  } finally {
    unsubscribe();
  }
}

/**
 * Up to this many events, {@link checkScenarioRun} builds them as objects once (~12 MiB at most) rather than
 * decoding them from the store for each of its passes (seven): explore judges thousands of small runs, and its
 * judge reads the trace's array anyway. Above it, the passes read the store (a fleet is 405,493 events).
 */
const SMALL_RUN_EVENTS = 50_000;

/** How a run ended, as {@link checkScenarioRun} needs to know it. */
export interface RunEnding {
  /** No event was left when the run stopped (it ended before its horizon). */
  readonly complete: boolean;
  /** A failure inside the simulation (an event threw), if any. */
  readonly error?: string;
  /** Where the run was told to stop, when not at the world's horizon. */
  readonly untilMs?: number;
  /** The Mailscope version for the trace. */
  readonly mailscope?: string;
  /** Hears the deliveries the invariants were checked over ({@link RunScenarioOptions.onModel}). */
  readonly onModel?: (model: Model) => void;
}

/**
 * The "check the run" step, shared by `mailscope run` / `mailscope check`
 * ({@link runLoadedScenario}) and the app's live session (app/sim/session.ts),
 * so that both check a run exactly the same way: the invariants and the
 * expectations are checked over the events so far, written into the trace as
 * `invariant.checked` / `expectation.checked` events at the end time, and the
 * trace document is built with them. Call it once, after the world stopped.
 */
export function checkScenarioRun(world: World, loaded: LoadedScenario, ending: RunEnding): ScenarioRun {
  const { complete, error } = ending;
  const { recorder } = world;
  // A large run's events are read one at a time from the recorder's store, never all as objects at once; a
  // small run's are built once, for the passes below and for the trace's readers (decision 0195).
  const events = recorder.length > SMALL_RUN_EVENTS ? recorder.iterate() : recorder.events;
  const stopMs = ending.untilMs ?? world.horizonMs;
  const endMs = complete
    ? (recorder.at(recorder.length - 1)?.timeMs ?? world.startMs)
    : Math.min(world.scheduler.now(), stopMs);

  const constants = constantsNotation(world.constants);
  const model = buildModel(events);
  ending.onModel?.(model);
  const invariants: CheckResult[] = checkInvariants(
    events,
    { readings: world.readings, complete, startMs: world.startMs, ...(constants !== undefined && { constants }) },
    model,
  );
  if (error !== undefined) invariants.push({ id: "simulation", passed: false, detail: error });
  const expectations = checkExpectations(loaded.scenario.expectations, events, world.messages, world.startMs);
  const rules = new Map(INVARIANTS.map((i) => [i.id, i.rules]));
  for (const check of invariants) {
    recorder.emit({
      name: "invariant.checked",
      timeMs: endMs,
      data: { ...check, ...(rules.has(check.id) && { rules: rules.get(check.id) }) },
    });
  }
  for (const check of expectations) recorder.emit({ name: "expectation.checked", timeMs: endMs, data: { ...check } });

  const trace = world.trace({
    mailscope: ending.mailscope ?? UNKNOWN_VERSION,
    ...(loaded.file !== undefined && { file: loaded.file }),
    source: loaded.source,
    invariants,
    expectations,
  });
  const passed = error === undefined && [...invariants, ...expectations].every((c) => c.passed);
  return {
    world,
    trace,
    passed,
    complete,
    endMs,
    invariants,
    expectations,
    outcomes: recipientRows(world),
    ...(error !== undefined && { error }),
    reproduce: reproduceCommand(trace, loaded.file),
  };
}

/** The outcome of {@link runScenarioText}. */
export type ScenarioTextRun =
  { readonly ok: true; readonly run: ScenarioRun } | { readonly ok: false; readonly errors: readonly ScenarioError[] };

/**
 * Loads `text` as a scenario and runs it. Problems with the scenario (its
 * text, its .eml files, a bad reading override) come back as errors naming
 * file, line, column and field; never throws for bad input.
 */
export async function runScenarioText(
  text: string,
  options: RunScenarioOptions & LoadScenarioOptions = {},
): Promise<ScenarioTextRun> {
  const load = await loadScenario(text, options);
  if (!load.ok) return load;
  try {
    return { ok: true, run: await runLoadedScenario(load.loaded, options) };
  } catch (error) {
    if (!(error instanceof WorldError)) throw error;
    return { ok: false, errors: [worldErrorAt(error, options.file)] };
  }
}

/** A {@link WorldError} (a bad reading override, a message that cannot be built) as an error of the scenario's file, at 1:1. */
export function worldErrorAt(error: WorldError, file = "scenario.yaml"): ScenarioError {
  return { file, line: 1, column: 1, field: "(scenario)", message: error.message };
}

/** The events {@link recipientRows} reads. */
const ROW_EVENTS: ReadonlySet<string> = new Set(["message.submitted", "smtp.handoff", "recipient.outcome"]);

/** Every recipient of every message the run submitted (DSNs included), with its outcome. */
function recipientRows(world: World): RecipientRow[] {
  const scenarioIds = new Map(world.messages.map((m) => [m.messageId, m.id]));
  const rows = new Map<string, RecipientRow>();
  const handOffs = new Map<string, { reason: string; accepted: boolean }>();
  for (const e of world.recorder.iterate().named(ROW_EVENTS)) {
    const d = e.data ?? {};
    const messageId = typeof d["messageId"] === "string" ? d["messageId"] : "";
    if (e.name === "message.submitted") {
      const to = Array.isArray(d["to"]) ? d["to"].map(String) : [];
      for (const r of to) {
        const recipient = normalizeAddress(r);
        const key = `${messageId}\n${recipient}`;
        if (rows.has(key)) continue;
        rows.set(key, {
          message: scenarioIds.get(messageId) ?? messageId,
          messageId,
          dsn: d["from"] === null && !scenarioIds.has(messageId),
          senderDomain: e.domain ?? "",
          recipient,
          outcome: "pending",
        });
      }
    } else if (e.name === "smtp.handoff") {
      const recipients = Array.isArray(d["recipients"]) ? d["recipients"].map(String) : [];
      for (const r of recipients) {
        handOffs.set(`${messageId}\n${normalizeAddress(r)}`, {
          reason: String(d["reason"]),
          accepted: d["accepted"] === true,
        });
      }
    } else if (e.name === "recipient.outcome") {
      const key = `${messageId}\n${normalizeAddress(String(d["recipient"] ?? ""))}`;
      const row = rows.get(key);
      if (row === undefined || row.outcome !== "pending") continue;
      const handOff = handOffs.get(key);
      rows.set(key, {
        ...row,
        outcome: String(d["outcome"]),
        atMs: e.timeMs,
        ...(typeof d["rule"] === "string" && { rule: d["rule"] }),
        ...(handOff !== undefined && { smtpReason: handOff.reason, smtpAccepted: handOff.accepted }),
      });
    }
  }
  return [...rows.values()];
}
