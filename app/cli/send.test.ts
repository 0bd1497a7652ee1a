import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CommanderError } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Resolver } from "../ports.ts";
import { importPublicKeyRaw, importSigningKeyJwk, parseKeyRecord } from "../protocol/profile.ts";
import { startServe, type RunningServe } from "./serve.ts";
import { serveOptions } from "./testing.ts";
import {
  UsageError,
  describeKey,
  formatStanding,
  generateKey,
  keygenCommand,
  parseDuration,
  parseResolve,
  runSend,
  sendCommand,
  type SendOptions,
} from "./send.ts";

/** Nothing is asked of real DNS in these tests: every name outside --resolve has no records. */
const noDns: Resolver = {
  svcb: () => Promise.resolve({ kind: "nxdomain" }),
  txt: () => Promise.resolve({ kind: "nxdomain" }),
};

const MESSAGE =
  "From: alice@a.example\r\nTo: bob@b.example\r\nSubject: hello\r\nMessage-ID: <1@a.example>\r\n\r\nHello Bob.\r\n";

const running: RunningServe[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
  vi.restoreAllMocks();
});

interface World {
  readonly dir: string;
  readonly keyFile: string;
  readonly keyid: string;
  readonly messageFile: string;
  readonly caFile: string;
  readonly port: number;
  readonly serve: RunningServe;
  readonly log: string[];
}

/**
 * a.example's key from keygen, and `mailscope serve` for b.example started in-process on
 * 127.0.0.1:0, with a generated self-signed certificate, a configuration file whose
 * keyRecords hold a.example's public key (so no DNS), and a folder of .eml files.
 */
async function world(policy: Record<string, unknown> = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "mailscope-send-"));
  const key = await generateKey("a.example", "s1");
  const keyFile = join(dir, "key.jwk");
  writeFileSync(keyFile, JSON.stringify(key.jwk));
  const messageFile = join(dir, "hello.eml");
  writeFileSync(messageFile, MESSAGE);
  const config = {
    domains: ["b.example"],
    capabilities: { max_message_size: 26214400 },
    problem_base: "https://b.example/problems",
    mailboxes: [{ address: "bob@b.example" }, { address: "carol@b.example" }],
    policy,
    keyRecords: { [key.keyid]: key.record },
  };
  // YAML is a superset of JSON: the configuration file can be written as JSON.
  const configFile = join(dir, "receiver.yaml");
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const log: string[] = [];
  const serve = await startServe(serveOptions(configFile, dir), {
    out: (line) => log.push(line),
    err: (line) => log.push(line),
  });
  running.push(serve);
  return {
    dir,
    keyFile,
    keyid: key.keyid,
    messageFile,
    caFile: serve.tls.certFile,
    port: serve.server.port,
    serve,
    log,
  };
}

function options(w: World, extra: Partial<SendOptions> = {}): SendOptions {
  return {
    from: "alice@a.example",
    to: ["bob@b.example"],
    message: w.messageFile,
    key: w.keyFile,
    resolve: [`b.example=127.0.0.1:${w.port}`],
    ca: w.caFile,
    ...extra,
  };
}

/** Collects output; `until` resolves once a line matches, to stop a send that would wait in real time. */
function io(until?: RegExp) {
  const out: string[] = [];
  const err: string[] = [];
  let hit: () => void = () => {};
  const seen = new Promise<void>((resolve) => {
    hit = resolve;
  });
  const check = (line: string): void => {
    if (until?.test(line)) hit();
  };
  return {
    out,
    err,
    seen,
    io: {
      out: (line: string) => {
        out.push(line);
        check(line);
      },
      err: (line: string) => {
        err.push(line);
        check(line);
      },
    },
  };
}

const never = new Promise<void>(() => {});

describe("mailscope send, end to end over TLS 1.3 (SVC-5, SVC-6, POST-1, AUTH-1)", () => {
  it("delivers to a receiver found by --resolve and trusted by --ca: accepted, and the message is on disk byte for byte", async () => {
    const w = await world();
    const run = io();
    const summary = await runSend(options(w), run.io, { resolver: noDns, interrupt: never });
    expect(summary.exitCode).toBe(0);
    expect(summary.complete).toBe(true);
    expect(summary.recipients).toEqual([{ recipient: "bob@b.example", outcome: "accepted", rule: expect.any(String) }]);
    expect(run.out.at(-1)).toBe("bob@b.example: accepted");
    expect(run.out.join("\n")).toMatch(new RegExp(`b\\.example is served at https://b\\.example:${w.port}`));
    expect(run.out.join("\n")).toMatch(/version v1 with b\.example/);
    expect(run.out.join("\n")).toMatch(/attempt 1: POST https:\/\/b\.example:\d+\/v1\/messages/);
    expect(run.out.join("\n")).toMatch(/attempt 1: 200/);
    const files = await w.serve.store.list("bob@b.example");
    expect(files).toHaveLength(1);
    expect(readFileSync(files[0] ?? "", "utf8")).toBe(MESSAGE);
    // serve's request log shows the capabilities fetch and the signed POST from a.example.
    expect(w.log.join("\n")).toMatch(/POST \/v1\/messages 200/);
  });

  it("--json prints the summary as JSON on stdout and progress on stderr", async () => {
    const w = await world();
    const run = io();
    await runSend(options(w, { json: true }), run.io, { resolver: noDns, interrupt: never });
    expect(run.out).toHaveLength(1);
    const json = JSON.parse(run.out[0] ?? "") as {
      exitCode: number;
      recipients: { recipient: string; outcome: string }[];
      from: string;
    };
    expect(json).toMatchObject({
      from: "alice@a.example",
      exitCode: 0,
      complete: true,
      recipients: [{ recipient: "bob@b.example", outcome: "accepted" }],
    });
    expect(run.err.some((l) => l.includes("attempt 1: 200"))).toBe(true);
  });

  it("a rejected recipient ends with exit code 1, its problem, and the DSN the sender made (RCP-7, G14)", async () => {
    const w = await world();
    const run = io();
    const summary = await runSend(options(w, { to: ["bob@b.example,dave@b.example"] }), run.io, {
      resolver: noDns,
      interrupt: never,
    });
    expect(summary.exitCode).toBe(1);
    expect(run.out.slice(-2)).toEqual([
      "bob@b.example: accepted",
      expect.stringMatching(/^dave@b\.example: rejected \(recipient_not_found/),
    ]);
    expect(summary.dsns).toEqual([expect.objectContaining({ to: "alice@a.example", recipients: ["dave@b.example"] })]);
  });

  it("stops waiting on request and prints where a deferred recipient stands: deferred, next attempt at … (STATE-6, RETRY-7)", async () => {
    const w = await world({ temporaryFailures: [{ mailbox: "bob@b.example", retryAfterS: 600 }] });
    const run = io(/attempt 2 in /);
    const summary = await runSend(options(w), run.io, { resolver: noDns, interrupt: run.seen });
    expect(summary.exitCode).toBe(1);
    expect(summary.complete).toBe(false);
    // The progress line says when on the wall clock, and that the recipient's retry_after decided it.
    expect(run.out).toContainEqual(
      expect.stringMatching(
        /^\d\d:\d\d:\d\d attempt 2 in \S+, at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(retry_after\) \[RETRY-7\]$/,
      ),
    );
    const [bob] = summary.recipients;
    expect(bob).toMatchObject({
      recipient: "bob@b.example",
      outcome: "pending",
      lastStatus: "deferred",
      problem: "temporary_failure",
    });
    // retry_after 600 s is a lower bound on the next attempt (RETRY-7).
    expect(Date.parse(bob?.nextAttemptAt ?? "")).toBeGreaterThanOrEqual(Date.now() + 590_000);
    expect(run.out.at(-1)).toMatch(
      /^bob@b\.example: deferred, next attempt at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(temporary_failure/,
    );
  });

  it("--max-wait stops waiting and reports the recipient as not final (exit code 1)", async () => {
    const w = await world({ unavailable: { retryAfterS: 60 } });
    const run = io();
    const summary = await runSend(options(w, { maxWait: "1ms" }), run.io, { resolver: noDns, interrupt: never });
    expect(summary.exitCode).toBe(1);
    expect(summary.complete).toBe(false);
    expect(summary.recipients[0]).toMatchObject({ recipient: "bob@b.example", outcome: "pending" });
    expect(run.out.join("\n")).toMatch(/stopped waiting \(--max-wait 1ms\)/);
  });

  it("without --ca the self-signed receiver fails TLS: a request-level temporary failure, retried (GET-9, ERR-21, SVC-6)", async () => {
    const w = await world();
    const run = io(/attempt 2 in /);
    const { ca: _ca, ...rest } = options(w);
    const summary = await runSend(rest, run.io, { resolver: noDns, interrupt: run.seen });
    expect(summary.exitCode).toBe(1);
    // The first exchange is the capabilities fetch (G28): it fails TLS, a request-level temporary failure (GET-9).
    expect(summary.recipients[0]).toMatchObject({
      outcome: "pending",
      problem: expect.stringMatching(/^capabilities unusable: .*tls: TLS failed/),
    });
    expect(run.out.join("\n")).toMatch(
      /capabilities of https:\/\/b\.example:\d+ unusable: .*tls: TLS failed.*SELF_SIGNED/,
    );
    expect(run.out.at(-1)).toMatch(/^bob@b\.example: retrying, next attempt at /);
  });

  it("a domain without SVCB record goes to SMTP at once, which send only records (G6, SVC-11)", async () => {
    const w = await world();
    const run = io();
    const summary = await runSend(options(w, { resolve: [] }), run.io, { resolver: noDns, interrupt: never });
    expect(summary.exitCode).toBe(1);
    expect(summary.recipients[0]).toMatchObject({ outcome: "smtp", smtpReason: "no-service" });
    expect(run.out.join("\n")).toMatch(
      /b\.example has no usable SVCB record \(nxdomain\): plain SMTP \[SVC-11, G6\]\n.* would hand bob@b\.example to SMTP \(no-service\): not sent, mailscope send has no SMTP client \[SVC-11\]$/m,
    );
    expect(run.out.at(-1)).toBe("bob@b.example: smtp (no-service; not sent, mailscope send has no SMTP client)");
  });
});

describe("bad input is refused before anything is sent (exit code 2)", () => {
  const cases: ReadonlyArray<readonly [string, (w: World) => Partial<SendOptions>, RegExp]> = [
    [
      "a missing message file",
      (w) => ({ message: join(w.dir, "missing.eml") }),
      /^--message .*missing\.eml: no such file$/,
    ],
    ["an empty message file", (w) => ({ message: write(w, "empty.eml", "") }), /--message .*: the file is empty/],
    ["a missing key file", (w) => ({ key: join(w.dir, "nokey.jwk") }), /^--key .*nokey\.jwk: no such file$/],
    // An endless file is read up to the limit of its kind, no further.
    [
      "/dev/zero as the message",
      () => ({ message: "/dev/zero" }),
      /^--message \/dev\/zero: larger than 104857600 bytes \(the limit for messages\)$/,
    ],
    [
      "/dev/zero as the key",
      () => ({ key: "/dev/zero" }),
      /^--key \/dev\/zero: larger than 65536 bytes \(the limit for keys\)$/,
    ],
    ["/dev/zero as --ca", () => ({ ca: "/dev/zero" }), /^--ca \/dev\/zero: larger than 1048576 bytes/],
    ["a key file that is not JSON", (w) => ({ key: write(w, "bad.jwk", "not json") }), /--key .*: not a JSON Web Key/],
    ["a public key only", (w) => ({ key: write(w, "pub.jwk", JSON.stringify(publicOnly(w))) }), /public key only/],
    [
      "a key that is not Ed25519",
      (w) => ({ key: write(w, "ec.jwk", JSON.stringify({ kty: "EC", crv: "P-256", x: "AA", y: "AA", d: "AA" })) }),
      /not an Ed25519 private JWK/,
    ],
    ["a bad --from", () => ({ from: "alice" }), /^--from alice: /],
    ["a bad --to", () => ({ to: ["bob@b.example,not a mailbox"] }), /^--to not a mailbox: /],
    ["no recipient", () => ({ to: [" , "] }), /--to: give at least one recipient/],
    [
      "a keyid of another domain (AUTH-4)",
      () => ({ keyid: "s1._svckey.other.example" }),
      /signs for other\.example, but --from is in a\.example/,
    ],
    ["a keyid not of the G4 form", () => ({ keyid: "s1.a.example" }), /--keyid s1\.a\.example: .*_svckey/],
    [
      "a bad --resolve",
      () => ({ resolve: ["b.example:8443"] }),
      /--resolve b\.example:8443: expected domain=host:port/,
    ],
    ["a bad --max-wait", () => ({ maxWait: "soon" }), /--max-wait soon: not a duration/],
    // A duration past Node's timer range would fire at once.
    ["a --max-wait over a week", () => ({ maxWait: "30d" }), /^--max-wait 30d: at most 7d/],
    ["a --timeout over an hour", () => ({ timeout: "99999999999" }), /^--timeout 99999999999: at most 1h$/],
    ["a --ca file without a certificate", (w) => ({ ca: w.messageFile }), /--ca .*: no PEM certificate/],
    [
      "a --nameserver that is not an address",
      () => ({ nameserver: "dns.example" }),
      /--nameserver dns\.example: not an IP address/,
    ],
  ];
  for (const [title, change, message] of cases) {
    it(`refuses ${title} with one clear line`, async () => {
      const w = await world();
      await expect(
        runSend({ ...options(w), ...change(w) }, io().io, { resolver: noDns, interrupt: never }),
      ).rejects.toThrow(message);
      await expect(
        runSend({ ...options(w), ...change(w) }, io().io, { resolver: noDns, interrupt: never }),
      ).rejects.toBeInstanceOf(UsageError);
    });
  }

  it("the command prints the line on stderr and exits 2; a missing option is exit 2 as well", async () => {
    const w = await world();
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const missingFile = sendCommand().parseAsync(
      [
        "--from",
        "alice@a.example",
        "--to",
        "bob@b.example",
        "--message",
        join(w.dir, "nope.eml"),
        "--key",
        w.keyFile,
        "--no-dns",
      ],
      { from: "user" },
    );
    await expect(missingFile).rejects.toMatchObject({ exitCode: 2 });
    expect(errors).toEqual([expect.stringMatching(/^mailscope send: --message .*nope\.eml: no such file$/)]);
    const missingOption = sendCommand().parseAsync(["--to", "bob@b.example"], { from: "user" });
    await expect(missingOption).rejects.toBeInstanceOf(CommanderError);
    await expect(sendCommand().parseAsync(["--to", "bob@b.example"], { from: "user" })).rejects.toMatchObject({
      exitCode: 2,
    });
  });

  function write(w: World, name: string, text: string): string {
    const file = join(w.dir, name);
    writeFileSync(file, text);
    return file;
  }

  function publicOnly(w: World): object {
    const { d: _d, ...rest } = JSON.parse(readFileSync(w.keyFile, "utf8")) as Record<string, unknown>;
    return rest;
  }
});

describe("mailscope keygen (G1, G4)", () => {
  it("makes an Ed25519 JWK with the keyid as kid and the TXT record that publishes its public key", async () => {
    const key = await generateKey("A.Example.", "s2024");
    expect(key.keyid).toBe("s2024._svckey.a.example");
    expect(key.jwk).toMatchObject({ kty: "OKP", crv: "Ed25519", kid: "s2024._svckey.a.example" });
    const record = parseKeyRecord(key.record);
    if (!record.ok) throw new Error(JSON.stringify(record.violations));
    // The private key, imported from the JWK, signs; the public key published in the record verifies.
    const privateKey = await importSigningKeyJwk(key.jwk);
    const published = await importPublicKeyRaw(record.value.publicKey);
    const data = new TextEncoder().encode(
      '"@method": POST\n"@signature-params": ("@method");keyid="s2024._svckey.a.example"',
    );
    const signature = await crypto.subtle.sign("Ed25519", privateKey, data);
    expect(await crypto.subtle.verify("Ed25519", published, signature, data)).toBe(true);
    // … and only that record: another key's record does not verify it, nor does the key verify other data.
    const other = parseKeyRecord((await generateKey("a.example", "s2024")).record);
    if (!other.ok) throw new Error(JSON.stringify(other.violations));
    expect(
      await crypto.subtle.verify("Ed25519", await importPublicKeyRaw(other.value.publicKey), signature, data),
    ).toBe(false);
    expect(await crypto.subtle.verify("Ed25519", published, signature, data.subarray(1))).toBe(false);
    expect(describeKey(key, "k.jwk")).toContain(`  s2024._svckey.a.example. IN TXT "${key.record}"`);
  });

  it("refuses a bad selector or domain", async () => {
    await expect(generateKey("a.example", "bad selector")).rejects.toThrow(UsageError);
    await expect(generateKey("-a.example", "s1")).rejects.toThrow(/no valid signing domain/);
  });

  it("writes the key to --out with mode 600 and never overwrites it without --force", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-keygen-"));
    const out = join(dir, "key.jwk");
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void lines.push(String(line)));
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
    await keygenCommand().parseAsync(["--domain", "a.example", "--selector", "s1", "--out", out], { from: "user" });
    const jwk = JSON.parse(readFileSync(out, "utf8")) as { kid: string; d?: string };
    expect(jwk.kid).toBe("s1._svckey.a.example");
    expect(jwk.d).toBeDefined();
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(lines).toContain("keyid: s1._svckey.a.example");
    await expect(
      keygenCommand().parseAsync(["--domain", "a.example", "--selector", "s1", "--out", out], { from: "user" }),
    ).rejects.toMatchObject({ exitCode: 2 });
    expect(errors).toEqual([expect.stringMatching(/--out .*key\.jwk: the file exists \(add --force/)]);
    await keygenCommand().parseAsync(["--domain", "a.example", "--selector", "s1", "--out", out, "--force"], {
      from: "user",
    });
    expect((JSON.parse(readFileSync(out, "utf8")) as { d: string }).d).not.toBe(jwk.d);
  });
});

describe("small parsers", () => {
  it("reads durations", () => {
    expect(parseDuration("10m")).toBe(600_000);
    expect(parseDuration("90")).toBe(90_000);
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("1.5h")).toBe(5_400_000);
    expect(parseDuration("2d")).toBe(172_800_000);
    expect(parseDuration("soon")).toBeUndefined();
    expect(parseDuration("-1s")).toBeUndefined();
  });

  it("reads --resolve entries", () => {
    expect(parseResolve("B.Example=127.0.0.1:8443")).toEqual({ domain: "b.example", host: "127.0.0.1", port: 8443 });
    expect(parseResolve("b.example=[::1]:8443")).toEqual({ domain: "b.example", host: "::1", port: 8443 });
    expect(() => parseResolve("=127.0.0.1:8443")).toThrow(UsageError);
  });

  it("formats where a recipient stands", () => {
    expect(formatStanding({ recipient: "bob@b.example", outcome: "accepted" })).toBe("bob@b.example: accepted");
    expect(
      formatStanding({
        recipient: "bob@b.example",
        outcome: "pending",
        nextAttemptAt: "2026-01-15T09:01:00Z",
        problem: "no answer (tls)",
      }),
    ).toBe("bob@b.example: retrying, next attempt at 2026-01-15T09:01:00Z (no answer (tls))");
    expect(formatStanding({ recipient: "bob@b.example", outcome: "bounced", problem: "temporary_failure" })).toBe(
      "bob@b.example: bounced (temporary_failure)",
    );
  });
});
