import { describe, expect, it } from "vitest";
import { TransportError, type UntypedTraceEvent } from "../ports.ts";
import { bodyBytesOf, requestWithBody, responseWithBody } from "../protocol/bodies.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { traceHash } from "../trace/exportJson.ts";
import { createRecorder } from "../trace/recorder.ts";
import { createDnsZone } from "./dnsZone.ts";
import { createMemoryStorage, installLocalStorageStandIn } from "./mswGuard.ts";
import {
  createNetwork,
  EMPTY_SHA256_FIELD,
  networkFaultSchema,
  sha256Field,
  sha256FieldInline,
  type NetworkFaultInput,
  type NetworkOptions,
} from "./network.ts";
import { createRandom } from "./random.ts";
import { createScheduler, type Scheduler } from "./scheduler.ts";

const B_ORIGIN = "https://mx.b.example:8443";
const CAPABILITIES = { versions: ["v1"], max_message_size: 26214400 };

/** A stand-in receiver: capabilities on GET, a delivery result on POST; counts what it handled. */
function fakeReceiver() {
  const handled: string[] = [];
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    handled.push(`${request.method} ${url.pathname}`);
    if (request.method === "GET" && url.pathname === "/v1/capabilities") {
      return Response.json(CAPABILITIES, { headers: { "cache-control": "max-age=3600" } });
    }
    const body = await request.text();
    return Response.json({ results: [{ recipient: "bob@b.example", status: "accepted" }], echoed: body.length });
  };
  return { handled, handler };
}

function setup(faults: NetworkFaultInput[] = [], extra: Partial<NetworkOptions> = {}, seed = 1) {
  const scheduler = createScheduler({ startMs: 0 });
  const events: UntypedTraceEvent[] = [];
  const network = createNetwork({
    scheduler,
    random: createRandom(seed).fork("network"),
    trace: { emit: (e) => events.push(e) },
    faults,
    ...extra,
  });
  const b = fakeReceiver();
  network.mount(B_ORIGIN, b.handler, { domain: "b.example" });
  const c = fakeReceiver();
  network.mount("https://c.example", c.handler);
  return { scheduler, network, events, b, c };
}

type Outcome = { response: Response; body: string; atMs: number } | { error: unknown; atMs: number };

/** Sends `request` from `source` at virtual time `atMs`, runs the world, returns what came back and when. */
async function send(
  ctx: { scheduler: Scheduler; network: ReturnType<typeof createNetwork> },
  source: string,
  request: () => Request,
  atMs = ctx.scheduler.now(),
): Promise<Outcome> {
  let outcome: Outcome | undefined;
  ctx.scheduler.at(atMs, async () => {
    try {
      const response = await ctx.network.fetchFor(source)(request());
      const body = await response.text();
      outcome = { response, body, atMs: ctx.scheduler.now() };
    } catch (error) {
      outcome = { error, atMs: ctx.scheduler.now() };
    }
  });
  await ctx.scheduler.run();
  if (outcome === undefined) throw new Error("the exchange never ended");
  return outcome;
}

const getCapabilities =
  (origin = B_ORIGIN) =>
  () =>
    new Request(`${origin}/v1/capabilities`);
const postMessage =
  (origin = B_ORIGIN) =>
  () =>
    new Request(`${origin}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "multipart/mixed; boundary=x", "idempotency-key": "k1" },
      body: "--x\r\n...message...\r\n--x--\r\n",
    });

function transportKind(outcome: Outcome): string | undefined {
  return "error" in outcome && outcome.error instanceof TransportError ? outcome.error.kind : undefined;
}

function statusOf(outcome: Outcome): number | undefined {
  return "response" in outcome ? outcome.response.status : undefined;
}

describe("network: routing through msw handlers", () => {
  it("delivers a request to the receiver mounted at its origin (host and port) and traces the exchange", async () => {
    const ctx = setup();
    const outcome = await send(ctx, "a.example", postMessage());
    expect(statusOf(outcome)).toBe(200);
    expect(ctx.b.handled).toEqual(["POST /v1/messages"]);
    expect(ctx.c.handled).toEqual([]);
    const [request, response] = ctx.events;
    expect(request).toMatchObject({ name: "http.request", domain: "a.example", timeMs: 0 });
    const sent = new TextEncoder().encode("--x\r\n...message...\r\n--x--\r\n");
    expect(request?.data).toEqual({
      exchangeId: "x1",
      method: "POST",
      url: "https://mx.b.example:8443/v1/messages",
      headers: { "content-type": "multipart/mixed; boundary=x", "idempotency-key": "k1" },
      bodySize: sent.length,
      bodyDigest: await sha256Field(sent),
    });
    expect(response).toMatchObject({ name: "http.response", domain: "a.example" });
    expect(response?.data).toMatchObject({
      exchangeId: "x1",
      status: 200,
      headers: { "content-type": "application/json" },
    });
    expect(response?.data).not.toHaveProperty("body");
  });

  it("traces each fault's window when it is added: id, layer, kind, scope, from/until, probability, settings", () => {
    const ctx = setup([
      { id: "slow", kind: "latency", latency: 200, host: "mx.b.example", from: "1m", until: 120_000, probability: 0.5 },
      { kind: "capabilities-invalid" },
    ]);
    expect(ctx.events.map((e) => [e.name, e.timeMs, e.data])).toEqual([
      [
        "fault.window",
        0,
        {
          id: "slow",
          layer: "network",
          kind: "latency",
          scope: { host: "mx.b.example" },
          fromMs: 60_000,
          untilMs: 120_000,
          probability: 0.5,
          settings: { latency: 200 },
        },
      ],
      [
        "fault.window",
        0,
        {
          id: "1:capabilities-invalid",
          layer: "network",
          kind: "capabilities-invalid",
          scope: { path: "/v1/capabilities", method: "GET" },
          fromMs: 0,
          untilMs: null,
          probability: 1,
          settings: { contentType: "application/json" },
        },
      ],
    ]);
  });

  it("hands the receiver the exchange's id, called directly or behind faults", async () => {
    for (const faults of [[], [{ kind: "latency", latency: 5 }]] as NetworkFaultInput[][]) {
      const ctx = setup(faults);
      const seen: unknown[] = [];
      ctx.network.mount("https://mx.d.example", (request, context) => {
        seen.push(context);
        return Promise.resolve(new Response(null, { status: 204 }));
      });
      await send(ctx, "a.example", getCapabilities("https://mx.d.example"));
      await send(ctx, "a.example", getCapabilities("https://mx.d.example"));
      expect(seen).toEqual([{ exchangeId: "x1" }, { exchangeId: "x2" }]);
    }
  });

  it("POST-9: a request whose body is at hand reaches the receiver as the sender's own Request, and its answer the sender as the receiver's own Response; any other is handed on with the same bytes", async () => {
    for (const faults of [[], [{ kind: "latency", latency: 5 }]] as NetworkFaultInput[][]) {
      const ctx = setup(faults);
      const bytes = new TextEncoder().encode("--x\r\n...message...\r\n--x--\r\n");
      const answer = new TextEncoder().encode('{"results":[]}');
      const received: Request[] = [];
      const answered: Response[] = [];
      ctx.network.mount("https://mx.d.example", (request) => {
        received.push(request);
        const response = responseWithBody(answer, { status: 200, headers: { "content-type": "application/json" } });
        answered.push(response);
        return Promise.resolve(response);
      });
      const fetch = ctx.network.fetchFor("a.example");
      const ours = requestWithBody("https://mx.d.example/v1/messages", { method: "POST" }, bytes);
      const foreign = new Request("https://mx.d.example/v1/messages", { method: "POST", body: bytes.slice() });
      const got: Response[] = [];
      ctx.scheduler.at(0, async () => void got.push(await fetch(ours)));
      ctx.scheduler.at(1, async () => void got.push(await fetch(foreign)));
      await ctx.scheduler.run();
      expect(received[0]).toBe(ours);
      expect(bodyBytesOf(ours)).toBe(bytes);
      expect(got[0]).toBe(answered[0]);
      // The foreign request was read (its bytes traced) and handed on as a copy whose body is at hand.
      expect(received[1]).not.toBe(foreign);
      expect(bodyBytesOf(received[1] as Request)).toEqual(bytes);
      expect(got[1]).toBe(answered[1]);
      const traced = ctx.events.filter((e) => e.name === "http.request").map((e) => e.data?.["bodyDigest"]);
      expect(traced).toEqual([await sha256Field(bytes), await sha256Field(bytes)]);
    }
  });

  it("POST-5: a body at hand whose maker gave its SHA-256 is traced with that digest, not hashed again", async () => {
    const ctx = setup([]);
    const bytes = new TextEncoder().encode("--x\r\n...message...\r\n--x--\r\n");
    ctx.network.mount("https://mx.d.example", () => Promise.resolve(new Response(null, { status: 204 })));
    const fetch = ctx.network.fetchFor("a.example");
    const field = await sha256Field(bytes);
    // A field no hash of these bytes gives shows that the network took the maker's and computed none.
    const claimed = `sha-256=:${"A".repeat(43)}=:`;
    const url = "https://mx.d.example/v1/messages";
    ctx.scheduler.at(0, () => fetch(requestWithBody(url, { method: "POST" }, bytes, claimed)));
    ctx.scheduler.at(1, () => fetch(requestWithBody(url, { method: "POST" }, bytes)));
    await ctx.scheduler.run();
    const traced = ctx.events.filter((e) => e.name === "http.request").map((e) => e.data?.["bodyDigest"]);
    expect(traced).toEqual([claimed, field]);
  });

  it("POST-5: an answer given again with the same bytes at hand (a capabilities document) is hashed once for the trace", async () => {
    const ctx = setup([]);
    const document = new TextEncoder().encode('{"versions":["v1"]}');
    ctx.network.mount("https://mx.d.example", () =>
      Promise.resolve(responseWithBody(document, { status: 200, headers: { "content-type": "application/json" } })),
    );
    const fetch = ctx.network.fetchFor("a.example");
    let hashed = 0;
    const restore = useCryptoProvider({ digestNow: () => void hashed++ });
    try {
      for (let i = 0; i < 3; i++) ctx.scheduler.at(i, () => fetch(new Request("https://mx.d.example/v1/capabilities")));
      await ctx.scheduler.run();
    } finally {
      restore();
    }
    const traced = ctx.events.filter((e) => e.name === "http.response").map((e) => e.data?.["bodyDigest"]);
    expect(traced).toEqual([1, 2, 3].map(() => sha256FieldInline(document)));
    expect(hashed).toBe(1);
  });

  it("POST-5: a body-less exchange's bodyDigest is SHA-256 of no bytes, the same as computed", async () => {
    expect(EMPTY_SHA256_FIELD).toBe(await sha256Field(new Uint8Array(0)));
    expect(sha256FieldInline(new Uint8Array(0))).toBe(EMPTY_SHA256_FIELD);
    const ctx = setup();
    await send(ctx, "a.example", getCapabilities());
    expect(ctx.events[0]?.data).toMatchObject({ method: "GET", bodySize: 0, bodyDigest: EMPTY_SHA256_FIELD });
  });

  it("puts whole bodies in the trace only when asked (recordBodies)", async () => {
    const ctx = setup([], { recordBodies: true });
    await send(ctx, "a.example", postMessage());
    expect(ctx.events[0]?.data).toMatchObject({ body: "--x\r\n...message...\r\n--x--\r\n" });
    expect(ctx.events[1]?.data).toMatchObject({ body: expect.stringContaining('"accepted"') as unknown });
  });

  it("keeps a recorded body's bytes exactly: a leading byte order mark stays in the text (recordBodies)", async () => {
    const ctx = setup([], { recordBodies: true });
    const bom = "\uFEFFSubject: hi\r\n\r\nhello\r\n";
    await send(ctx, "a.example", () => new Request(`${B_ORIGIN}/v1/messages`, { method: "POST", body: bom }));
    const recorded = ctx.events[0]?.data?.["body"];
    expect(recorded).toBe(bom);
    expect(new TextEncoder().encode(String(recorded))).toEqual(new TextEncoder().encode(bom));
  });

  it("refuses a request nothing listens for (wrong port, unknown host): connection-refused (ERR-21)", async () => {
    const ctx = setup();
    expect(transportKind(await send(ctx, "a.example", getCapabilities("https://mx.b.example")))).toBe(
      "connection-refused",
    );
    expect(transportKind(await send(ctx, "a.example", getCapabilities("https://nowhere.example")))).toBe(
      "connection-refused",
    );
    expect(ctx.events.filter((e) => e.name === "http.failure").map((e) => e.data?.["kind"])).toEqual([
      "connection-refused",
      "connection-refused",
    ]);
    expect(ctx.b.handled).toEqual([]);
  });

  it("validates fault descriptions and fills in defaults", () => {
    expect(networkFaultSchema.parse({ kind: "timeout" })).toMatchObject({ afterMs: 30_000 });
    expect(networkFaultSchema.parse({ kind: "rate-limited" })).toMatchObject({ retryAfterS: 60 });
    expect(() => networkFaultSchema.parse({ kind: "gremlins" })).toThrow();
    expect(() => networkFaultSchema.parse({ kind: "latency", latency: { distribution: "pareto" } })).toThrow();
    expect(() => networkFaultSchema.parse({ kind: "tls-failure", from: "yesterday" })).toThrow(/duration/);
  });
});

describe("network: transport faults (ERR-21: connection and TLS failures are temporary_failure)", () => {
  it("connection-refused never reaches the receiver", async () => {
    const ctx = setup([{ kind: "connection-refused", host: "mx.b.example" }]);
    expect(transportKind(await send(ctx, "a.example", postMessage()))).toBe("connection-refused");
    expect(ctx.b.handled).toEqual([]);
    expect(ctx.events.at(-1)).toMatchObject({
      name: "http.failure",
      data: { kind: "connection-refused", fault: "0:connection-refused" },
    });
  });

  it("connection-reset before the request is read: the receiver never sees it", async () => {
    const ctx = setup([{ kind: "connection-reset" }]);
    expect(transportKind(await send(ctx, "a.example", postMessage()))).toBe("connection-reset");
    expect(ctx.b.handled).toEqual([]);
  });

  it("connection-reset after the receiver handled the request: delivered, but the answer is lost (POST-12 replays)", async () => {
    const ctx = setup([{ kind: "connection-reset", phase: "response", id: "lost-answer" }]);
    expect(transportKind(await send(ctx, "a.example", postMessage()))).toBe("connection-reset");
    expect(ctx.b.handled).toEqual(["POST /v1/messages"]);
    expect(ctx.events.at(-1)?.data).toMatchObject({ kind: "connection-reset", fault: "lost-answer" });
  });

  it("tls-failure is a TransportError of kind tls (SVC-6, AUTH-7: TLS 1.3 is mandatory)", async () => {
    const ctx = setup([{ kind: "tls-failure" }]);
    expect(transportKind(await send(ctx, "a.example", getCapabilities()))).toBe("tls");
  });

  it("ERR-21: a fault that refuses the connection for certain fails the exchange as its msw handler does (drawn with probability 1)", async () => {
    const refusals: NetworkFaultInput[] = [
      { kind: "connection-refused", host: "mx.b.example" },
      { kind: "connection-reset" },
      { kind: "tls-failure", from: 0, until: "1h" },
      { kind: "partition", between: ["a.example", "b.example"], failure: "connection-refused" },
    ];
    for (const fault of refusals) {
      const outcomes = [];
      // Without a probability the network fails the exchange itself; with 1, msw runs the fault's handler.
      for (const spec of [fault, { ...fault, probability: 1 }]) {
        const ctx = setup([spec, { kind: "rate-limited" }]);
        const outcome = await send(ctx, "a.example", getCapabilities());
        expect(ctx.b.handled).toEqual([]);
        const error = "error" in outcome ? (outcome.error as TransportError) : undefined;
        outcomes.push({ kind: error?.kind, message: error?.message, failure: ctx.events.at(-1) });
      }
      expect(outcomes[0]?.kind).toBeDefined();
      expect(outcomes[0]).toEqual(outcomes[1]);
    }
  });

  it("ERR-21: a TransportError is an outcome, not a fault of the code: kind, name and message, no stack frames; other errors keep theirs", () => {
    const error = new TransportError("connection-refused", "nothing listens at https://mx.b.example");
    expect([error.kind, error.name, error.message]).toEqual([
      "connection-refused",
      "TransportError",
      "nothing listens at https://mx.b.example",
    ]);
    expect(error).toBeInstanceOf(Error);
    expect(error.stack ?? "").not.toMatch(/\n\s+at /);
    expect(new Error("other").stack ?? "").toMatch(/\n\s+at /);
  });

  it("timeout throws after its virtual delay, on the virtual clock", async () => {
    const ctx = setup([{ kind: "timeout", afterMs: 20_000 }]);
    const outcome = await send(ctx, "a.example", getCapabilities(), 1000);
    expect(transportKind(outcome)).toBe("timeout");
    expect(outcome.atMs).toBe(21_000);
    expect(ctx.events.at(-1)).toMatchObject({ name: "http.failure", timeMs: 21_000 });
  });

  it("an aborted request rejects with the abort reason when the sender's (virtual) timer fires", async () => {
    const ctx = setup([{ kind: "timeout", afterMs: 60_000 }]);
    const controller = new AbortController();
    ctx.scheduler.at(5000, () => controller.abort());
    const outcome = await send(
      ctx,
      "a.example",
      () => new Request(`${B_ORIGIN}/v1/capabilities`, { signal: controller.signal }),
    );
    expect("error" in outcome && (outcome.error as Error).name).toBe("AbortError");
    expect(outcome.atMs).toBe(5000);
    expect(ctx.events.at(-1)).toMatchObject({ name: "http.failure", timeMs: 5000, data: { kind: "aborted" } });
  });
});

describe("network: HTTP faults in front of the receiver", () => {
  it("503 temporary_failure with a Retry-After (POST-20), or without one", async () => {
    const ctx = setup([{ kind: "unavailable", retryAfterS: 120, path: "/v1/messages" }], {
      problemBase: () => "https://b.example/problems/",
    });
    const outcome = await send(ctx, "a.example", postMessage());
    expect(statusOf(outcome)).toBe(503);
    if (!("response" in outcome)) throw new Error("no response");
    expect(outcome.response.headers.get("retry-after")).toBe("120");
    expect(outcome.response.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(outcome.body)).toEqual({
      type: "https://b.example/problems/temporary_failure",
      title: "Temporary failure",
      status: 503,
    });
    expect(ctx.b.handled).toEqual([]);
    // The capabilities path is outside the fault's path scope.
    expect(statusOf(await send(ctx, "a.example", getCapabilities()))).toBe(200);

    const bare = setup([{ kind: "unavailable", problem: false }]);
    const plain = await send(bare, "a.example", postMessage());
    expect(statusOf(plain)).toBe(503);
    if (!("response" in plain)) throw new Error("no response");
    expect(plain.response.headers.get("retry-after")).toBeNull();
    expect(plain.response.headers.get("content-type")).toBe("text/plain");
  });

  it("5xx without a problem document (ERR-21)", async () => {
    const ctx = setup([{ kind: "server-error", status: 502, body: "Bad Gateway" }]);
    const outcome = await send(ctx, "a.example", postMessage());
    expect(statusOf(outcome)).toBe(502);
    expect("body" in outcome && outcome.body).toBe("Bad Gateway");
  });

  it("429 rate_limited with Retry-After (POST-19, ERR-8), a verbatim header for G21", async () => {
    const ctx = setup([{ kind: "rate-limited", retryAfter: "Wed, 01 Jan 2026 01:00:00 GMT" }]);
    const outcome = await send(ctx, "a.example", postMessage());
    expect(statusOf(outcome)).toBe(429);
    if (!("response" in outcome)) throw new Error("no response");
    expect(outcome.response.headers.get("retry-after")).toBe("Wed, 01 Jan 2026 01:00:00 GMT");
    expect(JSON.parse(outcome.body)).toMatchObject({ type: "https://mx.b.example/problems/rate_limited", status: 429 });
  });

  it("403 policy_rejected (POST-15, ERR-3)", async () => {
    const ctx = setup([{ kind: "forbidden" }]);
    const outcome = await send(ctx, "a.example", postMessage());
    expect(statusOf(outcome)).toBe(403);
    expect("body" in outcome && JSON.parse(outcome.body)).toMatchObject({
      type: "https://mx.b.example/problems/policy_rejected",
    });
  });

  it("an invalid capabilities document, only on GET /v1/capabilities (GET-9)", async () => {
    const ctx = setup([{ kind: "capabilities-invalid" }]);
    const caps = await send(ctx, "a.example", getCapabilities());
    expect(statusOf(caps)).toBe(200);
    expect("body" in caps && JSON.parse(caps.body)).toEqual({ versions: ["v1"], max_message_size: 1024 });
    expect(statusOf(await send(ctx, "a.example", postMessage()))).toBe(200);
    expect(ctx.b.handled).toEqual(["POST /v1/messages"]);

    const notJson = setup([{ kind: "capabilities-invalid", body: "<html>oops</html>", contentType: "text/html" }]);
    const html = await send(notJson, "a.example", getCapabilities());
    expect("body" in html && html.body).toBe("<html>oops</html>");
  });

  it("an unfetchable capabilities document (GET-9)", async () => {
    const ctx = setup([{ kind: "capabilities-unfetchable" }]);
    const outcome = await send(ctx, "a.example", getCapabilities());
    expect(statusOf(outcome)).toBe(404);
    expect(ctx.events.find((e) => e.name === "http.response")?.data).toMatchObject({
      status: 404,
      fault: "0:capabilities-unfetchable",
    });
  });

  it("respond: any status, headers and body, scoped by path like the other faults", async () => {
    const ctx = setup([
      {
        kind: "respond",
        path: "/v1/messages",
        status: 418,
        headers: { "x-teapot": "yes", "retry-after": "30" },
        body: { type: "https://mx.b.example/problems/teapot", status: 418 },
      },
    ]);
    const outcome = await send(ctx, "a.example", postMessage());
    expect(statusOf(outcome)).toBe(418);
    if (!("response" in outcome)) throw new Error("no response");
    expect(outcome.response.headers.get("x-teapot")).toBe("yes");
    expect(outcome.response.headers.get("retry-after")).toBe("30");
    expect(outcome.response.headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(outcome.body)).toEqual({ type: "https://mx.b.example/problems/teapot", status: 418 });
    expect(ctx.b.handled).toEqual([]);
    // Out of its path, the receiver answers.
    expect(statusOf(await send(ctx, "a.example", getCapabilities()))).toBe(200);

    const text = setup([
      { kind: "respond", status: 200, headers: { "content-type": "application/json" }, body: "{not json" },
    ]);
    const verbatim = await send(text, "a.example", getCapabilities());
    expect("body" in verbatim && verbatim.body).toBe("{not json");
    const empty = setup([{ kind: "respond", status: 204 }]);
    expect(statusOf(await send(empty, "a.example", postMessage()))).toBe(204);
  });

  it("a slow body arrives in chunks over virtual time", async () => {
    const ctx = setup([{ kind: "slow-body", chunkBytes: 16, intervalMs: 500 }]);
    const outcome = await send(ctx, "a.example", getCapabilities(), 100);
    const size = JSON.stringify(CAPABILITIES).length;
    expect("body" in outcome && JSON.parse(outcome.body)).toEqual(CAPABILITIES);
    expect(outcome.atMs).toBe(100 + Math.ceil(size / 16) * 500);
    expect(ctx.events.find((e) => e.name === "http.response")).toMatchObject({
      timeMs: 100,
      data: { bodySize: size, bodyDurationMs: Math.ceil(size / 16) * 500 },
    });
  });
});

describe("network: latency, scope and probability", () => {
  it("latency waits on the virtual clock, baseline plus faults", async () => {
    const ctx = setup([{ kind: "latency", latency: 200, host: "mx.b.example" }], { latency: 30 });
    const outcome = await send(ctx, "a.example", getCapabilities(), 1000);
    expect(outcome.atMs).toBe(1230);
    expect(ctx.events.map((e) => [e.name, e.timeMs])).toEqual([
      ["fault.window", 0],
      ["http.request", 1000],
      ["http.response", 1230],
    ]);
    const other = await send(ctx, "a.example", getCapabilities("https://c.example"), 2000);
    expect(other.atMs).toBe(2030);
  });

  it("latency distributions are sampled from the seed: same seed, same delays", async () => {
    const delays = async (seed: number): Promise<number[]> => {
      const ctx = setup([{ kind: "latency", latency: { distribution: "exponential", meanMs: 100 } }], {}, seed);
      const out: number[] = [];
      for (let i = 0; i < 6; i++) {
        const start = i * 10_000;
        out.push((await send(ctx, "a.example", getCapabilities(), start)).atMs - start);
      }
      return out;
    };
    const first = await delays(3);
    expect(await delays(3)).toEqual(first);
    expect(await delays(4)).not.toEqual(first);
  });

  it("applies a fault only inside its window, for its source domain", async () => {
    const ctx = setup([{ kind: "tls-failure", from: "10m", until: 1_200_000, source: "a.example" }]);
    expect(statusOf(await send(ctx, "a.example", getCapabilities(), 0))).toBe(200);
    expect(transportKind(await send(ctx, "a.example", getCapabilities(), 600_000))).toBe("tls");
    expect(statusOf(await send(ctx, "z.example", getCapabilities(), 600_001))).toBe(200);
    expect(statusOf(await send(ctx, "a.example", getCapabilities(), 1_200_000))).toBe(200);
  });

  it("a window judged when the fault's turn comes: after the baseline latency and after a latency fault before it", async () => {
    // The TLS fault's window opens at 1100: a request sent at 1000 reaches it at 1200, after 200 ms of latency.
    const tls: NetworkFaultInput = { kind: "tls-failure", from: 1100, until: 5000, host: "mx.b.example" };
    const viaFault = setup([{ kind: "latency", latency: 200, host: "mx.b.example" }, tls]);
    expect(transportKind(await send(viaFault, "a.example", getCapabilities(), 1000))).toBe("tls");
    const viaBaseline = setup([tls], { latency: 200 });
    expect(transportKind(await send(viaBaseline, "a.example", getCapabilities(), 1000))).toBe("tls");
    // Without the wait the window has not opened yet; once it has closed, it never applies again.
    const noWait = setup([tls]);
    expect(statusOf(await send(noWait, "a.example", getCapabilities(), 1000))).toBe(200);
    expect(transportKind(await send(noWait, "a.example", getCapabilities(), 1100))).toBe("tls");
    expect(statusOf(await send(noWait, "a.example", getCapabilities(), 5000))).toBe(200);
  });

  it("a fault out of its window draws nothing: the draws of an in-window fault are the same with it", async () => {
    const draws = async (faults: NetworkFaultInput[]): Promise<(number | undefined)[]> => {
      const ctx = setup(faults, {}, 5);
      const out: (number | undefined)[] = [];
      for (let i = 1; i <= 16; i++) out.push(statusOf(await send(ctx, "a.example", getCapabilities(), i * 1000)));
      return out;
    };
    const closed: NetworkFaultInput = { id: "closed", kind: "rate-limited", probability: 0.5, until: 500 };
    const later: NetworkFaultInput = { id: "later", kind: "server-error", probability: 0.5, from: "1d" };
    const open: NetworkFaultInput = { id: "open", kind: "unavailable", probability: 0.5 };
    const alone = await draws([open]);
    expect(await draws([closed, open, later])).toEqual(alone);
    expect(alone).toContain(503);
    expect(alone).toContain(200);
  });

  it("probability is drawn from the fault's seeded stream: the same seed fails the same requests", async () => {
    const pattern = async (seed: number): Promise<(number | string | undefined)[]> => {
      const ctx = setup([{ kind: "unavailable", probability: 0.5 }], {}, seed);
      const out: (number | string | undefined)[] = [];
      for (let i = 0; i < 20; i++) out.push(statusOf(await send(ctx, "a.example", getCapabilities(), i * 1000)));
      return out;
    };
    const first = await pattern(21);
    expect(await pattern(21)).toEqual(first);
    expect(await pattern(22)).not.toEqual(first);
    expect(first).toContain(503);
    expect(first).toContain(200);
  });

  it("a fault added later does not change an earlier fault's draws", async () => {
    const draws = async (faults: NetworkFaultInput[]): Promise<(number | undefined)[]> => {
      const ctx = setup(faults, {}, 9);
      const out: (number | undefined)[] = [];
      for (let i = 0; i < 16; i++) out.push(statusOf(await send(ctx, "a.example", getCapabilities(), i * 1000)));
      return out;
    };
    const alone = await draws([{ kind: "rate-limited", probability: 0.5 }]);
    const withAnother = await draws([
      { kind: "rate-limited", probability: 0.5 },
      { kind: "latency", latency: { distribution: "uniform", minMs: 1, maxMs: 9 }, probability: 0.5 },
    ]);
    expect(withAnother).toEqual(alone);
  });
});

describe("network: partitions by requesting domain", () => {
  it("blocks only the given pair, both ways", async () => {
    const ctx = setup([{ kind: "partition", between: ["a.example", "b.example"], afterMs: 10_000 }]);
    const aToB = await send(ctx, "a.example", getCapabilities(), 0);
    expect(transportKind(aToB)).toBe("timeout");
    expect(aToB.atMs).toBe(10_000);
    expect(statusOf(await send(ctx, "a.example", getCapabilities("https://c.example")))).toBe(200);
    expect(statusOf(await send(ctx, "c.example", getCapabilities()))).toBe(200);
    // b's requests to a's hosts are blocked too (a has no receiver here, so mount one).
    ctx.network.mount("https://mx.a.example", fakeReceiver().handler, { domain: "a.example" });
    expect(transportKind(await send(ctx, "b.example", getCapabilities("https://mx.a.example")))).toBe("timeout");
    expect(ctx.b.handled).toEqual(["GET /v1/capabilities"]);
  });

  it("can refuse instead of timing out", async () => {
    const ctx = setup([{ kind: "partition", between: ["a.example", "b.example"], failure: "connection-refused" }]);
    const outcome = await send(ctx, "a.example", getCapabilities(), 0);
    expect(transportKind(outcome)).toBe("connection-refused");
    expect(outcome.atMs).toBe(0);
  });
});

describe("msw in a Web Worker: the localStorage stand-in", () => {
  it("installs an in-memory Storage where none exists when forced, and leaves Node alone by default", () => {
    const scope: { localStorage?: ReturnType<typeof createMemoryStorage> } = {};
    expect(installLocalStorageStandIn(scope)).toBe(false); // not a worker scope
    expect(installLocalStorageStandIn(scope, { force: true })).toBe(true);
    scope.localStorage?.setItem("__msw-cookie-store__", "[]");
    expect(scope.localStorage?.getItem("__msw-cookie-store__")).toBe("[]");
    expect(installLocalStorageStandIn(scope, { force: true })).toBe(false); // already there
  });

  it("behaves as Storage for what msw does with it", () => {
    const storage = createMemoryStorage();
    expect(storage.getItem("k")).toBeNull();
    storage.setItem("k", "v");
    expect([storage.length, storage.key(0), storage.getItem("k")]).toEqual([1, "k", "v"]);
    storage.removeItem("k");
    expect(storage.length).toBe(0);
  });
});

describe("determinism: the same seed gives the same trace, byte for byte (ARCHITECTURE Determinism)", () => {
  async function runWorld(seed: number): Promise<{ hash: string; events: readonly UntypedTraceEvent[] }> {
    const scheduler = createScheduler();
    const recorder = createRecorder({ recordBodies: true });
    const root = createRandom(seed);
    const zone = createDnsZone(
      {
        records: { "_svc.b.example": { svcb: [{ priority: 1, target: "mx.b.example", port: 8443 }] } },
        latency: { distribution: "normal", meanMs: 20, stddevMs: 5 },
        faults: [{ kind: "servfail", probability: 0.3 }],
      },
      { scheduler, random: root.fork("dns"), trace: recorder },
    );
    const network = createNetwork({
      scheduler,
      random: root.fork("network"),
      trace: recorder,
      recordBodies: recorder.recordBodies,
      latency: { distribution: "exponential", meanMs: 40 },
      faults: [
        { kind: "unavailable", probability: 0.3, retryAfterS: 30 },
        { kind: "slow-body", chunkBytes: 8, intervalMs: 15, probability: 0.5 },
      ],
    });
    network.mount(B_ORIGIN, fakeReceiver().handler, { domain: "b.example" });
    for (const source of ["a.example", "c.example", "d.example"]) {
      const fetch = network.fetchFor(source);
      const resolver = zone.resolver(source);
      for (let i = 0; i < 4; i++) {
        // Several domains start at the same instants: order must come from the sequence, not from chance.
        scheduler.at(scheduler.startMs + i * 1000, async () => {
          const answer = await resolver.svcb("_svc.b.example");
          if (answer.kind !== "answer") return;
          const response = await fetch(postMessage()());
          await response.text();
        });
      }
    }
    await scheduler.run();
    const trace = recorder.toTrace({
      mailscope: "test",
      scenario: { name: "determinism" },
      seed,
      readings: {},
      startedAtMs: scheduler.startMs,
    });
    return { hash: await traceHash(trace), events: trace.events };
  }

  it("two runs with one seed hash the same; another seed differs", async () => {
    const first = await runWorld(2026);
    expect((await runWorld(2026)).hash).toBe(first.hash);
    expect((await runWorld(2027)).hash).not.toBe(first.hash);
    // The run is not trivial: answers, failures, fault-made answers and slow bodies all happened.
    const statuses = first.events.filter((e) => e.name === "http.response").map((e) => e.data?.["status"]);
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    expect(first.events.some((e) => e.name === "dns.answer" && e.data?.["kind"] === "servfail")).toBe(true);
    expect(first.events.some((e) => e.name === "http.response" && typeof e.data?.["bodyDurationMs"] === "number")).toBe(
      true,
    );
  });
});
