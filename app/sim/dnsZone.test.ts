import { describe, expect, it } from "vitest";
import type { DnsAnswer, SvcbRecord, UntypedTraceEvent } from "../ports.ts";
import { createDnsZone, svcbOwner, type DnsZoneInput, type SvcbPresentationParser } from "./dnsZone.ts";
import { createRandom } from "./random.ts";
import { createScheduler, type Scheduler } from "./scheduler.ts";

const HOUR_MS = 3_600_000;
const KEY_RECORD = "v=svc1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";

function setup(input: DnsZoneInput, seed: number | string = 1, parseSvcb?: SvcbPresentationParser) {
  const scheduler = createScheduler({ startMs: 0 });
  const events: UntypedTraceEvent[] = [];
  const zone = createDnsZone(input, {
    scheduler,
    random: createRandom(seed).fork("dns"),
    trace: { emit: (e) => events.push(e) },
    ...(parseSvcb ? { parseSvcb } : {}),
  });
  return { scheduler, zone, events };
}

/** Asks at virtual time `atMs` and runs the scheduler until the answer is in. */
async function askAt<T>(
  scheduler: Scheduler,
  atMs: number,
  ask: () => Promise<T>,
): Promise<{ answer: T; answeredAtMs: number }> {
  let result: { answer: T; answeredAtMs: number } | undefined;
  scheduler.at(atMs, async () => {
    const answer = await ask();
    result = { answer, answeredAtMs: scheduler.now() };
  });
  await scheduler.run();
  if (result === undefined) throw new Error("no answer");
  return result;
}

const bRecords: DnsZoneInput = {
  records: {
    "_svc.b.example": { svcb: [{ priority: 1, target: "mx.b.example", port: 8443, alpn: ["h2"] }], ttlS: 600 },
    "sel._svckey.a.example": { txt: [KEY_RECORD] },
    "only-txt.example": { txt: ["hello"] },
  },
};

describe("DNS zone: answers from data (SVC-5, G5 SVCB at _svc.<domain>, G4 key TXT records)", () => {
  it("answers SVCB and TXT records with their TTLs", async () => {
    const { scheduler, zone } = setup(bRecords);
    const resolver = zone.resolver("a.example");
    const svcb = await askAt(scheduler, 0, () => resolver.svcb(svcbOwner("B.Example.")));
    expect(svcb.answer).toEqual({
      kind: "answer",
      records: [{ priority: 1, target: "mx.b.example", port: 8443, alpn: ["h2"] }],
      ttlS: 600,
    });
    const txt = await askAt(scheduler, 0, () => resolver.txt("sel._svckey.a.example"));
    expect(txt.answer).toEqual({ kind: "answer", records: [KEY_RECORD], ttlS: 300 });
  });

  it("answers NXDOMAIN for an unknown name and NODATA for a name without that type (G6)", async () => {
    const { scheduler, zone } = setup(bRecords);
    const resolver = zone.resolver();
    expect((await askAt(scheduler, 0, () => resolver.svcb("_svc.nowhere.example"))).answer).toEqual({
      kind: "nxdomain",
    });
    expect((await askAt(scheduler, 0, () => resolver.svcb("only-txt.example"))).answer).toEqual({ kind: "nodata" });
  });

  it("parses presentation strings with the parser it is given, and says which record failed", async () => {
    const parser: SvcbPresentationParser = (text) => {
      const [priority, target] = text.split(" ");
      return priority !== undefined && target !== undefined && /^\d+$/.test(priority)
        ? { ok: true, value: { priority: Number(priority), target: target.replace(/\.$/, "") } }
        : { ok: false, violations: [{ path: "$", rule: "SVC-5", message: "not an SVCB record" }] };
    };
    const { scheduler, zone } = setup({ records: { "_svc.c.example": { svcb: ["1 mx.c.example."] } } }, 1, parser);
    const answer = await askAt(scheduler, 0, () => zone.resolver().svcb("_svc.c.example"));
    expect(answer.answer).toMatchObject({ kind: "answer", records: [{ priority: 1, target: "mx.c.example" }] });
    expect(() => setup({ records: { "_svc.d.example": { svcb: ["garbage"] } } }, 1, parser)).toThrow(
      /_svc\.d\.example: SVCB record 0 "garbage" does not parse: not an SVCB record \[SVC-5\]/,
    );
    expect(() => setup({ records: { "_svc.d.example": { svcb: ["1 x."] } } })).toThrow(/no parseSvcb/);
  });

  it("rejects malformed zone data with a path", () => {
    expect(() => setup({ records: { x: { svcb: [{ priority: -1, target: "t" }] } } })).toThrow(/priority/);
    expect(() => setup({ faults: [{ kind: "nxdomain", from: "soon" }] })).toThrow(/duration/);
  });
});

describe("DNS zone: latency and trace events", () => {
  it("answers after the virtual latency and traces dns.query then dns.answer with the asking domain", async () => {
    const { scheduler, zone, events } = setup({ ...bRecords, latency: 25 });
    const result = await askAt(scheduler, 1000, () => zone.resolver("a.example").svcb("_svc.b.example"));
    expect(result.answeredAtMs).toBe(1025);
    expect(events.map((e) => [e.name, e.timeMs, e.domain])).toEqual([
      ["dns.query", 1000, "a.example"],
      ["dns.answer", 1025, "a.example"],
    ]);
    expect(events[0]?.data).toEqual({ name: "_svc.b.example", type: "SVCB" });
    expect(events[1]?.data).toMatchObject({ name: "_svc.b.example", type: "SVCB", kind: "answer", ttlS: 600 });
  });

  it("samples a latency distribution from the seeded stream: same seed, same delays", async () => {
    const delays = async (seed: number): Promise<number[]> => {
      const { scheduler, zone } = setup(
        { ...bRecords, latency: { distribution: "uniform", minMs: 10, maxMs: 90 } },
        seed,
      );
      const out: number[] = [];
      for (let i = 0; i < 5; i++) {
        const start = i * 1000;
        out.push(
          (await askAt(scheduler, start, () => zone.resolver().txt("sel._svckey.a.example"))).answeredAtMs - start,
        );
      }
      return out;
    };
    const first = await delays(11);
    expect(await delays(11)).toEqual(first);
    expect(await delays(12)).not.toEqual(first);
    for (const d of first) expect(d >= 10 && d <= 90).toBe(true);
  });
});

describe("DNS zone: faults (G7, G8: failed DNS answers)", () => {
  it("NXDOMAIN and SERVFAIL faults replace the answer, scoped by name glob, type and asking domain", async () => {
    const { scheduler, zone, events } = setup({
      ...bRecords,
      faults: [
        { kind: "servfail", name: "_svc.*.example", type: "SVCB", source: "a.example", id: "svc-broken" },
        { kind: "nxdomain", name: "*._svckey.a.example" },
      ],
    });
    const fromA = zone.resolver("a.example");
    const fromC = zone.resolver("c.example");
    expect((await askAt(scheduler, 0, () => fromA.svcb("_svc.b.example"))).answer).toEqual({ kind: "servfail" });
    expect((await askAt(scheduler, 0, () => fromC.svcb("_svc.b.example"))).answer.kind).toBe("answer");
    expect((await askAt(scheduler, 0, () => fromC.txt("sel._svckey.a.example"))).answer).toEqual({ kind: "nxdomain" });
    expect(events.find((e) => e.name === "dns.answer")?.data).toMatchObject({ kind: "servfail", fault: "svc-broken" });
  });

  it("a timeout answers { kind: timeout } after the fault's delay, or the zone's timeoutMs", async () => {
    const { scheduler, zone } = setup({
      ...bRecords,
      latency: 10,
      timeoutMs: 4000,
      faults: [
        { kind: "timeout", type: "TXT", afterMs: 7000 },
        { kind: "timeout", type: "SVCB" },
      ],
    });
    const txt = await askAt(scheduler, 0, () => zone.resolver().txt("sel._svckey.a.example"));
    expect(txt).toEqual({ answer: { kind: "timeout" }, answeredAtMs: 7000 });
    const svcb = await askAt(scheduler, 10_000, () => zone.resolver().svcb("_svc.b.example"));
    expect(svcb).toEqual({ answer: { kind: "timeout" }, answeredAtMs: 14_000 });
  });

  it("applies only inside its time window (from inclusive, until exclusive, durations from the start)", async () => {
    const { scheduler, zone } = setup({ ...bRecords, faults: [{ kind: "servfail", from: "1h", until: "2h" }] });
    const kindAt = async (t: number): Promise<string> =>
      (await askAt(scheduler, t, () => zone.resolver().svcb("_svc.b.example"))).answer.kind;
    expect(await kindAt(HOUR_MS - 1)).toBe("answer");
    expect(await kindAt(HOUR_MS)).toBe("servfail");
    expect(await kindAt(2 * HOUR_MS - 1)).toBe("servfail");
    expect(await kindAt(2 * HOUR_MS)).toBe("answer");
  });

  it("draws its probability from the seeded stream: the same seed fails the same queries", async () => {
    const pattern = async (seed: number): Promise<string[]> => {
      const { scheduler, zone } = setup({ ...bRecords, faults: [{ kind: "servfail", probability: 0.5 }] }, seed);
      const kinds: string[] = [];
      for (let i = 0; i < 24; i++)
        kinds.push((await askAt(scheduler, i, () => zone.resolver().svcb("_svc.b.example"))).answer.kind);
      return kinds;
    };
    const first = await pattern(7);
    expect(await pattern(7)).toEqual(first);
    expect(await pattern(8)).not.toEqual(first);
    expect(first).toContain("servfail");
    expect(first).toContain("answer");
  });
});

describe("DNS zone: records that change over time", () => {
  it("follows a timeline of record sets, including removal (NXDOMAIN) and runtime changes", async () => {
    const { scheduler, zone } = setup({
      ...bRecords,
      changes: [
        { at: "2h", name: "_svc.b.example", records: null },
        { at: "1h", name: "_svc.b.example", records: { svcb: [{ priority: 1, target: "mx2.b.example" }] } },
      ],
    });
    const at = async (t: number): Promise<DnsAnswer<SvcbRecord>> =>
      (await askAt(scheduler, t, () => zone.resolver().svcb("_svc.b.example"))).answer;
    expect(await at(0)).toMatchObject({ records: [{ target: "mx.b.example" }] });
    expect(await at(HOUR_MS)).toMatchObject({ records: [{ target: "mx2.b.example" }] });
    expect(await at(2 * HOUR_MS)).toEqual({ kind: "nxdomain" });
    expect(zone.lookup("_svc.b.example", "SVCB", 30 * 60_000)).toMatchObject({ records: [{ target: "mx.b.example" }] });
    zone.set("_svc.b.example", { svcb: [{ priority: 2, target: "mx3.b.example" }] });
    expect(await at(3 * HOUR_MS)).toMatchObject({ records: [{ priority: 2, target: "mx3.b.example" }] });
  });
});

describe("DNS zone: faults and changes in the trace", () => {
  it("traces each fault's window when it is added", () => {
    const { events } = setup({
      faults: [
        { id: "svcb-down", kind: "servfail", name: "_svc.b.example", from: "1h", until: "2h" },
        { kind: "timeout", type: "TXT", source: "b.example", probability: 0.25 },
      ],
      timeoutMs: 3000,
    });
    expect(events).toEqual([
      {
        name: "fault.window",
        timeMs: 0,
        data: {
          id: "svcb-down",
          layer: "dns",
          kind: "servfail",
          scope: { name: "_svc.b.example" },
          fromMs: HOUR_MS,
          untilMs: 2 * HOUR_MS,
          probability: 1,
          settings: {},
        },
      },
      {
        name: "fault.window",
        timeMs: 0,
        data: {
          id: "1:timeout",
          layer: "dns",
          kind: "timeout",
          scope: { type: "TXT", source: "b.example" },
          fromMs: 0,
          untilMs: null,
          probability: 0.25,
          settings: { afterMs: 3000 },
        },
      },
    ]);
  });

  it("traces each scheduled change once, at its own time and in time order, and a change made with set at once", async () => {
    const { scheduler, zone, events } = setup({
      ...bRecords,
      changes: [
        { at: "2h", name: "_svc.b.example", records: { svcb: [{ priority: 1, target: "mx2.b.example" }] } },
        { at: "1h", name: "_svc.B.example.", records: null },
      ],
    });
    zone.traceChangesUntil(HOUR_MS - 1);
    expect(events).toEqual([]);
    zone.traceChangesUntil(3 * HOUR_MS);
    zone.traceChangesUntil(3 * HOUR_MS);
    expect(events.map((e) => [e.name, e.timeMs, e.data])).toEqual([
      ["dns.changed", HOUR_MS, { name: "_svc.b.example", records: null, cause: "scheduled" }],
      [
        "dns.changed",
        2 * HOUR_MS,
        {
          name: "_svc.b.example",
          records: { svcb: [{ priority: 1, target: "mx2.b.example" }], txt: [], ttlS: 300 },
          cause: "scheduled",
        },
      ],
    ]);
    await scheduler.runUntil(4 * HOUR_MS);
    zone.set("only-txt.example", { txt: ["bye"], ttlS: 60 });
    expect(events.at(-1)).toEqual({
      name: "dns.changed",
      timeMs: 4 * HOUR_MS,
      data: { name: "only-txt.example", records: { svcb: [], txt: ["bye"], ttlS: 60 }, cause: "set" },
    });
  });
});
