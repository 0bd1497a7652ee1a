import { describe, expect, it } from "vitest";
import { loadScenario } from "../sim/scenario.ts";
import { createWorld } from "../sim/world.ts";
import { checkScenarioRun } from "../sim/runScenario.ts";
import { createRecorder } from "./recorder.ts";
import type { TraceEvent, UntypedTraceEvent } from "../ports.ts";
import type { RecordedEvent } from "./schema.ts";
import { eventsNamed, eventsOf, heldEventsOf, TraceStore } from "./store.ts";
import { exportJson, traceHash } from "./exportJson.ts";

const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });

/** A store holding `events`, numbered in order. */
function storeOf(events: readonly Omit<RecordedEvent, "seq">[]): TraceStore {
  const store = new TraceStore();
  events.forEach((event, seq) => store.append({ seq, ...event }));
  return store;
}

const json = (events: Iterable<RecordedEvent>): string[] => [...events].map((e) => JSON.stringify(e));

describe("the trace store (decision 0195)", () => {
  it("is empty before anything is stored: no event by seq, none to iterate, an empty array", () => {
    const store = new TraceStore();
    expect(store.length).toBe(0);
    expect(store.at(0)).toBeUndefined();
    expect(store.at(-1)).toBeUndefined();
    expect([...store]).toEqual([]);
    expect(store.toArray()).toEqual([]);
  });

  it("reads back odd values as JSON writes them: unicode, → in ids, large and negative numbers, fractions, -0, null, nesting, key order", () => {
    const events: Omit<RecordedEvent, "seq">[] = [
      { timeMs: 1_767_225_600_000, name: "dns.query" },
      { timeMs: 1.5, name: "dns.query", domain: "ä.example" },
      {
        timeMs: -3,
        name: "machine.transition",
        domain: "a.example",
        data: {
          deliveryActor: "m1@a.example→b.example",
          text: 'héllo 🌍 \u0000 "quoted" \\ end',
          long: "→".repeat(100) + "x".repeat(500),
          big: Number.MAX_SAFE_INTEGER,
          beyond: 2 ** 60,
          negative: -Number.MAX_SAFE_INTEGER,
          fraction: -0.1,
          tiny: 5e-324,
          zero: 0,
          negativeZero: -0,
          nothing: null,
          flags: [true, false, null],
          nested: { z: 1, a: { deeper: [[1, [2, { b: "c" }]], {}] }, "10": "numeric key", "2": "first" },
          empty: "",
          emptyList: [],
        },
      },
      // The same keys in another order is another shape; a key absent is not a key null.
      { timeMs: 0, name: "x.y", data: { b: 1, a: 2 } },
      { timeMs: 0, name: "x.y", data: { a: 2, b: 1 } },
      { timeMs: 0, name: "x.y", data: { a: 2 } },
      { timeMs: 0, name: "x.y", data: { a: 2, b: null } },
      { timeMs: 0, name: "x.y", data: {} },
    ];
    const store = storeOf(events);
    const expected = events.map((e, seq) => JSON.stringify({ seq, ...e }));
    expect(json(store)).toEqual(expected);
    expect(events.map((_, seq) => JSON.stringify(store.at(seq)))).toEqual(expected);
    const odd = store.at(2)?.data as Record<string, unknown>;
    expect(Object.is(odd["negativeZero"], -0)).toBe(true);
    expect(odd["beyond"]).toBe(2 ** 60);
    expect(Object.keys(odd["nested"] as object)).toEqual(["2", "10", "z", "a"]);
    expect(Object.keys(store.at(3)?.data ?? {})).toEqual(["b", "a"]);
    expect("b" in (store.at(5)?.data ?? {})).toBe(false);
  });

  it("keeps a `__proto__` member as a member, not as the object's prototype", () => {
    const data = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const store = storeOf([{ timeMs: 0, name: "x.y", data }]);
    const back = store.at(0)?.data as Record<string, unknown>;
    expect(JSON.stringify(back)).toBe(JSON.stringify(data));
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("gives back a frozen list of primitives as the same list (a transition's rules, held once); copies any other", () => {
    const rules = Object.freeze(["RETRY-1", "RETRY-2"]);
    const open = ["RETRY-1"];
    const store = storeOf([
      { timeMs: 0, name: "x.y", data: { rules } },
      { timeMs: 1, name: "x.y", data: { rules, open } },
    ]);
    expect(store.at(0)?.data?.["rules"]).toBe(rules);
    expect(store.at(1)?.data?.["rules"]).toBe(rules);
    expect(store.at(1)?.data?.["open"]).not.toBe(open);
    expect(store.at(1)?.data?.["open"]).toEqual(open);
  });

  it("finds any seq and iterates any range across many chunks, and events larger than a chunk", () => {
    const big = "b".repeat(300 * 1024); // more than a chunk, inline
    const events = Array.from({ length: 20_000 }, (_, i) => ({
      timeMs: 1000 + i * 7,
      name: "http.request",
      ...(i % 3 === 0 && { domain: `d${i % 100}.example` }),
      data: { url: `https://mx.d${i % 100}.example/v1/messages`, n: i, body: i === 12_345 ? big : `body ${i}` },
    }));
    const store = storeOf(events);
    expect(store.length).toBe(20_000);
    for (const seq of [0, 1, 9_999, 12_344, 12_345, 12_346, 19_999]) {
      expect(JSON.stringify(store.at(seq))).toBe(JSON.stringify({ seq, ...events[seq] }));
    }
    expect(store.at(20_000)).toBeUndefined();
    expect(store.at(1.5)).toBeUndefined();
    expect([...store.events(12_344, 12_347)].map((e) => e.seq)).toEqual([12_344, 12_345, 12_346]);
    expect([...store.events(19_998)].map((e) => e.seq)).toEqual([19_998, 19_999]);
    expect([...store.events(5, 5)]).toEqual([]);
    let seq = 0;
    for (const e of store) expect(e.seq).toBe(seq++);
    expect(seq).toBe(20_000);
    // Encoded, well under what the same events take as JSON text.
    expect(store.encodedBytes).toBeLessThan(JSON.stringify(events).length);
  });

  it("reads only the events of the names asked, in order with their seqs, across chunks and in any range", () => {
    const names = ["dns.query", "dns.answer", "http.request"] as const;
    const events = Array.from({ length: 5_000 }, (_, i) => ({
      timeMs: i,
      name: names[i % 3] as string,
      data: { i, padding: "p".repeat(200 + (i % 7)) },
    }));
    const store = storeOf(events);
    const wanted = new Set(["dns.answer", "http.request"]);
    const all = [...store];
    expect(json(store.eventsNamed(wanted))).toEqual(json(all.filter((e) => wanted.has(e.name))));
    expect(json(store.eventsNamed(wanted, 1_234, 3_001))).toEqual(
      json(all.slice(1_234, 3_001).filter((e) => wanted.has(e.name))),
    );
    expect([...store.eventsNamed(new Set(["dsn.sent"]))]).toEqual([]);
    expect([...store.eventsNamed(new Set())]).toEqual([]);
    // eventsNamed on anything else filters as it reads; a recorder's iterate() reads its store by name, or its array.
    expect(json(eventsNamed(all, wanted))).toEqual(json(all.filter((e) => wanted.has(e.name))));
    const recorder = createRecorder({ strict: false });
    for (const e of events) recorder.emit(e as UntypedTraceEvent as TraceEvent);
    const fromStore = json(recorder.iterate(10, 4_000).named(wanted));
    expect(fromStore).toEqual(json(all.slice(10, 4_000).filter((e) => wanted.has(e.name))));
    expect(recorder.events).toHaveLength(5_000); // now the recorder holds the array
    expect(json(recorder.iterate(10, 4_000).named(wanted))).toEqual(fromStore);
  });

  it("refuses an event whose seq is not the next one", () => {
    const store = new TraceStore();
    expect(() => store.append({ seq: 1, timeMs: 0, name: "x.y" })).toThrow(/seq 1 appended at position 0/);
  });

  it("reads back every event of every bundled scenario byte for byte, in order and by seq (the recorder's too)", async () => {
    const names = Object.keys(library);
    expect(names.length).toBeGreaterThan(40);
    for (const path of names) {
      const load = await loadScenario(library[path] ?? "", { file: path });
      if (!load.ok) throw new Error(`${path}: ${load.errors.map((e) => e.message).join("; ")}`);
      const world = await createWorld(load.loaded.scenario, { emls: load.loaded.emls });
      // What the recorder made of each event, before it was encoded (those the world emitted as it was built
      // are read back as they are), each also stored in a store of the test's own.
      const store = new TraceStore();
      const made: string[] = [];
      const keep = (event: RecordedEvent): void => {
        made.push(JSON.stringify(event));
        store.append(event);
      };
      for (const event of world.recorder.iterate()) keep(event);
      world.recorder.subscribe(keep);
      const { complete } = await world.run();
      // The recorder's own store, before anything had its events built as objects.
      expect(json(world.recorder.iterate()), path).toEqual(made);
      expect(
        made.map((_, seq) => JSON.stringify(world.recorder.at(seq))),
        path,
      ).toEqual(made);
      // Then the checks' events too.
      const run = checkScenarioRun(world, load.loaded, { complete });
      expect(made.length, path).toBe(world.recorder.length);
      expect(json(store), path).toEqual(made);
      expect(
        made.map((_, seq) => JSON.stringify(store.at(seq))),
        path,
      ).toEqual(made);
      expect(json(run.trace.events), path).toEqual(made);
    }
  }, 120_000);
});

describe("the recorder over its store", () => {
  it("builds the events array only when asked, then keeps it up to date", () => {
    const r = createRecorder();
    r.emit({ name: "dns.query", timeMs: 1, data: { name: "_svc.b.example", type: "SVCB" } });
    const events = r.events;
    expect(events.map((e) => e.seq)).toEqual([0]);
    r.emit({ name: "dns.query", timeMs: 2, data: { name: "_svc.c.example", type: "SVCB" } });
    expect(events.map((e) => e.seq)).toEqual([0, 1]);
    expect(r.length).toBe(2);
    expect(r.at(1)?.data?.["name"]).toBe("_svc.c.example");
    // Once built, the passes read the objects themselves (nothing to decode).
    expect([...r.iterate(1)][0]).toBe(events[1]);
    expect(r.at(0)).toBe(events[0]);
  });

  it("iterates again from the start on every pass, up to the events recorded when asked", () => {
    const r = createRecorder();
    r.emit({ name: "dns.query", timeMs: 1, data: { name: "_svc.b.example", type: "SVCB" } });
    const all = r.iterate();
    r.emit({ name: "dns.query", timeMs: 2, data: { name: "_svc.c.example", type: "SVCB" } });
    expect([...all].map((e) => e.seq)).toEqual([0]);
    expect([...all].map((e) => e.seq)).toEqual([0]);
    expect([...r.iterate(1)].map((e) => e.seq)).toEqual([1]);
  });

  it("a trace document builds its events when first read, in their place in the document, and keeps them", () => {
    const r = createRecorder();
    r.emit({ name: "dns.query", timeMs: 1, data: { name: "_svc.b.example", type: "SVCB" } });
    const trace = r.toTrace({
      mailscope: "test",
      scenario: { name: "s" },
      seed: 1,
      readings: {},
      startedAtMs: 0,
      invariants: [],
    });
    r.emit({ name: "dns.query", timeMs: 2, data: { name: "_svc.c.example", type: "SVCB" } });
    expect(Object.keys(trace)).toEqual([
      "format",
      "version",
      "mailscope",
      "scenario",
      "seed",
      "readings",
      "startedAtMs",
      "events",
      "invariants",
    ]);
    const first = trace.events;
    expect(first.map((e) => e.seq)).toEqual([0]);
    expect(trace.events).toBe(first);
    expect(JSON.parse(JSON.stringify(trace)).events).toEqual(first);
    expect(structuredClone(trace).events).toEqual(first);
  });

  it("a trace document's hash and JSON export read the events from the store, without building its array", async () => {
    const r = createRecorder();
    r.emit({ name: "dns.query", timeMs: 1, domain: "a.example", data: { name: "_svc.b.example", type: "SVCB" } });
    r.emit({ name: "dns.query", timeMs: 2.5, data: { name: "_svc.c.example →", type: "SVCB" } });
    const meta = { mailscope: "test", scenario: { name: "s" }, seed: 1, readings: {}, startedAtMs: 0 };
    const trace = r.toTrace(meta);
    const hash = await traceHash(trace);
    const text = exportJson(trace);
    expect(eventsOf(trace).length).toBe(2);
    expect(heldEventsOf(trace)).toBeDefined(); // still not built
    // The same document as plain objects (its events built) hashes and exports the same.
    const plain = r.toTrace(meta);
    expect(plain.events).toHaveLength(2);
    expect(heldEventsOf(plain)).toBeUndefined();
    expect(await traceHash(plain)).toBe(hash);
    expect(exportJson(plain)).toBe(text);
  });
});
