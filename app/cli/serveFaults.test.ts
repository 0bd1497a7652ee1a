/**
 * `mailscope serve --faults … --clock-scale …` with `mailscope send
 * --clock-scale …` as the sender under test, over real HTTPS on 127.0.0.1:
 * the faults act by request count and by time window, the sender retries,
 * falls back and is deferred as the spec says, and serve's log says under each
 * request which fault acted and what the spec expected of the sender next.
 * The times are bounds, never measured durations: a slow machine only makes
 * the sender later, never early.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Resolver } from "../ports.ts";
import { generateKey, runSend } from "./send.ts";
import { ServeUsageError, describeServe, startServe, type RunningServe } from "./serve.ts";
import { readFaultsFile } from "./serveFaults.ts";
import { serveOptions } from "./testing.ts";

const noDns: Resolver = {
  svcb: () => Promise.resolve({ kind: "nxdomain" }),
  txt: () => Promise.resolve({ kind: "nxdomain" }),
};
const never = new Promise<void>(() => {});
const running: RunningServe[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

interface World {
  readonly dir: string;
  readonly serve: RunningServe;
  readonly log: string[];
  send(to?: string[], extra?: Record<string, string>): ReturnType<typeof runSend>;
}

/** serve for b.example (bob, carol) with `faults` at `--clock-scale` `scale`, and send from a.example at the same scale. */
async function world(faults: string, scale = "30"): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "mailscope-faults-"));
  const key = await generateKey("a.example", "s1");
  writeFileSync(join(dir, "key.jwk"), JSON.stringify(key.jwk));
  writeFileSync(join(dir, "m.eml"), "From: alice@a.example\r\nSubject: hi\r\nMessage-ID: <1@a.example>\r\n\r\nHi.\r\n");
  writeFileSync(join(dir, "faults.yaml"), faults);
  const config = join(dir, "receiver.yaml");
  writeFileSync(
    config,
    JSON.stringify({
      domains: ["b.example"],
      capabilities: { max_message_size: 26214400 },
      problem_base: "https://b.example/problems",
      mailboxes: [{ address: "bob@b.example" }, { address: "carol@b.example" }],
      keyRecords: { [key.keyid]: key.record },
    }),
  );
  const log: string[] = [];
  const serve = await startServe(
    serveOptions(config, dir, { fsync: false, faults: join(dir, "faults.yaml"), clockScale: scale }),
    { out: (l) => log.push(l), err: (l) => log.push(l) },
  );
  running.push(serve);
  const send = (to = ["bob@b.example"], extra: Record<string, string> = {}) =>
    runSend(
      {
        from: "alice@a.example",
        to,
        message: join(dir, "m.eml"),
        key: join(dir, "key.jwk"),
        resolve: [`b.example=127.0.0.1:${serve.server.port}`],
        ca: serve.tls.certFile,
        clockScale: scale,
        maxWait: "60s",
        ...extra,
      },
      { out: () => {}, err: () => {} },
      { resolver: noDns, interrupt: never },
    );
  return { dir, serve, log, send };
}

/** The notes serve printed under the request log lines matching `line`. */
function notesAfter(log: readonly string[], line: RegExp): string[][] {
  const out: string[][] = [];
  log.forEach((l, i) => {
    if (!line.test(l)) return;
    const notes: string[] = [];
    for (let j = i + 1; j < log.length && (log[j] ?? "").startsWith("    "); j++) notes.push((log[j] ?? "").trim());
    out.push(notes);
  });
  return out;
}

describe("mailscope serve --faults, with mailscope send as the sender under test", () => {
  it("ERR-10, POST-24, RETRY-1: a 503 for the first POST; send retries with the same key, on time, and is accepted", async () => {
    const w = await world(
      "network:\n  - { id: down, kind: unavailable, path: /v1/messages, retryAfterS: 30, requests: 1 }\n",
    );
    expect(describeServe(w.serve).some((l) => l.includes("faults:      1 from") && l.includes("×30"))).toBe(true);
    const summary = await w.send();
    expect(summary.recipients.map((r) => r.outcome)).toEqual(["accepted"]);
    const posts = notesAfter(w.log, / POST \/v1\/messages /);
    expect(posts).toHaveLength(2);
    expect(posts[0]?.[0]).toBe("fault down: unavailable (request 1 in its scope)");
    expect(posts[0]?.[1]).toMatch(
      /^next: temporary_failure, temporary, fallback-eligible \[ERR-10\]: retry with the same Idempotency-Key \[POST-24\] no earlier than .* \(retry 1 of the schedule: 60 s less 20 % jitter/,
    );
    expect(posts[0]?.[1]).toContain("SMTP not yet: from");
    expect(posts[1]?.[0]).toMatch(/^sender: attempt 2 of this delivery, \d+ s after the last: on time/);
    expect(posts[1]?.[1]).toBe(
      "next: bob@b.example accepted: finished, never retried nor sent over SMTP [RCP-7, RCP-8]",
    );
  }, 60_000);

  it("ERR-21: a connection closed without an answer: send retries the same delivery and is accepted", async () => {
    const w = await world("network:\n  - { kind: connection-reset, path: /v1/messages, requests: 1 }\n");
    const summary = await w.send();
    expect(summary.recipients.map((r) => r.outcome)).toEqual(["accepted"]);
    const [first] = notesAfter(w.log, / POST \/v1\/messages 0 .*closed without an answer/);
    expect(first?.[0]).toContain("the connection was closed without an answer (the sender sees connection-reset)");
  }, 60_000);

  it("STATE-6, POST-27: bob deferred once: send makes a new delivery for bob, with a new key, after retry_after", async () => {
    const w = await world(
      "recipients:\n  - { kind: deferred, mailbox: bob@b.example, problem: mailbox_full, retryAfterS: 90, requests: 1 }\n",
    );
    const summary = await w.send(["bob@b.example", "carol@b.example"]);
    expect(summary.recipients.map((r) => r.outcome)).toEqual(["accepted", "accepted"]);
    const posts = notesAfter(w.log, / POST \/v1\/messages 200 /);
    expect(posts[0]?.[0]).toBe("fault recipients[0]: deferred for bob@b.example (1 so far for it)");
    expect(posts[0]?.[1]).toMatch(
      /deferred: bob@b\.example in a new delivery with a new Idempotency-Key no earlier than .*\(retry_after 90 s \[RETRY-7\]\); never SMTP/,
    );
    expect(posts[1]?.[0]).toMatch(/^sender: bob@b\.example, deferred \d+ .* ago, is back in a new delivery: on time/);
  }, 60_000);

  it("ERR-17, RCP-7: carol rejected (policy_rejected) after a latency: send gives carol up as rejected, bob accepted, and serve's log says she is never retried", async () => {
    const w = await world(
      "network:\n  - { id: slow, kind: latency, path: /v1/messages, latency: 300 }\n" +
        "recipients:\n  - { kind: rejected, mailbox: carol@b.example, problem: policy_rejected }\n",
    );
    const summary = await w.send(["bob@b.example", "carol@b.example"]);
    expect(summary.recipients.map((r) => [r.recipient, r.outcome])).toEqual([
      ["bob@b.example", "accepted"],
      ["carol@b.example", "rejected"],
    ]);
    const posts = notesAfter(w.log, / POST \/v1\/messages 200 /);
    expect(posts).toHaveLength(1);
    expect(posts[0]).toEqual([
      "fault slow: latency (request 1 in its scope)",
      "fault recipients[0]: rejected for carol@b.example (1 so far for it)",
      "next: bob@b.example accepted, carol@b.example rejected: finished, never retried nor sent over SMTP [RCP-7, RCP-8]",
    ]);
  }, 60_000);

  it("STATE-4: unsupported_version: send hands the message to SMTP at once, as serve's log says it may", async () => {
    const w = await world("network:\n  - { kind: unsupported-version, path: /v1/messages }\n");
    const summary = await w.send();
    expect(summary.recipients).toEqual([expect.objectContaining({ outcome: "smtp", smtpReason: "no-common-version" })]);
    expect(notesAfter(w.log, / POST \/v1\/messages 404 /)[0]?.[1]).toContain("SMTP is allowed at once");
  }, 60_000);

  it("ERR-8, RETRY-7: a 429 window of 1 h on the spec's clock (2 s at ×1800): send keeps retrying over the service, then is accepted", async () => {
    const w = await world(
      "network:\n  - { kind: rate-limited, path: /v1/messages, retryAfterS: 600, until: 1h }\n",
      "1800",
    );
    const summary = await w.send();
    expect(summary.recipients.map((r) => r.outcome)).toEqual(["accepted"]);
    const limited = notesAfter(w.log, / POST \/v1\/messages 429 /);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(limited[0]?.[1]).toContain("never SMTP: an attempt of this delivery was not fallback-eligible [ERR-23]");
    expect(limited[0]?.[1]).toContain("(Retry-After 600 s [RETRY-7])");
  }, 60_000);

  it("a faults file with a mistake stops serve at start: the file, line, column and field (exit 2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-faults-bad-"));
    writeFileSync(join(dir, "faults.yaml"), "network:\n  - { kind: timeout, afterMs: -5 }\n");
    writeFileSync(
      join(dir, "receiver.yaml"),
      "domains: [b.example]\ncapabilities: { max_message_size: 26214400 }\nproblem_base: https://b.example/problems\n",
    );
    const start = startServe(serveOptions(join(dir, "receiver.yaml"), dir, { faults: join(dir, "faults.yaml") }), {
      out: () => {},
      err: () => {},
    });
    await expect(start).rejects.toBeInstanceOf(ServeUsageError);
    await expect(start).rejects.toThrow(/faults\.yaml:2:31: network\[0\]\.afterMs: /);
    const scale = startServe(serveOptions(join(dir, "receiver.yaml"), dir, { clockScale: "0" }), {
      out: () => {},
      err: () => {},
    });
    await expect(scale).rejects.toThrow(/--clock-scale "0": a number above 0/);
  });

  it("examples/serve-faults.yaml reads: every kind it shows is one the faults file takes", async () => {
    const faults = await readFaultsFile("examples/serve-faults.yaml");
    expect(faults.network.map((f) => f.kind)).toEqual([
      "unavailable",
      "rate-limited",
      "connection-reset",
      "latency",
      "unsupported-version",
    ]);
    expect(faults.recipients.map((f) => f.kind)).toEqual(["deferred", "rejected", "fail-after-acceptance"]);
    expect(readFileSync("docs/probe.md", "utf8")).toContain("examples/serve-faults.yaml");
  });
});
