/**
 * Runs one side of a comparison in a simulation worker of its own
 * (app/sim/worker.ts's one-shot `run` request, the whole trace back): two
 * sides, two workers, so that the two runs never share a realm's WebCrypto
 * observers (see app/sim/worker.ts) and run on two cores. The bytes of the
 * scenario's `eml:` files go with the request, as with the live session's `start`.
 */
import type { Trace } from "../../../app/trace/schema.ts";
import type { CompareSide } from "../model/compare.ts";
import type { WorkerLike } from "./port.ts";

/** What a side's run gave. */
export type SideOutcome =
  | { readonly ok: true; readonly trace: Trace; readonly hash: string; readonly passed: boolean }
  | { readonly ok: false; readonly errors: readonly string[] };

/** The worker's reply (app/sim/worker.ts WorkerReply; not imported, as that module is typed for a worker scope). */
type Reply =
  | { readonly type: "result"; readonly hash: string; readonly passed: boolean; readonly trace?: Trace }
  | { readonly type: "invalid"; readonly errors: readonly string[] }
  | { readonly type: "error"; readonly message: string };

/** Runs `side` in a new worker made by `make`; the worker ends with the run, or when `signal` aborts. */
export function runSide(
  make: () => WorkerLike,
  side: CompareSide,
  mailscope: string,
  signal?: AbortSignal,
): Promise<SideOutcome> {
  return new Promise((resolve) => {
    const worker = make();
    const done = (outcome: SideOutcome) => {
      worker.terminate();
      resolve(outcome);
    };
    signal?.addEventListener("abort", () => done({ ok: false, errors: ["cancelled"] }), { once: true });
    worker.addEventListener("message", (event) => {
      const reply = event.data as Reply;
      if (reply.type === "invalid") return done({ ok: false, errors: reply.errors });
      if (reply.type === "error") return done({ ok: false, errors: [`run ${side.label}: ${reply.message}`] });
      if (reply.trace === undefined)
        return done({ ok: false, errors: [`run ${side.label}: the worker sent no trace`] });
      done({ ok: true, trace: reply.trace, hash: reply.hash, passed: reply.passed });
    });
    worker.addEventListener("error", (event) =>
      done({
        ok: false,
        errors: [`run ${side.label}: the simulation worker failed: ${event.message ?? "unknown error"}`],
      }),
    );
    worker.postMessage({
      type: "run",
      text: side.text,
      file: side.file,
      seed: side.seed,
      readings: side.readings,
      ...(side.emls !== undefined && { emls: side.emls }),
      mailscope,
      wantTrace: true,
    });
  });
}
