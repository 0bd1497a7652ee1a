import { describe, expect, it } from "vitest";
import { lintAnswer } from "../../../app/receiver/lintChecks.ts";
import { runScenarioText } from "../../../app/sim/runScenario.ts";
import type { ReceiverOfRun } from "../../../app/sim/sessionProtocol.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import { receiversOfTrace } from "../session/replay.ts";
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
    // The fault kept it from the receiver, so no key was looked up then: the key record answered later holds,
    // and the check says where it came from (nothing presented as known when it was not).
    const checks = await exchangeChecks(t.events, "x2");
    expect(checks?.find((c) => c.check === "signature")).toMatchObject({
      status: "pass",
      detail: expect.stringContaining(
        "a DNS answer the trace recorded after this request (none was looked up for it)",
      ) as unknown as string,
    });
    const refused = exchangeView(t.events, "x3", t.startedAtMs);
    expect(refused?.failure).toMatchObject({ kind: "connection-refused", fault: "b-down" });
  });

  it("'In force when it was sent' holds only what was known then — no DNS answer recorded after the request", async () => {
    const t = await trace("rate-limited-then-down");
    const seqOf = (x: string) => t.events.find((e) => e.name === "http.request" && e.data?.["exchangeId"] === x)!.seq;
    // Attempt 1's POST (x2), answered 429 by a fault at +0:00:00: the receiver never saw it, so no key was looked
    // up for it; the key's TXT answered at +5d 0:00:00 (for the DSN's delivery) was not known then.
    const x2 = exchangeView(t.events, "x2", t.startedAtMs);
    expect(x2?.dns.map((a) => [a.name, a.type, a.at])).toEqual([["_svc.b.example", "SVCB", "+0:00:00"]]);
    for (const a of x2?.dns ?? []) expect(a.seq).toBeLessThan(seqOf("x2"));
    // A POST the receiver handled: the key it looked up while handling it (after the request, before the response).
    const mixed = await trace("teach-mixed-recipient-results");
    const post = exchangeView(mixed.events, "x2", mixed.startedAtMs);
    const key = post?.dns.find((a) => a.type === "TXT");
    expect(key?.name).toBe("s1._svckey.a.example");
    const request = mixed.events.find((e) => e.name === "http.request" && e.data?.["exchangeId"] === "x2")!;
    const response = mixed.events.find((e) => e.name === "receiver.response" && e.data?.["exchangeId"] === "x2")!;
    expect(key!.seq).toBeGreaterThan(request.seq);
    expect(key!.seq).toBeLessThan(response.seq);
    expect(key?.at).toBe("+0:00:00");
    // Every exchange of both runs: nothing in force was answered after the request's exchange ended.
    for (const run of [t, mixed])
      for (const e of run.events.filter((x) => x.name === "http.request")) {
        const id = String(e.data?.["exchangeId"]);
        const end = run.events.find(
          (x) => (x.name === "http.response" || x.name === "http.failure") && x.data?.["exchangeId"] === id,
        );
        for (const a of exchangeView(run.events, id, run.startedAtMs)?.dns ?? [])
          expect(a.seq, `${id} ${a.name}`).toBeLessThan(end?.seq ?? Infinity);
      }
  });

  it("the POST's message (headers, text preview), the DNS answers and capabilities in force", async () => {
    const t = await trace("teach-mixed-recipient-results");
    const x = exchangeView(t.events, "x3", t.startedAtMs);
    expect(x?.message?.headers).toContainEqual(["Subject", "Message m1"]);
    expect(x?.message?.headers).toContainEqual(["Message-ID", "<m1@a.example>"]);
    expect(x?.message?.preview).toBe("This is message m1, generated by Mailscope.");
    expect(x?.message?.moreLines).toBe(0);
    // The service record that named mx.b.example, answered at +0:01:00, and the signing key (DISC, SIG rules).
    expect(x?.dns.map((a) => [a.name, a.type, a.records])).toEqual([
      ["_svc.b.example", "SVCB", ["1 mx.b.example:443"]],
      ["s1._svckey.a.example", "TXT", [expect.stringMatching(/^v=svc1; k=ed25519; p=/)]],
    ]);
    expect(x?.dns[0]?.at).toBe("+0:01:00");
    // m1's delivery used the capabilities m0's fetched at +0:00:00, from the cache.
    expect(x?.capabilities).toMatchObject({ origin: "https://mx.b.example", maxAgeS: 3600 });
    expect(x?.capabilities?.document).toContain('"max_recipients": 100');
    // A DSN's body is a report: its headers folded lines unfolded.
    const dsn = exchangeView(t.events, "x5", t.startedAtMs);
    expect(dsn?.message?.headers).toContainEqual([
      "Content-Type",
      expect.stringMatching(/^multipart\/report; report-type=delivery-status; boundary=/),
    ]);
    // Without bodies, no message.
    const bare = await scenarioTrace("teach-mixed-recipient-results");
    expect(exchangeView(bare.events, "x3", bare.startedAtMs)?.message).toBeUndefined();
  });

  it("POST-22: the recipient-domain check runs with the run's receiver at the request's origin, and passes for a served domain", async () => {
    const t = await trace("teach-mixed-recipient-results");
    const line = (checks: Awaited<ReturnType<typeof exchangeChecks>>) =>
      checks?.find((c) => c.check === "recipient-domain");
    expect(line(await exchangeChecks(t.events, "x2", receiversOf(t)))).toMatchObject({
      status: "pass",
      detail: "b.example is served here",
    });
    // Without the run's receivers (a trace without its scenario's text), the check is not run, and says why.
    expect(line(await exchangeChecks(t.events, "x2"))).toMatchObject({
      status: "skip",
      detail:
        "not checked: which domains are served? (the run's receivers are not known: the trace carries no scenario text)",
    });
  });

  it("POST-22 ERR-16: c.example's service record names b.example's receiver, which does not serve c.example: the check fails with the receiver's own 400", async () => {
    const outcome = await runScenarioText(UNSERVED, { file: "unserved.yaml", recordBodies: true });
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
    const t = outcome.run.trace;
    const post = t.events.find((e) => e.name === "http.request" && e.data?.["method"] === "POST");
    const exchangeId = String(post?.data?.["exchangeId"]);
    const x = exchangeView(t.events, exchangeId, t.startedAtMs);
    expect(x?.url).toBe("https://mx.b.example/v1/messages");
    expect(x?.response?.status).toBe(400);
    const checks = await exchangeChecks(t.events, exchangeId, receiversOf(t));
    expect(checks?.find((c) => c.check === "recipient-domain")).toMatchObject({
      status: "fail",
      rule: "POST-22",
      detail: "c.example is not served here (served: b.example)",
    });
    expect(lintAnswer(checks ?? [])).toEqual({ status: 400, problem: "invalid_request", check: "recipient-domain" });
    expect(JSON.parse(x?.problem ?? "{}")).toMatchObject({
      type: "https://mailscope.example/problems/invalid_request",
    });
  });
});

/** The run's receivers as the app has them for an opened trace: read from its scenario's text. */
function receiversOf(t: Trace): ReceiverOfRun[] {
  return [...receiversOfTrace(t).values()];
}

/** c.example has no receiver of its own: its SVCB record sends senders to b.example's. */
const UNSERVED = `name: unserved
domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob]
  c.example:
    receiver: none
    svcb: ["1 mx.b.example. port=443"]
messages:
  - { from: alice@a.example, to: carol@c.example }
horizon: 1h
`;
