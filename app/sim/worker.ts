/**
 * The Web Worker entry of the simulation (ARCHITECTURE.md "Where things run":
 * the desktop app and the browser run simulations in a worker, off the UI
 * thread). Start it with
 * `new Worker(new URL("./worker.ts", import.meta.url), { type: "module" })`.
 *
 * It speaks two protocols:
 *
 * - The live session (app/sim/sessionProtocol.ts, app/sim/session.ts): the
 *   app posts `start`, `play`, `pause`, `step`, `runTo`, `finish`, … and reads
 *   `ready`, `events` batches, `paused`, `finished`, … One session per worker.
 * - The one-shot {@link WorkerRequest} `{ type: "run" }`: runs a scenario to
 *   its end and answers once with its trace hash (and the trace on request).
 *
 * The hash is `traceHash` of the trace: the same scenario and seed give the
 * same hash here as in Node, whether the run went in one go or was paused,
 * stepped and resumed (app/sim/determinism.test.ts, app/sim/sessionWorker.test.ts).
 *
 * Why one worker per run, and two workers for two runs side by side (two
 * readings compared): a run is deterministic because its scheduler sees every
 * WebCrypto operation the core starts while one of its events runs — through
 * the observers of app/protocol/webCrypto.ts — and holds their results until
 * all of them are done, releasing them in the order they started
 * (scheduler.ts `#holdWebCrypto`). Those observers are a module-level set, one
 * per realm (a page, a worker), not one per run. Two runs in one realm,
 * interleaved on its event loop, would each observe, track and hold the other's
 * crypto operations: each would wait for the other's work while settling, and
 * the batches in which results are released — so the order in which their
 * deliveries go on — would depend on how the two happened to interleave, that
 * is on the machine's speed. A worker is a realm of its own (its own module
 * instances, observers and crypto provider) on a thread of its own, so two
 * workers keep two runs apart, and run them on two cores. For the same reason
 * this worker never lets a one-shot run and a session run at the same time.
 */
import "./mswGuard.ts"; // first: msw needs a localStorage stand-in in a worker
import type { CheckResult, RecordedEvent, Trace } from "../trace/schema.ts";
import { traceHash } from "../trace/exportJson.ts";
import { eventsOf } from "../trace/store.ts";
import { emlReader, formatScenarioError } from "./scenario.ts";
import { outcomeRows } from "./outcomeRows.ts";
import { runScenarioText } from "./runScenario.ts";
import { createSimulationSession } from "./session.ts";
import type { SessionCommand, SessionMessage } from "./sessionProtocol.ts";
import { errorMessage } from "../errorMessage.ts";

/** A request to the worker: run `text` as a scenario. */
export interface WorkerRequest {
  readonly type: "run";
  /** Echoed in the reply, to pair requests and replies. */
  readonly id?: string | number;
  /** The scenario's YAML. */
  readonly text: string;
  /** Its file name, for errors and the trace. */
  readonly file?: string;
  readonly seed?: number | string;
  /** Readings applied after the scenario's, as `--set` gives them. */
  readonly readings?: readonly (readonly [string, string])[];
  /** The bytes of the scenario's `eml:` files, by the path the scenario names (as the session's `start`). */
  readonly emls?: Readonly<Record<string, Uint8Array>>;
  /** The Mailscope version for the trace. */
  readonly mailscope?: string;
  /** Send the whole trace back, not only its hash. */
  readonly wantTrace?: boolean;
  /** Send each recipient's outcome back ({@link RunOutcome}: what a sweep's point needs), not the trace. */
  readonly wantOutcomes?: boolean;
}

/** One recipient of one of the scenario's messages at the end of a run (DSNs left out), as a sweep reads it. */
export interface RunOutcome {
  /** The scenario's id of the message (`m1`). */
  readonly message: string;
  readonly recipient: string;
  /** accepted | rejected | smtp | bounced, or pending when the run stopped before it. */
  readonly outcome: string;
  /** `smtp (fallback)`, as `mailscope run` prints it. */
  readonly outcomeText: string;
  /** When it came, ms after the start of the run. */
  readonly atMs?: number;
  readonly attempts: number;
  readonly posts: number;
  readonly rule?: string;
}

/** The worker's answer to one request. */
export type WorkerReply =
  | {
      readonly type: "result";
      readonly id?: string | number;
      readonly hash: string;
      readonly passed: boolean;
      readonly complete: boolean;
      readonly events: number;
      readonly invariants: readonly CheckResult[];
      readonly expectations: readonly CheckResult[];
      readonly trace?: Trace;
      /** With `wantOutcomes`. */
      readonly outcomes?: readonly RunOutcome[];
    }
  | { readonly type: "invalid"; readonly id?: string | number; readonly errors: readonly string[] }
  | { readonly type: "error"; readonly id?: string | number; readonly message: string };

/** Runs one request; what the worker posts back. Never throws. */
export async function handleWorkerRequest(request: WorkerRequest): Promise<WorkerReply> {
  const id = request.id === undefined ? {} : { id: request.id };
  try {
    if (request.type !== "run" || typeof request.text !== "string") {
      return { type: "error", ...id, message: 'a request is { type: "run", text: <scenario YAML> }' };
    }
    const outcome = await runScenarioText(request.text, {
      ...(request.file !== undefined && { file: request.file }),
      ...(request.seed !== undefined && { seed: request.seed }),
      ...(request.readings !== undefined && { readings: request.readings }),
      ...(request.mailscope !== undefined && { mailscope: request.mailscope }),
      // As the live session reads them: a path without its bytes is the same located error.
      readFile: emlReader(request.emls),
    });
    if (!outcome.ok) return { type: "invalid", ...id, errors: outcome.errors.map(formatScenarioError) };
    const { run } = outcome;
    return {
      type: "result",
      ...id,
      hash: await traceHash(run.trace),
      passed: run.passed,
      complete: run.complete,
      // From the recorder's store when it holds them: a large run's events are not built as objects (0225).
      events: eventsOf(run.trace).length,
      invariants: run.invariants,
      expectations: run.expectations,
      ...(request.wantTrace === true && { trace: run.trace }),
      ...(request.wantOutcomes === true && { outcomes: runOutcomes(eventsOf(run.trace), run.world.startMs) }),
    };
  } catch (error) {
    return { type: "error", ...id, message: errorMessage(error) };
  }
}

/** The outcomes of the scenario's recipients (not of DSNs), with their times after `startMs`. */
export function runOutcomes(events: Iterable<RecordedEvent>, startMs: number): RunOutcome[] {
  return outcomeRows(events, startMs)
    .filter((r) => !r.dsn)
    .map((r) => ({
      message: r.message,
      recipient: r.recipient,
      outcome: r.outcome,
      outcomeText: r.outcomeText,
      ...(r.atMs !== undefined && { atMs: r.atMs - startMs }),
      attempts: r.attempts,
      posts: r.posts,
      ...(r.rule !== undefined && { rule: r.rule }),
    }));
}

// Only inside a worker: importing this module elsewhere (a test) installs nothing.
if (typeof WorkerGlobalScope !== "undefined" && globalThis instanceof WorkerGlobalScope) {
  const scope = globalThis as unknown as DedicatedWorkerGlobalScope;
  const session = createSimulationSession((message, transfer) => scope.postMessage(message, transfer ?? []));
  // One-shot runs, one at a time, in the order asked: replies stay in order.
  let queue = Promise.resolve();
  let oneShots = 0;
  scope.addEventListener("message", (event: MessageEvent<unknown>) => {
    const data = event.data;
    if (typeof data === "object" && data !== null && (data as { type?: unknown }).type === "run") {
      const request = data as WorkerRequest;
      if (session.phase !== "empty" && session.phase !== "finished" && session.phase !== "cancelled") {
        const id = request.id === undefined ? {} : { id: request.id };
        const reply: WorkerReply = {
          type: "error",
          ...id,
          message: `a session is ${session.phase} in this worker; a run goes in a worker of its own`,
        };
        scope.postMessage(reply);
        return;
      }
      oneShots++;
      queue = queue.then(async () => {
        scope.postMessage(await handleWorkerRequest(request));
        oneShots--;
      });
      return;
    }
    if (oneShots > 0) {
      const reply: SessionMessage = {
        type: "error",
        message: "a one-shot run is in progress in this worker; a session goes in a worker of its own",
      };
      scope.postMessage(reply);
      return;
    }
    void session.handle(data as SessionCommand);
  });
}
