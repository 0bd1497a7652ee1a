import { describe, expect, it } from "vitest";
import type { Trace } from "../../../app/trace/schema.ts";
import { scenarioTrace } from "./testing.ts";
import { curlOf, exchangeChecks, exchangeView, rawHttpOf } from "./inspector.ts";

const trace = (name: string): Promise<Trace> => scenarioTrace(name, { recordBodies: true });

describe("the exchange inspector", () => {
  it("a POST of teach-mixed-recipient-results: request, signature input, digest, envelope, results, checks that pass", async () => {
    const t = await trace("teach-mixed-recipient-results");
    const x = exchangeView(t.events, "x2", t.startedAtMs);
    expect(x).toMatchObject({ method: "POST", requestLine: "POST /v1/messages HTTP/1.1", at: "+0:00:00" });
    expect(x?.signatureInput).toEqual([
      {
        label: "sig1",
        components: ["@method", "@target-uri", "content-type", "content-digest", "idempotency-key"],
        created: t.startedAtMs / 1000,
        keyid: "s1._svckey.a.example",
        alg: undefined,
      },
    ]);
    expect(x?.contentDigest).toMatch(/^sha-256=:/);
    expect(x?.signatureBase?.split("\n")).toEqual([
      '"@method": POST',
      '"@target-uri": https://mx.b.example/v1/messages',
      expect.stringMatching(/^"content-type": multipart\/mixed; boundary=/),
      expect.stringMatching(/^"content-digest": sha-256=:/),
      expect.stringMatching(/^"idempotency-key": /),
      expect.stringMatching(/^"@signature-params": \("@method" .*;created=\d+;keyid="s1\._svckey\.a\.example"$/),
    ]);
    expect(JSON.parse(x?.envelope ?? "{}")).toEqual({
      from: "alice@a.example",
      to: ["carol@b.example", "dave@b.example"],
    });
    expect(x?.response?.status).toBe(200);
    expect(x?.results.map((r) => `${r.recipient} ${r.status}`)).toEqual([
      "carol@b.example accepted",
      "dave@b.example accepted",
    ]);
    const checks = await exchangeChecks(t.events, "x2");
    expect(checks?.length).toBeGreaterThan(5);
    expect(checks?.filter((c) => c.status === "fail")).toEqual([]);
    const signature = checks?.find((c) => c.check === "signature");
    expect(signature?.status).toBe("pass");
    expect(checks?.some((c) => /digest/i.test(c.check) && c.status === "pass")).toBe(true);
    if (!x) throw new Error("no exchange");
    expect(rawHttpOf(x).split("\r\n")[0]).toBe("POST /v1/messages HTTP/1.1");
    expect(rawHttpOf(x)).toContain("\r\nhost: mx.b.example\r\n");
    expect(curlOf(x).split("\n")[0]).toBe("curl -X POST 'https://mx.b.example/v1/messages' \\");
  });

  it("a 429 of rate-limited-then-down: the problem document", async () => {
    const t = await trace("rate-limited-then-down");
    const x = exchangeView(t.events, "x2", t.startedAtMs);
    expect(x?.response).toMatchObject({ status: 429, fault: "rate-limited-once" });
    expect(JSON.parse(x?.problem ?? "{}")).toMatchObject({ type: "https://mailscope.example/problems/rate_limited" });
    // The fault kept it from the receiver, so no key was looked up then: the key record answered later holds.
    const checks = await exchangeChecks(t.events, "x2");
    expect(checks?.find((c) => c.check === "signature")?.status).toBe("pass");
    const refused = exchangeView(t.events, "x3", t.startedAtMs);
    expect(refused?.failure).toMatchObject({ kind: "connection-refused", fault: "b-down" });
  });
});
