import { describe, expect, it } from "vitest";
import { probeCases, selectCases } from "./cases.ts";
import { runProbe, type ProbeRun } from "./probe.ts";
import { inProcessProbe, MISBEHAVIOURS, type Misbehaviour } from "./testing.ts";
import { eventMisfits } from "../trace/events.ts";

async function probe(kind?: Misbehaviour): Promise<ProbeRun> {
  const { options, ports } = await inProcessProbe(kind);
  return runProbe(options, ports);
}

const resultsOf = (run: ProbeRun): Record<string, string> =>
  Object.fromEntries(run.verdicts.map((v) => [v.id, v.result]));

describe("mailscope probe against a receiver with switchable misbehaviours", () => {
  let baseline: Record<string, string> | undefined;
  const base = async (): Promise<Record<string, string>> => (baseline ??= resultsOf(await probe()));

  it("POST-11, AUTH-5: against the receiver that follows the spec every MUST and SHOULD case passes", async () => {
    const run = await probe();
    const results = resultsOf(run);
    expect(Object.keys(results)).toEqual(probeCases.map((c) => c.id));
    const notPassed = run.verdicts.filter((v) => v.result !== "PASS").map((v) => `${v.id}: ${v.result} ${v.why ?? ""}`);
    // retry-after is skipped: a receiver that follows the spec answers no 429 or 503 to the probe.
    expect(notPassed).toEqual([expect.stringMatching(/^retry-after: SKIP no 429 or 503/)]);
    expect(run.exitCode).toBe(0);
    baseline = results;
  }, 60_000);

  for (const [kind, { breaks, what }] of Object.entries(MISBEHAVIOURS) as [
    Misbehaviour,
    (typeof MISBEHAVIOURS)[Misbehaviour],
  ][]) {
    const rules = breaks.map((id) => probeCases.find((c) => c.id === id)?.rule).join(", ");
    it(`${rules}: ${what} is caught by ${breaks.join(", ")}, and no other case changes`, async () => {
      const before = await base();
      const after = resultsOf(await probe(kind));
      const changed = Object.keys(before).filter((id) => before[id] !== after[id]);
      expect(changed.sort()).toEqual([...breaks].sort());
      for (const id of breaks) expect(after[id], id).toBe("FAIL");
    }, 60_000);
  }
});

describe("selectCases: --only and --skip by case id, rule ID or prefix", () => {
  it("AUTH-5: a rule ID selects every case citing it; a prefix a whole section", () => {
    expect(selectCases(["AUTH-5"], []).map((c) => c.id)).toContain("signature-stale");
    expect(selectCases(["CAP"], []).every((c) => c.rules.some((r) => r.startsWith("CAP-")))).toBe(true);
    expect(selectCases([], ["tls13", "CAP"]).some((c) => c.id === "tls13" || c.rule.startsWith("CAP-"))).toBe(false);
  });
});

describe("mailscope probe: what it sends, and bad receivers", () => {
  it("POST-24, POST-20: only an idempotent request answered 503 is sent again, once, after its Retry-After; never the rest", async () => {
    const { options, ports, harness } = await inProcessProbe();
    const sent = new Map<string, number>();
    const unkeyed: string[] = [];
    const run = await runProbe(options, {
      ...ports,
      fetch: async (request) => {
        const key = request.headers.get("idempotency-key");
        if (request.method === "POST" && request.url.endsWith("/v1/messages")) {
          if (key === null) unkeyed.push(request.url);
          else sent.set(key, (sent.get(key) ?? 0) + 1);
          if (request.body !== null) await request.arrayBuffer();
          return new Response(JSON.stringify({ type: "https://mailscope.example/problems/temporary_failure" }), {
            status: 503,
            headers: { "content-type": "application/problem+json", "retry-after": "2" },
          });
        }
        return harness.receiver(request);
      },
    });
    const byCase = (id: string): number =>
      [...sent.entries()].filter(([k]) => k.startsWith(`probe-${id}-`)).reduce((n, [, c]) => n + c, 0);
    // A well-formed key is a delivery the receiver would replay: sent twice.
    expect(byCase("deliver")).toBe(2);
    // Not idempotent: the oversized body and the keys the receiver cannot replay (too long, bad characters).
    expect(byCase("too-large")).toBe(1);
    expect(sent.get("k".repeat(129))).toBe(1);
    expect(sent.get("probe key!")).toBe(1);
    // Without a key the delivery is not idempotent: sent once.
    expect(unkeyed).toHaveLength(1);
    const deliver = run.verdicts.find((v) => v.id === "deliver");
    expect(deliver?.exchanges).toHaveLength(2);
    expect(run.verdicts.find((v) => v.id === "retry-after")?.result).toBe("PASS");
  });

  it("AUTH-5: a key the receiver does not trust: the delivery's 401 is explained, and no case past the signature is judged", async () => {
    const { options, ports, harness } = await inProcessProbe();
    harness.resolver.setTxt(options.identity?.keyid ?? "", []);
    const run = await runProbe({ ...options, lookupKey: true }, ports);
    const deliver = run.verdicts.find((v) => v.id === "deliver");
    expect(deliver?.result).toBe("FAIL");
    expect(deliver?.actual).toMatch(/^401 invalid_signature/);
    expect(deliver?.why).toContain(`does not trust keyid ${options.identity?.keyid ?? ""}`);
    expect(deliver?.why).toContain(`IN TXT "${options.identity?.keyRecord ?? ""}"`);
    expect(deliver?.why).toContain("DNS has no TXT record at");
    for (const id of ["signature-stale", "envelope-empty-to", "too-large", "replay"])
      expect(run.verdicts.find((v) => v.id === id)?.why, id).toMatch(/refuses the probe's correctly signed delivery/);
    expect(run.exitCode).toBe(1);
  });

  it("SVC-6: an origin that cannot be reached: tls13 fails saying why, every other case is skipped, nothing is sent", async () => {
    const { options, ports } = await inProcessProbe();
    let requests = 0;
    const run = await runProbe(options, {
      ...ports,
      fetch: () => {
        requests += 1;
        return Promise.reject(new Error("unreachable"));
      },
      tls: () =>
        Promise.resolve({
          outcome: "failed",
          failure: "connection-refused",
          message: "connect ECONNREFUSED 127.0.0.1:9",
        }),
    });
    expect(requests).toBe(0);
    expect(run.verdicts[0]).toMatchObject({
      id: "tls13",
      result: "FAIL",
      actual: "no connection: connect ECONNREFUSED 127.0.0.1:9",
    });
    expect(run.verdicts.slice(1).every((v) => v.result === "SKIP" && v.why?.includes("cannot be reached"))).toBe(true);
    expect(run.exitCode).toBe(1);
  });

  it("AUTH-8: an origin that does not speak TLS 1.3: tls13 fails, nothing else is asked", async () => {
    const { options, ports } = await inProcessProbe();
    const run = await runProbe(options, {
      ...ports,
      tls: () => Promise.resolve({ outcome: "refused", failure: "tls", message: "tlsv1 alert protocol version" }),
    });
    expect(run.verdicts[0]).toMatchObject({ id: "tls13", result: "FAIL" });
    expect(run.verdicts.filter((v) => v.result === "SKIP")).toHaveLength(run.verdicts.length - 1);
  });

  it("a receiver that stops answering: each request times out, and after three in a row the probe stops", async () => {
    const { options, ports } = await inProcessProbe();
    let requests = 0;
    const run = await runProbe(options, {
      ...ports,
      fetch: () => {
        requests += 1;
        return Promise.reject(new (class extends Error {})("no progress within 10000 ms"));
      },
    });
    expect(requests).toBe(3);
    expect(run.verdicts.find((v) => v.id === "capabilities-200")).toMatchObject({ result: "FAIL" });
    expect(run.verdicts.find((v) => v.id === "deliver")?.why).toMatch(/stopped answering/);
    expect(run.exitCode).toBe(1);
  });

  it("the plan: a receiver that follows the spec stores 2 messages, at most the plan's bound if it takes everything", async () => {
    const { options, ports, harness } = await inProcessProbe();
    const run = await runProbe(options, ports);
    expect(run.plan).toMatchObject({
      cases: probeCases.length,
      messages: 2,
      mailboxes: ["bob@b.example", "carol@b.example"],
    });
    const stored = harness.trace.named("mailbox.delivered").map((e) => String(e.data?.["mailbox"]));
    expect(stored.sort()).toEqual(["bob@b.example", "bob@b.example", "carol@b.example"]);
    expect(run.plan.messagesAtMost).toBeGreaterThanOrEqual(2 + 20);
    expect(run.trace.events[0]?.name).toBe("probe.started");
  });

  it("its trace's events, and the receiver's, fit the event catalogue field by field (app/trace/events.ts)", async () => {
    const { options, ports, harness } = await inProcessProbe();
    const run = await runProbe(options, ports);
    const names = new Set(run.trace.events.map((e) => e.name));
    for (const name of ["probe.started", "probe.tls", "probe.case", "http.request", "http.response"]) {
      expect(names).toContain(name);
    }
    expect([...run.trace.events, ...harness.trace.events].flatMap(eventMisfits)).toEqual([]);
  });

  it("ENV-4, MBX-6: every envelope names only --mailbox, --absent's addresses or ones nobody can have; at --rate 2 requests start 500 ms apart", async () => {
    const { options, ports } = await inProcessProbe(undefined, (o) => ({ ...o, requestsPerSecond: 2 }));
    const recipients = new Set<string>();
    const run = await runProbe(options, {
      ...ports,
      fetch: async (request) => {
        // The envelope parts of bodies small enough to read (the oversized body names --mailbox alone too, but is 25 MiB).
        if (Number(request.headers.get("content-length") ?? "0") < 1_000_000) {
          const text = await request.clone().text();
          for (const [, json] of text.matchAll(/\r\n\r\n(\{[^\r\n]*\})\r\n/g)) {
            try {
              const to = (JSON.parse(json ?? "") as { to?: unknown }).to;
              if (Array.isArray(to)) for (const r of to) recipients.add(String(r));
            } catch {
              // envelope-not-json: no recipient to read
            }
          }
        }
        return ports.fetch(request);
      },
    });
    const nobodyCanHave = (r: string): boolean =>
      !r.includes("@") || r.endsWith(".invalid") || r.slice(0, r.lastIndexOf("@")).length > 64;
    const allowed = (r: string): boolean =>
      options.mailboxes.includes(r) ||
      options.mailboxes.includes(r.replace(/^"([^"]*)"@/, "$1@")) ||
      /^nobody\d*@b\.example$/.test(r) ||
      nobodyCanHave(r);
    expect(recipients.size).toBeGreaterThan(5);
    expect([...recipients].filter((r) => !allowed(r))).toEqual([]);
    // --rate 2: no two requests start less than 500 ms apart (on the probe's clock).
    const starts = run.trace.events.filter((e) => e.name === "http.request").map((e) => e.timeMs);
    expect(starts.length).toBe(run.plan.requests);
    expect(starts.slice(1).filter((t, i) => t - (starts[i] ?? 0) < 500)).toEqual([]);
  });

  it("SVC-5: a recipient domain is discovered as a sender would: SVCB at _svc.<domain>, traced, then probed at its origin", async () => {
    const { options, ports, harness } = await inProcessProbe(undefined, (o) => ({ ...o, target: "b.example" }));
    const urls: string[] = [];
    const run = await runProbe(
      { ...options, cases: selectCases(["capabilities-200"], []) },
      {
        ...ports,
        resolver: {
          svcb: (name) =>
            Promise.resolve(
              name === "_svc.b.example"
                ? { kind: "answer", records: [{ priority: 1, target: "mx.b.example", port: 8443 }], ttlS: 300 }
                : { kind: "nxdomain" },
            ),
          txt: (name) => harness.resolver.txt(name),
        },
        fetch: (request) => {
          urls.push(request.url);
          return harness.receiver(request);
        },
      },
    );
    expect(run.origin).toBe("https://mx.b.example:8443");
    expect(urls).toEqual(["https://mx.b.example:8443/v1/capabilities"]);
    expect(run.trace.events.slice(1, 3).map((e) => `${e.name} ${String(e.data?.["name"])}`)).toEqual([
      "dns.query _svc.b.example",
      "dns.answer _svc.b.example",
    ]);
    const none = await runProbe({ ...options, cases: selectCases(["capabilities-200"], []) }, ports);
    expect(none.verdicts[0]).toMatchObject({ id: "capabilities-200", result: "FAIL" });
    expect(none.verdicts[0]?.actual).toMatch(
      /^no endpoint: SVCB at _svc\.b\.example has no usable record \(nxdomain\)/,
    );
    expect(none.exitCode).toBe(1);
  });
});
