import { describe, expect, it } from "vitest";
import { emlTraceWithBodies } from "../sim/testingRuns.ts";
import { exportHar, type HarEntry } from "./exportHar.ts";
import { sampleTrace } from "./sampleTrace.ts";

const START = Date.UTC(2026, 0, 1);

/** The fields HAR 1.2 marks required, checked by hand (no validator dependency). */
function requiredFieldProblems(entry: HarEntry): string[] {
  const problems: string[] = [];
  const need = (ok: boolean, what: string): void => {
    if (!ok) problems.push(what);
  };
  need(
    !Number.isNaN(Date.parse(entry.startedDateTime)) && entry.startedDateTime.endsWith("Z"),
    "startedDateTime ISO 8601",
  );
  need(typeof entry.time === "number" && entry.time >= 0, "time");
  const { request, response, timings } = entry;
  need(
    typeof request.method === "string" && typeof request.url === "string" && typeof request.httpVersion === "string",
    "request line",
  );
  for (const list of [request.cookies, request.headers, request.queryString, response.cookies, response.headers]) {
    need(
      Array.isArray(list) && list.every((p) => typeof p.name === "string" && typeof p.value === "string"),
      "name/value lists",
    );
  }
  need(typeof request.headersSize === "number" && typeof request.bodySize === "number", "request sizes");
  need(typeof response.status === "number" && typeof response.statusText === "string", "status");
  need(typeof response.httpVersion === "string" && typeof response.redirectURL === "string", "response line");
  need(typeof response.content.size === "number" && typeof response.content.mimeType === "string", "content");
  need(typeof response.headersSize === "number" && typeof response.bodySize === "number", "response sizes");
  need(typeof entry.cache === "object", "cache");
  need(
    [timings.send, timings.wait, timings.receive].every((t) => typeof t === "number" && t >= 0),
    "send/wait/receive",
  );
  need(
    [timings.blocked, timings.dns, timings.connect, timings.ssl].every((t) => t === -1 || t >= 0),
    "optional timings",
  );
  need(Math.abs(entry.time - (timings.send + timings.wait + timings.receive)) < 1e-9, "time is the sum of timings");
  for (const key of Object.keys(entry)) {
    const known = [
      "startedDateTime",
      "time",
      "request",
      "response",
      "cache",
      "timings",
      "pageref",
      "serverIPAddress",
      "connection",
      "comment",
    ];
    need(known.includes(key) || key.startsWith("_"), `custom field ${key} starts with _`);
  }
  return problems;
}

describe("HAR 1.2 export", () => {
  it("has the log fields HAR requires", () => {
    const har = exportHar(sampleTrace());
    expect(har.log.version).toBe("1.2");
    expect(har.log.creator).toEqual({ name: "Mailscope", version: "0.1.0" });
    expect(har.log.entries).toHaveLength(3);
    for (const entry of har.log.entries) expect(requiredFieldProblems(entry)).toEqual([]);
    // It survives a JSON round trip unchanged: plain data only.
    expect(JSON.parse(JSON.stringify(har))).toEqual(har);
  });

  it("pairs each request with its answer, with virtual times as timings", () => {
    const [caps, lost, retry] = exportHar(sampleTrace(), { full: true }).log.entries;
    expect(caps).toMatchObject({
      startedDateTime: new Date(START + 40).toISOString(),
      time: 40,
      timings: { send: 0, wait: 40, receive: 0 },
      request: { method: "GET", url: "https://mx.b.example:8443/v1/capabilities", bodySize: 0 },
      response: {
        status: 200,
        content: { size: 47, mimeType: "application/json", text: '{"versions":["v1"],"max_message_size":26214400}' },
      },
      _exchangeId: "x1",
      _domain: "a.example",
    });
    expect(caps?.request).not.toHaveProperty("postData");
    // The simulator, serve and send speak HTTP/1.1.
    expect(caps?.request.httpVersion).toBe("HTTP/1.1");
    expect(caps?.response.httpVersion).toBe("HTTP/1.1");
    expect(retry).toMatchObject({
      startedDateTime: new Date(START + 120 + 60_000).toISOString(),
      time: 540,
      timings: { wait: 40, receive: 500 },
      request: { queryString: [{ name: "trace", value: "1" }], postData: { mimeType: "multipart/mixed; boundary=b1" } },
      response: { status: 200, statusText: "OK" },
      _bodyDigest: { request: "sha-256=:abc=:", response: "sha-256=:ghi=:" },
    });
    expect(retry?.request.headers).toContainEqual({ name: "idempotency-key", value: "k-0001" });
    expect(lost).toMatchObject({
      time: 40,
      response: { status: 0, statusText: "", _error: "connection-reset", bodySize: -1, content: { size: 0 } },
      _fault: "0:connection-reset",
    });
  });

  it("a GET recorded with its (empty) body, as --full records it, carries no postData", () => {
    const trace = sampleTrace();
    const withBodies = {
      ...trace,
      events: trace.events.map((e) =>
        e.name === "http.request" && e.data?.["method"] === "GET" ? { ...e, data: { ...e.data, body: "" } } : e,
      ),
    };
    const [caps] = exportHar(withBodies).log.entries;
    expect(caps?.request.method).toBe("GET");
    expect(caps?.request).not.toHaveProperty("postData");
  });

  it("a binary body (recorded in base64) says encoding base64, request and response; a UTF-8 one says nothing", () => {
    const trace = sampleTrace();
    const binary = "/wD+gA=="; // 0xff 0x00 0xfe 0x80: not UTF-8
    const inBase64 = (data: Readonly<Record<string, unknown>>): Record<string, unknown> => {
      const { body: _text, ...rest } = data;
      return { ...rest, bodyBase64: binary };
    };
    // x2's POST and x3's answer in base64; x3's POST and x1's answer stay text.
    const bent = {
      ...trace,
      events: trace.events.map((e) => {
        const x = e.data?.["exchangeId"];
        if ((x === "x2" && e.name === "http.request") || (x === "x3" && e.name === "http.response"))
          return { ...e, data: inBase64(e.data ?? {}) };
        return e;
      }),
    };
    const entries = exportHar(bent, { full: true }).log.entries;
    const of = (x: string) => entries.find((e) => e._exchangeId === x);
    expect(of("x2")?.request.postData).toMatchObject({ text: binary, _encoding: "base64" });
    expect(of("x3")?.response.content).toMatchObject({ text: binary, encoding: "base64" });
    expect(of("x3")?.request.postData?.text).toMatch(/^--b1\r?\n/);
    expect(of("x3")?.request.postData).not.toHaveProperty("_encoding");
    expect(of("x1")?.response.content.text).toContain("max_message_size");
    expect(of("x1")?.response.content).not.toHaveProperty("encoding");
    for (const entry of entries) expect(requiredFieldProblems(entry)).toEqual([]);
  });

  it("keeps an exchange with no recorded answer, marked as such", () => {
    const trace = sampleTrace();
    const cut = {
      ...trace,
      events: trace.events.filter((e) => !(e.name === "http.response" && e.data?.["exchangeId"] === "x3")),
    };
    const entry = exportHar(cut).log.entries[2];
    expect(entry?.response).toMatchObject({ status: 0, _error: "no answer recorded" });
    expect(entry?.time).toBe(0);
  });
});

describe('the HAR follows "with message bodies", and says what it left out', () => {
  const recorded = emlTraceWithBodies;

  it("POST-9: without `full`, no request or response body: each left out says so, and the log's comment", async () => {
    const trace = await recorded();
    // The run recorded the message: the trace holds its body.
    expect(JSON.stringify(trace.events)).toContain("Hi Bob");
    const har = exportHar(trace);
    // Before: the bodies went in whatever the box said.
    expect(JSON.stringify(har)).not.toContain("Hi Bob");
    const post = har.log.entries.find((e) => e.request.method === "POST");
    expect(post?.request.postData).toMatchObject({
      text: "",
      comment: "body left out: exported without message bodies",
    });
    expect(post?.request.bodySize).toBeGreaterThan(0);
    expect(post?.response.content).toMatchObject({ comment: "body left out: exported without message bodies" });
    expect(post?.response.content).not.toHaveProperty("text");
    expect(har.log.comment).toBe("Scenario raw, seed 1; times are virtual. Left out: message bodies and private keys.");
  });

  it("POST-9: with `full`, the bodies as recorded, and the comment says only the keys were left out", async () => {
    const trace = await recorded();
    const har = exportHar(trace, { full: true });
    const post = har.log.entries.find((e) => e.request.method === "POST");
    expect(post?.request.postData?.text).toContain("Hi Bob");
    expect(post?.request.postData).not.toHaveProperty("comment");
    expect(har.log.comment).toMatch(/Left out: private keys \(message bodies kept\)\.$/);
    // A run that recorded no bodies says so.
    const sample = sampleTrace();
    const none = { ...sample, events: sample.events.filter((e) => !e.name.startsWith("http.")) };
    expect(exportHar(none, { full: true }).log.comment).toMatch(
      /Left out: private keys \(the run recorded no message bodies\)\.$/,
    );
  });
});
