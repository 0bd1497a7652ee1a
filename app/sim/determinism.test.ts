/**
 * Determinism (ARCHITECTURE.md "Determinism"): the same scenario and seed give
 * the same trace, byte for byte — twice in one process, in Node and in
 * Chromium, on the page and in a Web Worker. The hash in
 * fixtures/determinism.json was computed in Node; the Chromium run of this file
 * must reach the same one. When a change to the core changes traces on
 * purpose, run this file in Node and copy the hash it prints into the fixture.
 */
import { describe, expect, it } from "vitest";
import { traceHash } from "../trace/exportJson.ts";
import fixture from "./fixtures/determinism.json" with { type: "json" };
import { SCENARIO } from "./fixtures/determinismScenario.ts";
import { runScenarioText } from "./runScenario.ts";
import type { WorkerReply, WorkerRequest } from "./worker.ts";

const MAILSCOPE = "determinism-test";

async function nodeHash(): Promise<string> {
  const outcome = await runScenarioText(SCENARIO, { file: "determinism.yaml", mailscope: MAILSCOPE });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
  return traceHash(outcome.run.trace);
}

function runInWorker(request: WorkerRequest): Promise<WorkerReply> {
  const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
  return new Promise<WorkerReply>((resolve, reject) => {
    worker.addEventListener("message", (event: MessageEvent<WorkerReply>) => {
      worker.terminate();
      resolve(event.data);
    });
    worker.addEventListener("error", (event) => {
      worker.terminate();
      reject(new Error(`the worker failed: ${event.message}`));
    });
    worker.postMessage(request);
  });
}

/** In Chromium (the browser project): Node has no global Web Worker. */
const inBrowser = typeof Worker !== "undefined";

describe("determinism: the same scenario and seed give the same trace", () => {
  it("twice in one process: the same traceHash, and the fixture's (G16 jitter, seeded faults and latency)", async () => {
    const first = await nodeHash();
    const second = await nodeHash();
    expect(second).toBe(first);
    if (first !== fixture.hash) {
      console.log(
        `determinism.test.ts: the trace hash is now ${first}; if the change is intended, put it in app/sim/fixtures/determinism.json`,
      );
    }
    expect(first).toBe(fixture.hash);
  });

  it("another seed gives another trace", async () => {
    const outcome = await runScenarioText(SCENARIO, { mailscope: MAILSCOPE, seed: 1 });
    if (!outcome.ok) throw new Error("invalid");
    expect(await traceHash(outcome.run.trace)).not.toBe(fixture.hash);
  });

  it.runIf(inBrowser)("in a Web Worker: the same hash as on the page and as Node's fixture", async () => {
    const reply = await runInWorker({
      type: "run",
      id: 1,
      text: SCENARIO,
      file: "determinism.yaml",
      mailscope: MAILSCOPE,
    });
    expect(reply.type).toBe("result");
    if (reply.type !== "result") return;
    expect(reply.id).toBe(1);
    expect(reply.hash).toBe(await nodeHash());
    expect(reply.hash).toBe(fixture.hash);
  });

  it.runIf(inBrowser)("a worker answers a bad scenario with its errors, line and column", async () => {
    const reply = await runInWorker({ type: "run", text: "name: x\ndomains: {}\nfoo: 1\n", file: "bad.yaml" });
    expect(reply.type).toBe("invalid");
    if (reply.type === "invalid")
      expect(reply.errors).toContain(
        'bad.yaml:3:1: foo: unknown field "foo" (the fields are name, description, title, lesson, annotations, seed, start, horizon, problemBase, readings, constants, network, dns, domains, messages, faults, expectations)',
      );
  });
});
