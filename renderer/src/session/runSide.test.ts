/**
 * Each side runs in a worker of its own, asked with the
 * worker's one-shot `run` request; the worker ends with the run. A fake
 * worker here answers as app/sim/worker.ts does (handleWorkerRequest).
 */
import { describe, expect, it } from "vitest";
import g16 from "../../../scenarios/gap-G16-fallback-window-4h.yaml?raw";
import { forkSides, seedSides, type CompareBase, type CompareSide } from "../model/compare.ts";
import { runSide } from "./runSide.ts";
import { oneShotWorker } from "./testing.ts";
import { EML_BYTES, EML_SCENARIO } from "../../../app/sim/testing.ts";

const fakeWorker = oneShotWorker;

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

  describe("a scenario that takes a message from an eml: file (POST-9)", () => {
    const base = (emls?: Record<string, Uint8Array>): CompareBase => ({
      name: "raw",
      text: EML_SCENARIO,
      file: "raw.yaml",
      seed: 1,
      ...(emls !== undefined && { emls }),
      settings: [],
      readings: {},
      startMs: Date.UTC(2026, 0, 1),
      playheadOffsetMs: 0,
    });

    it("each side's run gets the bytes the run on screen had (two seeds, and a fork)", async () => {
      const sides = [
        ...seedSides(base({ "mail/hello.eml": EML_BYTES }), "1", "2"),
        ...(() => {
          const fork = forkSides(base({ "mail/hello.eml": EML_BYTES }), 0, {
            kind: "submit",
            from: "alice@a.example",
            to: ["bob@b.example"],
          });
          if (!fork.ok) throw new Error(fork.errors.join("; "));
          return fork.sides;
        })(),
      ];
      for (const s of sides) {
        const outcome = await runSide(fakeWorker([]), s, "test");
        expect(outcome.ok ? outcome.passed : outcome.errors).toBe(true);
        const submitted = outcome.ok ? outcome.trace.events.find((e) => e.name === "message.submitted") : undefined;
        expect(submitted?.data?.["messageId"]).toBe("hello@a.example");
      }
    });

    it("without the bytes, a side fails with the live run's message at the message's eml field", async () => {
      const [a] = seedSides(base(), "1", "2");
      const outcome = await runSide(fakeWorker([]), a, "test");
      expect(outcome.ok ? [] : outcome.errors).toEqual([
        "raw.yaml:6:62: messages[0].eml: cannot read mail/hello.eml: its bytes were not given with the scenario: the app does not read eml: files (mailscope run does; a bug bundle it writes with --bundle carries them)",
      ]);
    });
  });
});
