import { describe, expect, it } from "vitest";
import { runScenarioText } from "../sim/runScenario.ts";
import type { Trace } from "./schema.ts";
import { messagesOf, sequenceMermaid, sequenceOf } from "./sequence.ts";

const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });

/** The trace of `scenarios/<name>.yaml` run to its end. */
async function trace(name: string): Promise<Trace> {
  const run = await runScenarioText(library[`../../scenarios/${name}.yaml`] ?? "", { file: `scenarios/${name}.yaml` });
  if (!run.ok) throw new Error(run.errors.map((e) => e.message).join("\n"));
  return run.run.trace;
}

describe("the sequence diagram", () => {
  it("teach-mixed-recipient-results: the POST's response carries each recipient's result", async () => {
    const t = await trace("teach-mixed-recipient-results");
    const messages = messagesOf(t.events);
    expect(messages[0]).toBe("m0@a.example");
    const d = sequenceOf(t.events, "m0@a.example", t.startedAtMs);
    expect(d.participants).toEqual(["sender a.example", "DNS", "mx.b.example"]);
    const name = (i: number) => d.participants[i];
    expect(d.rows.map((r) => [r.kind, r.label, `${name(r.from)} → ${name(r.to)}`])).toEqual([
      ["dns-query", "SVCB _svc.b.example?", "sender a.example → DNS"],
      ["dns-answer", "_svc.b.example: mx.b.example", "DNS → sender a.example"],
      ["request", "GET /v1/capabilities", "sender a.example → mx.b.example"],
      ["response", "200", "mx.b.example → sender a.example"],
      ["request", "POST /v1/messages", "sender a.example → mx.b.example"],
      // The receiver looks up the signing key (AUTH rules) while it handles the POST: its own exchange.
      ["dns-query", "TXT s1._svckey.a.example?", "mx.b.example → DNS"],
      [
        "dns-answer",
        expect.stringMatching(/^s1\._svckey\.a\.example: v=svc1; k=ed25519; p=.{10}…$/),
        "DNS → mx.b.example",
      ],
      ["note", "stored in carol@b.example", "mx.b.example → mx.b.example"],
      ["note", "stored in dave@b.example", "mx.b.example → mx.b.example"],
      ["response", "200", "mx.b.example → sender a.example"],
    ]);
    expect(d.rows.at(-1)?.results).toEqual(["carol@b.example accepted", "dave@b.example accepted"]);
    const mixed = messages.map((m) => sequenceOf(t.events, m, t.startedAtMs)).flatMap((x) => x.rows);
    const results = new Set(mixed.flatMap((r) => r.results.map((s) => s.split(" ")[1])));
    expect(results).toEqual(new Set(["accepted", "rejected", "deferred"]));
  });

  it("receiver-down-past-fallback-window: refused connections are broken arrows, quiet spans compressed, SMTP at the end", async () => {
    const t = await trace("receiver-down-past-fallback-window");
    const d = sequenceOf(t.events, "m1@a.example", t.startedAtMs);
    expect(d.participants).toEqual(["sender a.example", "DNS", "mx.b.example", "SMTP relay"]);
    const failures = d.rows.filter((r) => r.kind === "failure");
    expect(failures).toHaveLength(8);
    expect(failures.every((r) => r.broken && r.label === "connection-refused (fault b-down)")).toBe(true);
    expect(d.rows.filter((r) => r.kind === "gap").map((r) => r.label)).toEqual([
      "… 2 min …",
      "… 4 min …",
      "… 8 min …",
      "… 16 min …",
      "… 32 min …",
      "… 1 h …",
    ]);
    expect(d.rows.at(-1)).toMatchObject({ kind: "handoff", label: "SMTP hand-off (fallback): bob@b.example" });
    const mermaid = sequenceMermaid(d, t.startedAtMs);
    expect(mermaid.split("\n").slice(0, 5)).toEqual([
      "sequenceDiagram",
      "  participant P1 as sender a.example",
      "  participant P2 as DNS",
      "  participant P3 as mx.b.example",
      "  participant P4 as SMTP relay",
    ]);
    expect(mermaid).toContain("  P3--xP1: +0:00:00 connection-refused (fault b-down)");
    expect(mermaid).toContain("  Note over P1,P4: … 1 h …");
  });

  it("teach-failure-after-acceptance — the DSN from the receiving domain's column, and its delivery", async () => {
    const t = await trace("teach-failure-after-acceptance");
    const d = sequenceOf(t.events, "m1@a.example", t.startedAtMs);
    expect(d.participants).toEqual(["sender a.example", "DNS", "mx.b.example", "sender b.example", "mx.a.example"]);
    const name = (i: number) => d.participants[i];
    const after = d.rows.slice(d.rows.findIndex((r) => r.kind === "gap") + 1);
    expect(after.map((r) => [r.kind, r.label, `${name(r.from)} → ${name(r.to)}`])).toEqual([
      // STATE-8: b.example's receiver found the failure after acceptance; b.example sends the DSN, as a new message.
      ["note", "failure after acceptance: bob@b.example", "mx.b.example → mx.b.example"],
      ["dsn", "DSN (failure-after-acceptance) to alice@a.example", "sender b.example → sender b.example"],
      ["dns-query", "SVCB _svc.a.example?", "sender b.example → DNS"],
      ["dns-answer", "_svc.a.example: mx.a.example", "DNS → sender b.example"],
      ["request", "GET /v1/capabilities [DSN]", "sender b.example → mx.a.example"],
      ["response", "200", "mx.a.example → sender b.example"],
      ["request", "POST /v1/messages [DSN]", "sender b.example → mx.a.example"],
      ["dns-query", "TXT s1._svckey.b.example?", "mx.a.example → DNS"],
      ["dns-answer", expect.stringMatching(/^s1\._svckey\.b\.example: v=svc1/), "DNS → mx.a.example"],
      ["note", "stored in alice@a.example", "mx.a.example → mx.a.example"],
      ["response", "200", "mx.a.example → sender b.example"],
    ]);
    // The rows cite their events: each row's seq is the event it draws.
    for (const r of d.rows.filter((x) => x.kind !== "gap")) {
      const e = t.events.find((x) => x.seq === r.seq);
      const kinds: Record<string, string[]> = {
        note: ["mailbox.delivered", "failure.after-acceptance", "delivery.bounced"],
        dsn: ["dsn.sent"],
        "dns-query": ["dns.query"],
        "dns-answer": ["dns.answer"],
        request: ["http.request"],
        response: ["http.response"],
      };
      expect(kinds[r.kind], `${r.kind} ${r.label}`).toContain(e?.name);
    }
  });

  it("on every bundled scenario, every exchange and every key lookup is drawn, from the actor that made it", async () => {
    for (const file of Object.keys(library)) {
      const t = await trace(file.replace(/^.*\/(.*)\.yaml$/, "$1"));
      // The messages no DSN reports on (a DSN's exchanges are drawn in its message's diagram).
      const dsns = new Set(t.events.filter((e) => e.name === "dsn.sent").map((e) => String(e.data?.["dsnMessageId"])));
      const diagrams = messagesOf(t.events)
        .filter((m) => !dsns.has(m))
        .map((m) => sequenceOf(t.events, m, t.startedAtMs));
      const drawn = new Set(
        diagrams.flatMap((d) => d.rows.filter((r) => r.kind === "request").map((r) => r.exchangeId)),
      );
      const requests = t.events.filter((e) => e.name === "http.request").map((e) => e.data?.["exchangeId"]);
      expect([...drawn].sort(), file).toEqual([...new Set(requests)].sort());
      // A key (TXT) lookup is a receiver's: drawn from a host's column, never a sender's.
      const lookups = diagrams.flatMap((d) =>
        d.rows.filter((r) => r.kind === "dns-query" && r.label.startsWith("TXT")).map((r) => d.participants[r.from]),
      );
      const txt = t.events.filter((e) => e.name === "dns.query" && e.data?.["type"] === "TXT").length;
      expect(lookups, file).toHaveLength(txt);
      for (const p of lookups) expect(p, file).not.toMatch(/^sender /);
    }
  });

  it("a time range shows every message's exchanges in it, each request marked with its message", async () => {
    const t = await trace("teach-mixed-recipient-results");
    const labels = new Map([
      ["m0@a.example", "m0"],
      ["m1@a.example", "m1"],
    ]);
    const minute = t.startedAtMs + 60_000;
    const d = sequenceOf(t.events, { fromMs: minute, toMs: minute }, t.startedAtMs, 60_000, labels);
    expect(d.rows.every((r) => r.timeMs === minute)).toBe(true);
    // m1's POST and its four per-recipient results; the DSN it caused, to a.example's own receiver.
    const posts = d.rows.filter((r) => r.kind === "request" && r.label.startsWith("POST"));
    expect(posts.map((r) => r.label)).toEqual([
      "POST /v1/messages [m1]",
      expect.stringMatching(/^POST \/v1\/messages \[dsn\./),
    ]);
    const m1 = d.rows.find((r) => r.kind === "response" && r.results.length === 4);
    expect(m1?.results).toEqual([
      "bob@b.example accepted",
      "nobody@b.example rejected",
      "carol@b.example deferred",
      "dave@b.example deferred",
    ]);
    expect(d.participants).toEqual(expect.arrayContaining(["sender a.example", "DNS", "mx.b.example", "mx.a.example"]));
    expect(d.rows.some((r) => r.kind === "dsn" && r.label === "DSN (rejected) to alice@a.example [m1]")).toBe(true);
    // Nothing of m0 (at +0:00:00) nor of the retry at +0:10:00.
    expect(d.rows.some((r) => r.label.includes("[m0]"))).toBe(false);
    // The whole run as a range holds every message's rows.
    const all = sequenceOf(t.events, { fromMs: t.startedAtMs, toMs: Infinity }, t.startedAtMs, 60_000, labels);
    const one = sequenceOf(t.events, "m1@a.example", t.startedAtMs);
    expect(all.rows.filter((r) => r.kind === "request").length).toBeGreaterThan(
      one.rows.filter((r) => r.kind === "request").length,
    );
  });
});
