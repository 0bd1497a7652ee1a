import { CommanderError } from "commander";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { exportSigningKeyJwk } from "../protocol/profile.ts";
import { createTestSender, signedDelivery, textMessage, type TestSender } from "../receiver/testing.ts";
import { serializeHttpRequest } from "../node/rawHttp.ts";
import { lintRequestCommand, parseRfc3339, runLintRequest, type LintLine, type LintReport } from "./lintRequest.ts";

const examples = (name: string): string => new URL(`../../examples/${name}`, import.meta.url).pathname;
const B26 = examples("rfc9421-b26.http");
const KEYS = examples("rfc9421-keys.json");
const RECEIVER = examples("receiver.yaml");
/** `created` of RFC 9421's examples. */
const RFC_CREATED = "2021-04-20T02:07:53Z";

interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

async function run(file: string, options: Parameters<typeof runLintRequest>[1] = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runLintRequest(file, options, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function report(
  file: string,
  options: Parameters<typeof runLintRequest>[1] = {},
): Promise<{ code: number; report: LintReport }> {
  const result = await run(file, { ...options, json: true });
  return { code: result.code, report: JSON.parse(result.out) as LintReport };
}

const byCheck = (lines: readonly LintLine[], check: string): LintLine | undefined =>
  lines.find((l) => l.check === check);

let dir: string;
let sender: TestSender;
const nowS = Math.floor(Date.UTC(2026, 0, 15, 9, 0, 0) / 1000);
const NOW = "2026-01-15T09:00:00Z";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-lint-"));
  sender = await createTestSender("a.example");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A good delivery from a.example to bob@b.example, written as raw HTTP. */
async function goodRequestFile(name: string, change: (bytes: Uint8Array) => Uint8Array = (b) => b): Promise<string> {
  const request = await signedDelivery({
    from: "alice@a.example",
    to: ["bob@b.example"],
    message: textMessage({ from: "alice@a.example", to: ["bob@b.example"] }),
    key: sender.privateKey,
    keyid: sender.keyid,
    createdS: nowS,
    idempotencyKey: "lint-1",
  });
  const file = join(dir, name);
  await writeFile(file, change(await serializeHttpRequest(request)));
  return file;
}

describe("lint-request on RFC 9421 B.2.6", () => {
  it("AUTH-5 G2 G4: the ed25519 signature is cryptographically valid, while the profile's missing components and keyid are flagged", async () => {
    const { code, report: r } = await report(B26, { keys: KEYS, now: RFC_CREATED });
    expect(code).toBe(1);
    expect(byCheck(r.checks, "signature")).toMatchObject({ status: "pass", rule: "AUTH-5" });
    expect(byCheck(r.checks, "signature")?.detail).toMatch(
      /^ed25519 signature sig-b26 over \("date" "@method" "@path" "@authority" "content-type" "content-length"\) verifies with key test-key-ed25519/,
    );
    expect(byCheck(r.checks, "digest")).toMatchObject({ status: "pass", detail: "sha-512 matches the body" });
    expect(byCheck(r.checks, "components")).toMatchObject({
      status: "fail",
      detail: 'signature sig-b26 does not cover "@target-uri" "content-digest" "idempotency-key"',
      answer: { status: 401, problem: "invalid_signature" },
    });
    expect(byCheck(r.checks, "created")).toMatchObject({ status: "pass", rule: "G3" });
    expect(byCheck(r.checks, "keyid")).toMatchObject({ status: "fail", rule: "G4" });
    expect(byCheck(r.checks, "header idempotency-key")).toMatchObject({ status: "fail", rule: "POST-2" });
    expect(byCheck(r.checks, "header content-type")).toMatchObject({ status: "fail", rule: "POST-6" });
    expect(byCheck(r.checks, "version-path")).toMatchObject({
      status: "fail",
      answer: { status: 404, problem: "invalid_request" },
    });
    // What a receiver answers: the first failure in G10's order.
    expect(r.answer).toEqual({ status: 404, problem: "invalid_request", check: "version-path" });
  });

  it("G10: the checks come in the receiver's order, one line each", async () => {
    const { report: r } = await report(B26, { keys: KEYS, now: RFC_CREATED });
    expect(r.checks.map((c) => c.check)).toEqual([
      "version-path",
      "header idempotency-key",
      "header signature-input",
      "header signature",
      "header content-digest",
      "header content-type",
      "size",
      "components",
      "algorithm",
      "created",
      "keyid",
      "signature",
      "digest",
      "from-domain",
      "body",
      "envelope",
      "mailboxes",
      "recipient-domain",
    ]);
    const steps = r.checks.map((c) => c.step);
    expect([...new Set(steps)]).toEqual([
      "version-path",
      "headers",
      "size",
      "signature",
      "digest",
      "from-domain",
      "envelope",
      "recipient-domain",
    ]);
  });

  it("G3: without --now the receiver's clock is today's, and the 2021 signature is too old", async () => {
    const { report: r } = await report(B26, { keys: KEYS });
    expect(byCheck(r.checks, "created")).toMatchObject({ status: "fail", rule: "G3" });
    expect(byCheck(r.checks, "created")?.detail).toMatch(/s old \(tolerance 300 s\)/);
  });

  it("AUTH-5: without the key the signature cannot be verified, and says how to give one", async () => {
    const { report: r } = await report(B26, { now: RFC_CREATED });
    expect(byCheck(r.checks, "signature")).toMatchObject({
      status: "fail",
      answer: { status: 401, problem: "invalid_signature" },
    });
    expect(byCheck(r.checks, "signature")?.detail).toMatch(/unknown-key: .*--keys/);
  });

  it("POST-3 POST-4: the text report has one line per check with the rule and the receiver's answer", async () => {
    const { code, out } = await run(B26, { keys: KEYS, now: RFC_CREATED });
    expect(code).toBe(1);
    const lines = out.split("\n");
    expect(lines[0]).toBe(
      `${B26}: POST https://example.com/foo?param=Value&Pet=dog, 18-byte body, checked at 2021-04-20T02:07:53Z`,
    );
    expect(lines).toContainEqual(expect.stringMatching(/^PASS {2}signature +AUTH-5 +ed25519 signature sig-b26 /));
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^FAIL {2}components +AUTH-2 +signature sig-b26 does not cover "@target-uri" "content-digest" "idempotency-key" {2}→ 401 invalid_signature$/,
      ),
    );
    expect(lines.at(-2)).toBe("A receiver answers the first failure: 404 invalid_request (version-path).");
  });
});

describe("lint-request on a good delivery", () => {
  it("AUTH-1 AUTH-4 ENV-1: a request made by the receiver's test helpers passes every line (keys from receiver.yaml)", async () => {
    const file = await goodRequestFile("good.http");
    const { code, report: r } = await report(file, { config: RECEIVER, now: NOW });
    expect(r.checks.filter((c) => c.status !== "pass")).toEqual([]);
    expect(code).toBe(0);
    expect(r.ok).toBe(true);
    expect(r.answer).toBeUndefined();
    expect(byCheck(r.checks, "signature")?.detail).toContain(`the key record of ${sender.keyid} in ${RECEIVER}`);
    expect(byCheck(r.checks, "recipient-domain")?.detail).toBe("b.example is served here");
  });

  it("AUTH-5: the same request passes with its key given as a JWKS instead", async () => {
    const file = await goodRequestFile("good-jwks.http");
    const jwk = { ...(await exportSigningKeyJwk(sender.publicKey)), kid: sender.keyid };
    const keys = join(dir, "a-example.jwks.json");
    await writeFile(keys, JSON.stringify({ keys: [jwk] }));
    const { code, report: r } = await report(file, { keys, now: NOW });
    expect(byCheck(r.checks, "signature")).toMatchObject({ status: "pass" });
    // Without --config nothing says which domains are served: that line is not run.
    expect(byCheck(r.checks, "recipient-domain")).toMatchObject({ status: "skip" });
    expect(code).toBe(0);
  });

  it("POST-5 AUTH-5: a body changed after signing fails the digest; a changed signature fails verification", async () => {
    const swapped = await goodRequestFile("swapped.http", (bytes) => {
      const text = new TextDecoder("latin1").decode(bytes).replace("Hi there.", "Hi thar!!");
      return Uint8Array.from(text, (c) => c.charCodeAt(0));
    });
    const { report: a } = await report(swapped, { config: RECEIVER, now: NOW });
    expect(byCheck(a.checks, "digest")).toMatchObject({ status: "fail", answer: { status: 401 } });
    expect(byCheck(a.checks, "signature")).toMatchObject({ status: "pass" });
    expect(a.answer).toEqual({ status: 401, problem: "invalid_signature", check: "digest" });

    const forged = await goodRequestFile("forged.http", (bytes) => {
      const text = new TextDecoder("latin1")
        .decode(bytes)
        .replace("Idempotency-Key: lint-1", "Idempotency-Key: lint-2");
      return Uint8Array.from(text, (c) => c.charCodeAt(0));
    });
    const { report: b } = await report(forged, { config: RECEIVER, now: NOW });
    expect(byCheck(b.checks, "signature")).toMatchObject({ status: "fail" });
    expect(byCheck(b.checks, "signature")?.detail).toMatch(/^bad-signature/);
  });

  it("AUTH-4 G19: a from outside the signing domain is flagged with the configured answer", async () => {
    const request = await signedDelivery({
      from: "mallory@c.example",
      to: ["bob@b.example"],
      message: "Subject: x\r\n\r\nx\r\n",
      key: sender.privateKey,
      keyid: sender.keyid,
      createdS: nowS,
      idempotencyKey: "k",
    });
    const file = join(dir, "from.http");
    await writeFile(file, await serializeHttpRequest(request));
    const { report: r } = await report(file, { config: RECEIVER, now: NOW });
    expect(byCheck(r.checks, "from-domain")).toMatchObject({
      status: "fail",
      rule: "AUTH-4",
      answer: { status: 401, problem: "invalid_signature" },
    });
  });

  it("ENV-7 MBX-3: envelope and mailbox problems each get their line", async () => {
    const request = await signedDelivery({
      from: "alice@a.example",
      to: ["bob@b.example", "carol@c.example", "bad@@x"],
      message: "Subject: x\r\n\r\nx\r\n",
      key: sender.privateKey,
      keyid: sender.keyid,
      createdS: nowS,
      idempotencyKey: "k",
    });
    const file = join(dir, "envelope.http");
    await writeFile(file, await serializeHttpRequest(request));
    const { report: r } = await report(file, { config: RECEIVER, now: NOW });
    expect(byCheck(r.checks, "mailboxes")).toMatchObject({
      status: "fail",
      answer: { status: 400, problem: "invalid_request" },
    });
    expect(byCheck(r.checks, "mailboxes")?.detail).toContain("$.to[2]");
  });
});

describe("lint-request on too many recipients", () => {
  it("ENV-8: a `to` over max_recipients fails on its length; its 100,000 recipients are not read", async () => {
    const to = [...Array.from({ length: 99_999 }, (_, i) => `user${i}@b.example`), "bad@@x"];
    const request = await signedDelivery({
      from: "alice@a.example",
      to,
      message: "Subject: x\r\n\r\nx\r\n",
      key: sender.privateKey,
      keyid: sender.keyid,
      createdS: nowS,
      idempotencyKey: "k",
    });
    const file = join(dir, "many.http");
    await writeFile(file, await serializeHttpRequest(request));
    const { report: r } = await report(file, { config: RECEIVER, now: NOW });
    expect(byCheck(r.checks, "envelope")).toMatchObject({
      status: "fail",
      rule: "ENV-8",
      answer: { status: 400, problem: "invalid_request" },
    });
    expect(byCheck(r.checks, "mailboxes")).toMatchObject({ status: "skip", rule: "MBX-1" });
  });
});

describe("lint-request exit codes", () => {
  it("LIM-2: 2 for a file that cannot be read, a malformed request, a bad --now, or a bad --keys", async () => {
    expect((await run(join(dir, "missing.http"))).code).toBe(2);
    const broken = join(dir, "broken.http");
    await writeFile(broken, "POST /v1/messages HTTP/1.1\r\nHost: mx.b.example\r\nContent-Length: 99\r\n\r\nshort");
    const malformed = await run(broken);
    expect(malformed.code).toBe(2);
    expect(malformed.err).toContain(`${broken}:3: Content-Length is 99 but only 5 bytes follow`);
    const badNow = await run(B26, { now: "yesterday" });
    expect(badNow).toMatchObject({ code: 2, err: expect.stringContaining("--now") });
    const badKeys = join(dir, "bad.json");
    await writeFile(badKeys, "{ not json");
    expect(await run(B26, { keys: badKeys })).toMatchObject({
      code: 2,
      err: expect.stringContaining(`${badKeys}: not JSON`),
    });
    expect(await run(B26, { keys: join(dir, "none.json") })).toMatchObject({
      code: 2,
      err: expect.stringContaining("none.json: cannot be read (no such file)"),
    });
  });

  it("/dev/zero as the request, the keys or the configuration is refused at its limit, not read to the end", async () => {
    expect(await run("/dev/zero")).toMatchObject({
      code: 2,
      err: "mailscope lint-request: /dev/zero: larger than 105906176 bytes (the limit for requests)",
    });
    expect(await run(B26, { keys: "/dev/zero" })).toMatchObject({
      code: 2,
      err: "mailscope lint-request: /dev/zero: larger than 65536 bytes (the limit for keys)",
    });
    const config = await run(B26, { config: "/dev/zero" });
    expect(config.code).toBe(2);
    expect(config.err).toContain(
      "/dev/zero:1:1: (file): cannot be read: larger than 4194304 bytes (the limit for configurations)",
    );
  });

  it("G10: the command itself exits 1 on a failing check and prints the report", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const error = await lintRequestCommand()
        .exitOverride()
        .parseAsync([B26, "--keys", KEYS, "--now", RFC_CREATED], { from: "user" })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CommanderError);
      expect((error as CommanderError).exitCode).toBe(1);
      expect(String(log.mock.calls[0]?.[0])).toContain("PASS  signature");
    } finally {
      log.mockRestore();
    }
  });

  it("G3: --now takes RFC 3339 times only", () => {
    expect(parseRfc3339("2021-04-20T02:07:53Z")).toBe(1618884473);
    expect(parseRfc3339("2021-04-20T04:07:53+02:00")).toBe(1618884473);
    expect(parseRfc3339("2021-04-20")).toBeUndefined();
    expect(parseRfc3339("1618884473")).toBeUndefined();
  });

  it("AUTH-1: the example fixture is the RFC's B.2.6 request, byte for byte", async () => {
    const text = await readFile(B26, "utf8");
    expect(text.startsWith("POST /foo?param=Value&Pet=dog HTTP/1.1\r\nHost: example.com\r\n")).toBe(true);
    expect(text.endsWith('\r\n\r\n{"hello": "world"}')).toBe(true);
  });
});
