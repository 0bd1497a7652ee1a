/**
 * `mailscope probe` over real HTTPS on 127.0.0.1: against `mailscope serve`
 * every MUST case passes; a receiver that accepts TLS 1.2 fails exactly
 * tls12-refused; a receiver that hangs is bounded by the per-request timeout;
 * bad input is exit 2. (The switchable misbehaviours of the receiver are run
 * in process, in app/probe/probe.test.ts.)
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Resolver } from "../ports.ts";
import { createReceiver } from "../receiver/receiver.ts";
import { createMemoryMailStore } from "../receiver/memoryMailStore.ts";
import { importTrace } from "../trace/importer.ts";
import { loadOrCreateCertificate } from "../node/httpServer.ts";
import { createSystemClock } from "../node/systemPorts.ts";
import { probeCases } from "../probe/cases.ts";
import { main } from "./main.ts";
import { runProbeCommand, type ProbeCommandOptions } from "./probe.ts";
import { generateKey, UsageError } from "./send.ts";
import { startServe, type RunningServe } from "./serve.ts";
import { serveOptions } from "./testing.ts";

const noDns: Resolver = {
  svcb: () => Promise.resolve({ kind: "nxdomain" }),
  txt: () => Promise.resolve({ kind: "nxdomain" }),
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

interface World {
  readonly dir: string;
  readonly keyFile: string;
  readonly keyid: string;
  readonly record: string;
  readonly configFile: string;
}

async function world(trustKey = true): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "mailscope-probe-"));
  const key = await generateKey("a.example", "s1");
  const keyFile = join(dir, "key.jwk");
  writeFileSync(keyFile, JSON.stringify(key.jwk));
  const configFile = join(dir, "receiver.yaml");
  writeFileSync(
    configFile,
    JSON.stringify({
      domains: ["b.example"],
      capabilities: { max_message_size: 26214400 },
      problem_base: "https://b.example/problems",
      mailboxes: [{ address: "bob@b.example" }, { address: "carol@b.example" }],
      keyRecords: trustKey ? { [key.keyid]: key.record } : {},
    }),
  );
  return { dir, keyFile, keyid: key.keyid, record: key.record, configFile };
}

async function serve(w: World): Promise<{ running: RunningServe; log: string[]; connections: () => number }> {
  const log: string[] = [];
  const running = await startServe(serveOptions(w.configFile, w.dir, { fsync: false }), {
    out: (line) => log.push(line),
    err: (line) => log.push(line),
  });
  closers.push(() => running.close());
  let connections = 0;
  running.server.server.on("secureConnection", () => {
    connections += 1;
  });
  return { running, log, connections: () => connections };
}

function options(w: World, port: number, ca: string, extra: Partial<ProbeCommandOptions> = {}): ProbeCommandOptions {
  const caFile = join(w.dir, `ca-${port}.pem`);
  writeFileSync(caFile, ca);
  return {
    from: "alice@a.example",
    key: w.keyFile,
    mailbox: ["bob@b.example,carol@b.example"],
    absent: "nobody{n}@b.example",
    resolve: [`b.example=127.0.0.1:${port}`],
    ca: caFile,
    dns: false,
    rate: "1000",
    ...extra,
  };
}

const quiet = (lines: string[] = []) => ({ out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) });

/** An HTTPS server that takes TLS 1.2 too (`minVersion`), or speaks nothing above it, serving `handler`. */
async function tlsServer(
  w: World,
  tls: { minVersion?: "TLSv1.2"; maxVersion?: "TLSv1.2" },
  handler?: (request: Request) => Promise<Response>,
  first?: (req: IncomingMessage, res: ServerResponse) => boolean,
): Promise<{ port: number; cert: string }> {
  const identity = await loadOrCreateCertificate({ stateDir: join(w.dir, "tls2"), hostnames: ["b.example"] });
  const server: Server = createServer({ cert: identity.cert, key: identity.key, ...tls }, (req, res) => {
    if (handler === undefined) return; // hangs: never answers
    if (first?.(req, res) === true) return;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
      const request = new Request(`https://${req.headers.host ?? "b.example"}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        ...(body.length > 0 && { body }),
      });
      void handler(request).then(async (response) => {
        const out = Buffer.from(await response.arrayBuffer());
        const h: Record<string, string> = {};
        response.headers.forEach((v, k) => (h[k] = v));
        res.writeHead(response.status, h).end(out);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, cert: identity.cert };
}

describe("mailscope probe against mailscope serve, over HTTPS", () => {
  it("SVC-6, POST-11, ERR-12: every MUST case passes; every request has a connection of its own; the oversized body is cut once answered; the outputs open", async () => {
    const w = await world();
    const { running, log, connections } = await serve(w);
    const lines: string[] = [];
    const files = { junit: join(w.dir, "p.xml"), report: join(w.dir, "p.md"), trace: join(w.dir, "p.json") };
    const run = await runProbeCommand(
      "https://b.example:" + String(running.server.port),
      options(w, running.server.port, running.tls.cert, files),
      quiet(lines),
      { resolver: noDns },
    );
    const notPassed = run.verdicts.filter((v) => v.result !== "PASS").map((v) => `${v.id} ${v.result}: ${v.why ?? ""}`);
    expect(notPassed).toEqual([expect.stringMatching(/^retry-after SKIP/)]);
    expect(run.exitCode).toBe(0);
    // The plan comes first, before the table.
    expect(lines[0]).toMatch(/^mailscope probe https:\/\/b\.example:\d+: 55 cases, at most \d+ requests/);
    expect(lines[1]).toContain("messages: 2 stored by a receiver that follows the spec");
    // The summary, last: the counts by grade, and the one MUST case not run in words that fit one.
    expect(lines.at(-1)).toBe(
      "55 cases: 54 PASS, 0 FAIL, 1 SKIP (pass/fail/skip by grade: MUST 50/0/1, SHOULD 3/0/0, MAY 1/0/0); no MUST case failed; 1 MUST case not run (see why)",
    );
    // A connection per request: none carries two (a body cut short never shares one with the next request).
    const requests = run.trace.events.filter((e) => e.name === "http.request").length;
    expect(connections()).toBeGreaterThanOrEqual(requests);
    // serve answers 413 from the Content-Length and reads on (it drains): the answer names how much had gone.
    expect(run.verdicts.find((v) => v.id === "too-large")?.actual).toMatch(
      /^413 message_too_large: .*; answered after (the whole body|\d+ of 26214401 bytes)/,
    );
    expect(log.some((l) => / POST \/v1\/messages 413 /.test(l))).toBe(true);
    // serve's log of the connections: only the TLS 1.2 handshake refused; the probe's TLS 1.3 handshake, closed
    // with close_notify once done, is no "handshake refused" nor a hang-up there.
    expect(log.filter((l) => / connection: /.test(l))).toEqual([
      expect.stringMatching(/ connection: TLS handshake refused from 127\.0\.0\.1: unsupported protocol/),
    ]);
    // The outputs: a trace the app opens, JUnit, Markdown.
    const trace = importTrace(readFileSync(files.trace, "utf8"));
    expect(trace.ok).toBe(true);
    expect(readFileSync(files.junit, "utf8")).toContain('<testcase classname="AUTH-8 MUST" name="tls13:');
    expect(readFileSync(files.report, "utf8")).toContain(
      "| PASS | replay | POST-12, POST-23, POST-24, POST-25 | MUST |",
    );
  }, 60_000);

  it("SVC-6: a receiver that also takes TLS 1.2 fails tls12-refused, and only that", async () => {
    const w = await world();
    const receiver = createReceiver(
      {
        domains: ["b.example"],
        capabilities: { max_message_size: 26214400 },
        problem_base: "https://b.example/problems",
        mailboxes: [{ address: "bob@b.example" }, { address: "carol@b.example" }],
        keyRecords: { [w.keyid]: w.record },
      },
      { clock: createSystemClock(), resolver: noDns, mailStore: createMemoryMailStore() },
    );
    const server = await tlsServer(w, { minVersion: "TLSv1.2" }, (r) => receiver(r));
    const run = await runProbeCommand(
      `https://b.example:${server.port}`,
      options(w, server.port, server.cert, { skip: ["too-large"] }),
      quiet(),
      { resolver: noDns },
    );
    const failed = run.verdicts.filter((v) => v.result === "FAIL");
    expect(failed.map((v) => `${v.id}: ${v.actual}`)).toEqual([
      expect.stringMatching(/^tls12-refused: accepted: TLSv1\.2/),
    ]);
  }, 60_000);

  it("ERR-12: a receiver that answers 413 and stops reading: the probe stops sending and closes that connection", async () => {
    const w = await world();
    const receiver = createReceiver(
      {
        domains: ["b.example"],
        capabilities: { max_message_size: 26214400 },
        problem_base: "https://b.example/problems",
        mailboxes: [{ address: "bob@b.example" }],
        keyRecords: { [w.keyid]: w.record },
      },
      { clock: createSystemClock(), resolver: noDns, mailStore: createMemoryMailStore() },
    );
    let closedUnread = false;
    const server = await tlsServer(
      w,
      {},
      (r) => receiver(r),
      (req, res) => {
        if (Number(req.headers["content-length"] ?? 0) <= 26214400) return false;
        req.pause(); // reads no more of the body
        req.socket.once("close", () => (closedUnread = true));
        const body = JSON.stringify({ type: "https://b.example/problems/message_too_large", status: 413 });
        res.writeHead(413, { "content-type": "application/problem+json" }).end(body);
        return true;
      },
    );
    const run = await runProbeCommand(
      `https://b.example:${server.port}`,
      options(w, server.port, server.cert, { mailbox: ["bob@b.example"], only: ["too-large"], timeout: "20s" }),
      quiet(),
      { resolver: noDns },
    );
    const actual = run.verdicts.find((v) => v.id === "too-large")?.actual ?? "";
    const sent = Number(/answered after (\d+) of 26214401 bytes, the rest not sent/.exec(actual)?.[1]);
    expect(sent, actual).toBeLessThan(26214401);
    await expect.poll(() => closedUnread).toBe(true);
  }, 60_000);

  it("AUTH-8: a certificate not valid for the origin's name: certificate fails saying why, and nothing is sent there", async () => {
    const w = await world();
    const { running } = await serve(w);
    const port = running.server.port;
    const run = await runProbeCommand(
      `https://other.example:${port}`,
      options(w, port, running.tls.cert, {
        resolve: [`other.example=127.0.0.1:${port}`],
        mailbox: [],
        absent: undefined,
      }),
      quiet(),
      { resolver: noDns },
    );
    const certificate = run.verdicts.find((v) => v.id === "certificate");
    expect(certificate?.result).toBe("FAIL");
    expect(certificate?.actual).toMatch(
      /^not valid for other\.example: ERR_TLS_CERT_ALTNAME_INVALID \(names: .*DNS:b\.example/,
    );
    expect(run.verdicts.find((v) => v.id === "capabilities-200")).toMatchObject({
      result: "SKIP",
      why: expect.stringMatching(/^the certificate does not verify for other\.example/),
    });
    expect(run.verdicts.find((v) => v.id === "tls13")?.result).toBe("PASS");
    expect(run.trace.events.some((e) => e.name === "http.request")).toBe(false);
    expect(run.exitCode).toBe(1);
  }, 30_000);

  it("SVC-6: an origin where nothing listens: tls13 fails with the connection refused, everything else is skipped (exit 1)", async () => {
    const w = await world();
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const lines: string[] = [];
    // No --ca: nothing to verify, since no connection is made.
    const { ca: _ca, ...noCa } = options(w, port, "");
    const run = await runProbeCommand(`https://b.example:${port}`, noCa, quiet(lines), { resolver: noDns });
    expect(run.verdicts[0]).toMatchObject({ id: "tls13", result: "FAIL" });
    expect(run.verdicts[0]?.actual).toMatch(/ECONNREFUSED|refused/);
    expect(run.verdicts.slice(1).every((v) => v.result === "SKIP")).toBe(true);
    expect(run.trace.events.some((e) => e.name === "http.request")).toBe(false);
    expect(run.exitCode).toBe(1);
    expect(lines.at(-1)).toMatch(/^55 cases: 0 PASS, 1 FAIL, 54 SKIP .*; 1 MUST case failed$/);
    // The table's actual column cuts the answer; the line under the failed case gives it whole.
    expect(lines).toContainEqual(expect.stringMatching(/^ +actual: no connection: .*ECONNREFUSED.*127\.0\.0\.1:\d+$/));
  }, 30_000);

  it("AUTH-8: an origin that speaks only TLS 1.2: tls13 fails, nothing is sent", async () => {
    const w = await world();
    const server = await tlsServer(w, { maxVersion: "TLSv1.2" });
    const run = await runProbeCommand(
      `https://b.example:${server.port}`,
      options(w, server.port, server.cert),
      quiet(),
      {
        resolver: noDns,
      },
    );
    expect(run.verdicts[0]).toMatchObject({ id: "tls13", result: "FAIL" });
    expect(run.trace.events.some((e) => e.name === "http.request")).toBe(false);
    expect(run.exitCode).toBe(1);
  }, 30_000);

  it("a receiver that hangs: each request ends at --timeout, and the probe stops after three in a row", async () => {
    const w = await world();
    const server = await tlsServer(w, {});
    const run = await runProbeCommand(
      `https://b.example:${server.port}`,
      options(w, server.port, server.cert, { timeout: "300ms" }),
      quiet(),
      { resolver: noDns },
    );
    const failures = run.trace.events.filter((e) => e.name === "http.failure");
    expect(failures.map((e) => e.data?.["kind"])).toEqual(["timeout", "timeout", "timeout"]);
    expect(run.verdicts.find((v) => v.id === "deliver")?.why).toMatch(/stopped answering/);
  }, 30_000);

  it("AUTH-5: against serve without the probe's key, the 401 is explained with the record to publish", async () => {
    const w = await world(false);
    const { running } = await serve(w);
    const run = await runProbeCommand(
      `https://b.example:${running.server.port}`,
      options(w, running.server.port, running.tls.cert, { only: ["POST-11"] }),
      quiet(),
      { resolver: noDns },
    );
    const deliver = run.verdicts.find((v) => v.id === "deliver");
    expect(deliver?.actual).toMatch(/^401 invalid_signature/);
    expect(deliver?.why).toContain(`${w.keyid}. IN TXT "${w.record}"`);
    expect(run.exitCode).toBe(1);
  }, 30_000);

  it("bad input is a UsageError (exit 2): an http:// origin, an unknown --only, --from without --key, a mailbox of another domain", async () => {
    const w = await world();
    const base = options(w, 1, "-----BEGIN CERTIFICATE-----\n");
    const cases: [string, Partial<ProbeCommandOptions>, RegExp][] = [
      ["http://b.example", {}, /TLS 1\.3 is mandatory/],
      ["https://b.example/v1/messages", {}, /give the origin alone/],
      ["https://b.example", { only: ["NOPE-1"] }, /names no case/],
      ["https://b.example", { key: undefined }, /--from needs --key/],
      ["https://b.example", { absent: "nobody@c.example" }, /must be in one domain/],
      ["b.example", { mailbox: ["bob@c.example"] }, /must be in one domain, b\.example/],
      ["https://b.example", { rate: "0" }, /--rate 0/],
      ["https://b.example", { trace: join(w.dir, "missing", "t.json") }, /--trace .*: cannot be written/],
    ];
    for (const [target, extra, message] of cases) {
      const opts = { ...base, ...extra };
      await expect(runProbeCommand(target, opts, quiet()), `${target} ${JSON.stringify(extra)}`).rejects.toThrow(
        message,
      );
      await expect(runProbeCommand(target, opts, quiet())).rejects.toBeInstanceOf(UsageError);
    }
    // The command: one line on stderr, exit 2.
    const errors: unknown[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(line));
    expect(await main(["probe", "http://b.example"])).toBe(2);
    spy.mockRestore();
    expect(errors).toEqual([
      "mailscope probe: http://b.example: TLS 1.3 is mandatory (SVC-6, AUTH-8): give the https:// origin",
    ]);
  }, 30_000);

  it("docs/probe.md lists every case with its rules and grade", () => {
    const doc = readFileSync("docs/probe.md", "utf8");
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    for (const c of probeCases)
      expect(doc, c.id).toMatch(
        new RegExp(`\\| \`${escape(c.id)}\` +\\| ${escape(c.rules.join(", "))}[^|]*\\| ${c.grade} `),
      );
  });
});
