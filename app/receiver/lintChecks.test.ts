/// <reference types="vite/client" />
import { beforeAll, describe, expect, it } from "vitest";
import { scenarioReceivers } from "../sim/receivers.ts";
import { runScenarioText } from "../sim/runScenario.ts";
import type { World } from "../sim/world.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { receiverConfigSchema, type ReceiverConfig } from "./config.ts";
import {
  lintAnswer,
  lintChecks,
  lintedRequestOfTraceEvent,
  lintReceiverConfig,
  type LintLine,
  type LintReceiverConfig,
  type LintedRequest,
} from "./lintChecks.ts";
import { combineKeys, keyRecordKeys, txtRecordKeys, type LintKeys } from "./lintKeys.ts";
import {
  createReceiverHarness,
  createTestSender,
  readProblem,
  signedDelivery,
  testReceiverConfig,
  textMessage,
  type TestSender,
} from "./testing.ts";

/** The library, read by Vite at build time: the core's tests may not import node:fs. */
const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });
const scenario = (name: string): string => {
  const text = library[`../../scenarios/${name}`];
  if (text === undefined) throw new Error(`no scenario ${name}`);
  return text;
};

const nowS = Math.floor(Date.UTC(2026, 0, 15, 9, 0, 0) / 1000);
const byCheck = (lines: readonly LintLine[], check: string): LintLine | undefined =>
  lines.find((l) => l.check === check);
const statuses = (lines: readonly LintLine[]): string[] => lines.map((l) => `${l.status} ${l.check}`);

async function recorded(request: Request): Promise<LintedRequest> {
  return {
    method: request.method,
    url: request.url,
    headers: [...request.headers],
    body: new Uint8Array(await request.arrayBuffer()),
  };
}

let sender: TestSender;
let keys: LintKeys;
const config: ReceiverConfig = receiverConfigSchema.parse(testReceiverConfig());

beforeAll(async () => {
  sender = await createTestSender("a.example");
  keys = keyRecordKeys({ [sender.keyid]: sender.keyRecord }, "the test zone");
});

async function good(change: Partial<Parameters<typeof signedDelivery>[0]> = {}): Promise<LintedRequest> {
  return recorded(
    await signedDelivery({
      from: "alice@a.example",
      to: ["bob@b.example"],
      message: textMessage({ from: "alice@a.example", to: ["bob@b.example"] }),
      key: sender.privateKey,
      keyid: sender.keyid,
      createdS: nowS,
      idempotencyKey: "lint-core-1",
      ...change,
    }),
  );
}

describe("lintChecks on a request given as data", () => {
  it("G10: a delivery signed the profile's way passes every check, in the receiver's order", async () => {
    const lines = await lintChecks(await good(), { nowS, keys, config });
    expect(statuses(lines)).toEqual([
      "pass version-path",
      "pass header idempotency-key",
      "pass header signature-input",
      "pass header signature",
      "pass header content-digest",
      "pass header content-type",
      "pass size",
      "pass components",
      "pass algorithm",
      "pass created",
      "pass keyid",
      "pass signature",
      "pass digest",
      "pass from-domain",
      "pass body",
      "pass envelope",
      "pass mailboxes",
      "pass recipient-domain",
    ]);
    expect(byCheck(lines, "signature")?.detail).toMatch(
      /verifies with the key record of s1\._svckey\.a\.example in the test zone$/,
    );
    expect(lintAnswer(lines)).toBeUndefined();
  });

  it("takes headers as field lines or as a trace's object of names, with the same lines", async () => {
    const request = await good();
    const asObject = { ...request, headers: Object.fromEntries(request.headers as [string, string][]) };
    expect(await lintChecks(asObject, { nowS, keys, config })).toEqual(
      await lintChecks(request, { nowS, keys, config }),
    );
  });

  it("POST-5 AUTH-5: a changed body fails the digest, and the first failure is the answer", async () => {
    const request = await good();
    const body = request.body.slice();
    body[body.length - 3] = (body[body.length - 3] ?? 0) ^ 1;
    const lines = await lintChecks({ ...request, body }, { nowS, keys, config });
    expect(byCheck(lines, "digest")).toMatchObject({ status: "fail", rule: "POST-5" });
    expect(lintAnswer(lines)).toEqual({ status: 401, problem: "invalid_signature", check: "digest" });
  });

  it("AUTH-9 G3: created outside the tolerance of nowS fails; the configuration's tolerance counts", async () => {
    const lines = await lintChecks(await good(), { nowS: nowS + 301, keys, config });
    expect(byCheck(lines, "created")).toMatchObject({ status: "fail", rule: "G3" });
    const lenient = receiverConfigSchema.parse({ ...testReceiverConfig(), readings: { G3: { toleranceS: 600 } } });
    expect(
      byCheck(await lintChecks(await good(), { nowS: nowS + 301, keys, config: lenient }), "created")?.status,
    ).toBe("pass");
  });

  it("says what is missing in the tool's words (hints), or in its own", async () => {
    const request = await good();
    const none = await lintChecks(request, { nowS });
    expect(byCheck(none, "signature")).toMatchObject({ status: "fail", answer: { status: 401 } });
    expect(byCheck(none, "signature")?.detail).toMatch(/^unknown-key: .*[^;]$/);
    expect(byCheck(none, "recipient-domain")?.detail).toBe(
      "not checked: which domains are served? (no receiver configuration)",
    );
    const hinted = await lintChecks(request, { nowS, hints: { unknownKey: "; give a key", noConfig: " (give one)" } });
    expect(byCheck(hinted, "signature")?.detail).toMatch(/; give a key$/);
    expect(byCheck(hinted, "recipient-domain")?.detail).toBe("not checked: which domains are served? (give one)");
  });

  it("POST-1: a GET, or a URL that is not absolute, fails version-path and still runs the rest", async () => {
    const request = await good();
    const get = await lintChecks({ ...request, method: "GET" }, { nowS, keys, config });
    expect(lintAnswer(get)).toEqual({ status: 405, problem: "invalid_request", check: "version-path" });
    const relative = await lintChecks({ ...request, url: "/v1/messages" }, { nowS, keys, config });
    expect(byCheck(relative, "version-path")?.status).toBe("pass");
    expect(byCheck(relative, "signature")?.status).toBe("fail");
    expect(relative).toHaveLength(get.length);
  });

  it("combineKeys tries each set in turn; txtRecordKeys skips TXT records that are not key records", async () => {
    const txt = txtRecordKeys(
      (keyid) => (keyid === sender.keyid ? ["v=spf1 -all", sender.keyRecord] : []),
      "the simulated DNS",
    );
    const combined = combineKeys([keyRecordKeys({}, "nowhere"), txt]);
    expect((await combined.lookup(sender.keyid))?.source).toBe(
      "the key record of s1._svckey.a.example in the simulated DNS",
    );
    expect(await combined.lookup("s2._svckey.a.example")).toBeUndefined();
    expect(await keyRecordKeys({}, "x").lookup("__proto__")).toBeUndefined();
  });
});

// ── The order of reasons, as the receiver gives them ────────────────

describe("lintChecks gives its reasons in the receiver's order (G10, decision 0017)", () => {
  /** The receiver's answer to the request, and the lint's first failure on the same bytes. */
  async function both(
    options: Partial<Parameters<typeof signedDelivery>[0]>,
  ): Promise<{ detail: string; lint: ReturnType<typeof lintAnswer>; lines: LintLine[] }> {
    const h = await createReceiverHarness();
    const request = await h.request(options);
    const lines = await lintChecks(await recorded(request.clone()), {
      nowS: h.clock.nowS(),
      keys: keyRecordKeys({ [h.sender.keyid]: h.sender.keyRecord }, "the test zone"),
      config,
    });
    const answer = await readProblem(await h.receiver(request));
    expect(answer.status).toBe(401);
    return { detail: String(answer.json["detail"]), lint: lintAnswer(lines), lines };
  }

  it("G10 AUTH-2 AUTH-5: a body changed after signing, under an unpublished key, is refused for the key, not the digest, by both", async () => {
    const { detail, lint, lines } = await both({
      keyid: "s9._svckey.a.example",
      bodyAfterSigning: new TextEncoder().encode("not the signed body"),
    });
    expect(detail).toMatch(/^key: /);
    expect(lint).toEqual({ status: 401, problem: "invalid_signature", check: "signature" });
    // The digest is still checked and still fails; it is just not the first reason.
    expect(byCheck(lines, "digest")).toMatchObject({ status: "fail", rule: "POST-5" });
    expect(lines.findIndex((l) => l.check === "signature")).toBeLessThan(lines.findIndex((l) => l.check === "digest"));
  });

  it("G10 G2 AUTH-5: a signature that leaves out content-digest, under an unpublished key, is refused for its components by both", async () => {
    const { detail, lint } = await both({
      keyid: "s9._svckey.a.example",
      components: ["@method", "@target-uri", "content-type", "idempotency-key"],
    });
    expect(detail).toMatch(/^components: /);
    expect(lint).toEqual({ status: 401, problem: "invalid_signature", check: "components" });
  });

  it("G10 POST-5: a body changed after a good signature is refused for the digest by both", async () => {
    const { detail, lint } = await both({ bodyAfterSigning: new TextEncoder().encode("not the signed body") });
    expect(detail).toMatch(/^digest: /);
    expect(lint).toEqual({ status: 401, problem: "invalid_signature", check: "digest" });
  });
});

// ── Requests recorded in a simulated run ─────────────────────────────

/** The keys the world's DNS gives at a time: what the simulated receiver itself looks up. */
function worldKeys(world: World, atMs: number): LintKeys {
  return txtRecordKeys((keyid) => {
    const answer = world.dns.lookup(keyid, "TXT", atMs);
    return answer.kind === "answer" ? answer.records.map(String) : [];
  }, "the simulated DNS");
}

/** The configuration of the world's receiver at the request's origin, as the world built it (the fields the checks read). */
function worldConfig(world: World, url: string): LintReceiverConfig | undefined {
  const origin = new URL(url).origin;
  const receiver = scenarioReceivers(world.scenario, world.readings).find((r) => r.origin === origin);
  return receiver === undefined ? undefined : lintReceiverConfig(receiver.config);
}

interface RecordedPost {
  readonly event: RecordedEvent;
  readonly request: LintedRequest;
  readonly lines: LintLine[];
  /** The answer as the trace recorded it (undefined when none came). */
  readonly status: number | undefined;
  /** The answer came from a network fault, not from the receiver. */
  readonly fault: boolean;
  readonly problem: string | undefined;
}

/** Runs a scenario with bodies kept and lints each POST /v1/messages it recorded, at the time the receiver got it. */
async function lintRecordedPosts(name: string): Promise<RecordedPost[]> {
  const outcome = await runScenarioText(scenario(name), { file: `scenarios/${name}`, recordBodies: true });
  if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
  const { world, trace } = outcome.run;
  const events = trace.events;
  const posts: RecordedPost[] = [];
  for (const event of events) {
    const data = event.data ?? {};
    if (event.name !== "http.request" || data["method"] !== "POST") continue;
    if (!String(data["url"]).endsWith("/v1/messages")) continue;
    const request = lintedRequestOfTraceEvent(event);
    if (request === undefined) throw new Error(`${name}: seq ${event.seq} has no body`);
    const response = events.find((e) => e.name === "http.response" && e.data?.["exchangeId"] === data["exchangeId"]);
    // The receiver's clock is the arrival time (a network delay can make a request old on arrival, G3).
    const key = (request.headers as readonly (readonly [string, string])[]).find(([n]) => n === "idempotency-key")?.[1];
    const arrival = events.find(
      (e) =>
        e.name === "receiver.request" &&
        e.timeMs >= event.timeMs &&
        e.timeMs <= (response?.timeMs ?? Infinity) &&
        e.data?.["idempotencyKey"] === key,
    );
    const atMs = arrival?.timeMs ?? event.timeMs;
    const config = worldConfig(world, request.url);
    const lines = await lintChecks(request, {
      nowS: Math.floor(atMs / 1000),
      keys: worldKeys(world, atMs),
      ...(config !== undefined && { config }),
    });
    const body = response?.data?.["body"];
    const problem =
      typeof body === "string" && body.startsWith("{") ? (JSON.parse(body) as { type?: string }).type : undefined;
    posts.push({
      event,
      request,
      lines,
      status: typeof response?.data?.["status"] === "number" ? response.data["status"] : undefined,
      fault: response?.data?.["fault"] !== undefined,
      problem: problem?.replace(/^.*\//, ""),
    });
  }
  return posts;
}

describe("lintChecks on requests recorded in a simulated run (recordBodies)", () => {
  it("happy-path: the recorded POST passes every check, as the receiver's 200 says", async () => {
    const [post, ...more] = await lintRecordedPosts("happy-path.yaml");
    expect(more).toEqual([]);
    expect(post?.event.data?.["body"]).toEqual(expect.any(String));
    expect(post?.status).toBe(200);
    expect(post?.lines.filter((l) => l.status !== "pass")).toEqual([]);
    expect(post?.lines).toHaveLength(18);
    expect(byCheck(post?.lines ?? [], "signature")?.detail).toMatch(/in the simulated DNS$/);
  });

  it("error-invalid-signature: the stale key record and the missing one fail `signature` with the 401 the receiver gave", async () => {
    const posts = await lintRecordedPosts("error-invalid-signature.yaml");
    expect(posts.length).toBeGreaterThanOrEqual(2);
    for (const post of posts) {
      expect(post.status).toBe(401);
      expect(lintAnswer(post.lines)).toEqual({ status: 401, problem: "invalid_signature", check: "signature" });
    }
    expect(posts.map((p) => byCheck(p.lines, "signature")?.detail.split(":")[0])).toContain("unknown-key");
  });

  it("lintedRequestOfTraceEvent: only an http.request whose body the trace kept (or an empty one)", () => {
    const base = { name: "http.request", data: { method: "GET", url: "https://x.example/", headers: { a: "1" } } };
    expect(lintedRequestOfTraceEvent({ ...base, data: { ...base.data, bodySize: 5 } })).toBeUndefined();
    expect(lintedRequestOfTraceEvent({ ...base, data: { ...base.data, bodySize: 0 } })?.body).toEqual(
      new Uint8Array(0),
    );
    expect(lintedRequestOfTraceEvent({ ...base, data: { ...base.data, bodyBase64: "AP8=" } })).toEqual({
      method: "GET",
      url: "https://x.example/",
      headers: [["a", "1"]],
      body: new Uint8Array([0, 255]),
    });
    expect(lintedRequestOfTraceEvent({ name: "http.response", data: base.data })).toBeUndefined();
  });

  it("over the whole library, the checks agree with the receiver: the first failure is its answer, and a pass is never a 400/401/413 or unsupported_version", async () => {
    const offline = new Set(["invalid_request", "invalid_signature", "message_too_large", "unsupported_version"]);
    let answered = 0;
    for (const name of Object.keys(library).map((p) => p.replace(/^.*\//, ""))) {
      for (const post of await lintRecordedPosts(name)) {
        const answer = lintAnswer(post.lines);
        const where = `${name} seq ${post.event.seq}`;
        if (post.status === undefined || post.fault) continue; // the receiver did not answer: the network did
        if (answer !== undefined) {
          answered += 1;
          expect(
            { status: post.status, problem: post.problem },
            `${where} ${JSON.stringify(post.lines.filter((l) => l.status === "fail"))}`,
          ).toEqual({
            status: answer.status,
            problem: answer.problem,
          });
        } else if (post.problem !== undefined) {
          expect(offline.has(post.problem), `${where}: ${post.status} ${post.problem}`).toBe(false);
        }
      }
    }
    expect(answered).toBeGreaterThanOrEqual(8);
  }, 300_000);
});
