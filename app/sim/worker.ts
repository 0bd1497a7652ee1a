/**
 * A Web Worker entry that runs a scenario and posts back its trace hash
 * (ARCHITECTURE.md "Where things run": the desktop app and the browser run
 * simulations in a worker, off the UI thread).
 *
 * Start it with `new Worker(new URL("./worker.ts", import.meta.url), { type: "module" })`,
 * post a {@link WorkerRequest}, and read one {@link WorkerReply} per request.
 * The hash is `traceHash` of the trace: the same scenario and seed give the
 * same hash here as in Node (`app/sim/determinism.test.ts` checks it).
 */
import "./mswGuard.ts"; // first: msw needs a localStorage stand-in in a worker
import type { CheckResult, Trace } from "../trace/schema.ts";
import { traceHash } from "../trace/exportJson.ts";
import { formatScenarioError } from "./scenario.ts";
import { runScenarioText } from "./runScenario.ts";

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
  /** The Mailscope version for the trace. */
  readonly mailscope?: string;
  /** Send the whole trace back, not only its hash. */
  readonly wantTrace?: boolean;
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
    });
    if (!outcome.ok) return { type: "invalid", ...id, errors: outcome.errors.map(formatScenarioError) };
    const { run } = outcome;
    return {
      type: "result",
      ...id,
      hash: await traceHash(run.trace),
      passed: run.passed,
      complete: run.complete,
      events: run.trace.events.length,
      invariants: run.invariants,
      expectations: run.expectations,
      ...(request.wantTrace === true && { trace: run.trace }),
    };
  } catch (error) {
    return { type: "error", ...id, message: error instanceof Error ? error.message : String(error) };
  }
}

// Only inside a worker: importing this module elsewhere (a test) installs nothing.
if (typeof WorkerGlobalScope !== "undefined" && globalThis instanceof WorkerGlobalScope) {
  const scope = globalThis as unknown as DedicatedWorkerGlobalScope;
  // One run at a time, in the order asked: runs share nothing, but replies stay in order.
  let queue = Promise.resolve();
  scope.addEventListener("message", (event: MessageEvent<WorkerRequest>) => {
    queue = queue.then(async () => {
      scope.postMessage(await handleWorkerRequest(event.data));
    });
  });
}
