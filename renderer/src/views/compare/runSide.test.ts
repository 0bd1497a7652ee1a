/**
 * Issue 15 "Compare": each side runs in a worker of its own, asked with the
 * worker's one-shot `run` request; the worker ends with the run. A fake
 * worker here answers as app/sim/worker.ts does (handleWorkerRequest).
 */
import { describe, expect, it } from "vitest";
import g16 from "../../../../scenarios/gap-G16-fallback-window-4h.yaml?raw";
import { handleWorkerRequest, type WorkerRequest } from "../../../../app/sim/worker.ts";
import type { CompareSide } from "../../model/compare.ts";
import type { WorkerLike } from "../../session/port.ts";
import { runSide } from "./runSide.ts";

function fakeWorker(log: string[]): () => WorkerLike {
  return () => {
    let onMessage: ((event: { data: unknown }) => void) | undefined;
    return {
      postMessage(message) {
        log.push(`post ${(message as WorkerRequest).type}`);
        void handleWorkerRequest(message as WorkerRequest).then((reply) => onMessage?.({ data: reply }));
      },
      addEventListener(type: "message" | "error", listener: (event: never) => void) {
        if (type === "message") onMessage = listener as (event: { data: unknown }) => void;
      },
      terminate() {
        log.push("terminate");
      },
    };
  };
}

const side = (text: string, readings: CompareSide["readings"] = []): CompareSide => ({
  label: "A",
  title: "t",
  text,
  file: "scenarios/gap-G16-fallback-window-4h.yaml",
  seed: 16,
  readings,
});

describe("runSide", () => {
  it("runs one side in a new worker and ends it: the whole trace back", async () => {
    const log: string[] = [];
    const outcome = await runSide(fakeWorker(log), side(g16, [["G16", "fallback-window=1h"]]), "test");
    expect(log).toEqual(["post run", "terminate"]);
    expect(outcome.ok && outcome.trace.readings["G16"]).toBe("jitter=off, fallback-window=1h");
  });

  it("a scenario with errors comes back as its file:line:column errors", async () => {
    const outcome = await runSide(fakeWorker([]), side("name: x\ndomains: {}\n"), "test");
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? [] : outcome.errors[0]).toMatch(/^scenarios\/gap-G16-fallback-window-4h\.yaml:\d+:\d+: /);
  });
});
