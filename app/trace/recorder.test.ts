import { describe, expect, it } from "vitest";
import type { TraceEvent, UntypedTraceEvent } from "../ports.ts";
import { createRecorder, toJsonValue } from "./recorder.ts";
import { traceSchema } from "./schema.ts";

/** An event the catalogue's types refuse (no data, a made-up name), as a caller without them might emit it. */
const raw = (event: UntypedTraceEvent): TraceEvent => event as TraceEvent;

describe("recorder", () => {
  it("numbers events in the order emitted and keeps their fields", () => {
    const r = createRecorder();
    r.emit({ name: "dns.query", timeMs: 10, domain: "a.example", data: { name: "_svc.b.example", type: "SVCB" } });
    r.emit(raw({ name: "timer.fired", timeMs: 10 }));
    expect(r.events).toEqual([
      { seq: 0, timeMs: 10, name: "dns.query", domain: "a.example", data: { name: "_svc.b.example", type: "SVCB" } },
      { seq: 1, timeMs: 10, name: "timer.fired" },
    ]);
  });

  it("refuses an event name that events.ts does not list, unless told not to be strict", () => {
    expect(() => createRecorder().emit(raw({ name: "made.up", timeMs: 0 }))).toThrow(/unknown trace event "made.up"/);
    const lax = createRecorder({ strict: false });
    lax.emit(raw({ name: "made.up", timeMs: 0 }));
    expect(lax.events).toHaveLength(1);
  });

  it("turns event data into plain JSON (bytes, Headers, Map, Set, Date, URL, Error, cycles)", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    expect(
      toJsonValue({
        bytes: new Uint8Array([1, 2, 3]),
        headers: new Headers({ "X-B": "2", "x-a": "1" }),
        map: new Map([["k", 1]]),
        set: new Set(["x"]),
        date: new Date(Date.UTC(2026, 0, 1)),
        url: new URL("https://b.example/x"),
        error: new TypeError("nope"),
        nan: Number.NaN,
        big: 10n,
        missing: undefined,
        fn: () => 1,
        list: [undefined, 1],
        cyclic,
      }),
    ).toEqual({
      bytes: { base64: "AQID" },
      headers: { "x-a": "1", "x-b": "2" },
      map: { k: 1 },
      set: ["x"],
      date: "2026-01-01T00:00:00.000Z",
      url: "https://b.example/x",
      error: { name: "TypeError", message: "nope" },
      nan: null,
      big: "10",
      list: [null, 1],
      cyclic: { a: 1, self: "[circular]" },
    });
  });

  it("keeps a copy: an emitter changing its data after the event changes nothing recorded", () => {
    const r = createRecorder();
    const headers = { accept: "application/json" };
    const data: Record<string, unknown> = {
      url: "https://mx.b.example/v1/messages",
      headers,
      list: ["a"],
      gone: undefined,
    };
    r.emit(raw({ name: "http.request", timeMs: 1, domain: "a.example", data }));
    data["url"] = "changed";
    data["extra"] = 1;
    headers.accept = "text/plain";
    (data["list"] as string[]).push("b");
    expect(r.events[0]?.data).toEqual({
      url: "https://mx.b.example/v1/messages",
      headers: { accept: "application/json" },
      list: ["a"],
    });
    expect(Object.keys(r.events[0]?.data ?? {})).toEqual(["url", "headers", "list"]);
  });

  it("holds a frozen list of JSON values once for every event citing it, and copies any other list", () => {
    const r = createRecorder();
    const rules = Object.freeze(["STATE-4", "ERR-26"]);
    const odd = Object.freeze([1, Number.NaN]);
    const open = ["VER-5"];
    for (let i = 0; i < 2; i++) r.emit(raw({ name: "machine.transition", timeMs: i, data: { rules, odd, open } }));
    const [first, second] = r.events.map((e) => e.data as Record<string, unknown>);
    expect(first?.["rules"]).toBe(rules); // nobody can change it: shared, not copied
    expect(second?.["rules"]).toBe(rules);
    expect(first?.["odd"]).toEqual([1, null]); // not JSON as it is: converted, as any list
    expect(first?.["open"]).not.toBe(open);
    expect(first?.["open"]).toEqual(["VER-5"]);
    expect(JSON.stringify(first)).toBe('{"rules":["STATE-4","ERR-26"],"odd":[1,null],"open":["VER-5"]}');
  });

  it("stores the same events whether it encodes the emitter's data itself or a copy (nobody listening, or someone)", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    let deep: unknown = "bottom";
    for (let i = 0; i < 40; i++) deep = { next: deep, list: [i] };
    const holes: unknown[] = [1];
    holes[2] = 3;
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { b: 2, a: [1, "x"] });
    const datas: Record<string, unknown>[] = [
      { plain: "x", n: 3, f: 1.5, neg: -7, t: true, nothing: null, nested: { list: [1, "two", { three: 3 }] } },
      { rules: Object.freeze(["STATE-5", "ERR-23"]) },
      { frozenOdd: Object.freeze([1, Number.NaN, null]), frozenObjects: Object.freeze([{ a: 1 }]) },
      { dropped: undefined, kept: 1 },
      { items: [1, undefined, 3], holes, inf: Number.POSITIVE_INFINITY, negZero: -0 },
      { bytes: new Uint8Array([1, 2]), map: new Map([["k", 1]]), date: new Date(0) },
      { nullProto, withToJson: { toJSON: () => "mine" }, fn: () => 1 },
      JSON.parse('{"__proto__": {"x": 1}, "after": 2}') as Record<string, unknown>,
      { cyclic },
      { deep },
    ];
    const quiet = createRecorder();
    const heard = createRecorder();
    heard.subscribe(() => {});
    for (const data of datas) {
      for (const r of [quiet, heard]) r.emit(raw({ name: "timer.fired", timeMs: 5, domain: "a.example", data }));
    }
    const stored = (r: typeof quiet) => [...r.iterate()];
    expect(stored(quiet)).toStrictEqual(stored(heard));
    expect(JSON.stringify(stored(quiet))).toBe(JSON.stringify(stored(heard)));
    expect(stored(quiet)[1]?.data?.["rules"]).toBe(datas[1]?.["rules"]);
  });

  it("tells subscribers about each event as it is recorded, until they unsubscribe", () => {
    const r = createRecorder();
    const seen: number[] = [];
    const stop = r.subscribe((e) => seen.push(e.seq));
    r.emit(raw({ name: "timer.fired", timeMs: 1 }));
    stop();
    r.emit(raw({ name: "timer.fired", timeMs: 2 }));
    expect(seen).toEqual([0]);
  });

  it("builds a trace document that the schema accepts", () => {
    const r = createRecorder({ recordBodies: true });
    r.emit(raw({ name: "message.submitted", timeMs: 5, domain: "a.example", data: { messageId: "<m@a.example>" } }));
    const trace = r.toTrace({
      mailscope: "0.1.0",
      scenario: { name: "tiny" },
      seed: 1,
      readings: { G7: "enforced" },
      startedAtMs: 0,
    });
    expect(r.recordBodies).toBe(true);
    expect(trace).toMatchObject({ format: "mailscope-trace", version: 2, seed: 1, events: [{ seq: 0 }] });
    expect(traceSchema.safeParse(trace).success).toBe(true);
  });
});
