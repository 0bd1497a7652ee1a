import { mkdtempSync, writeFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { parseDsn } from "../protocol/dsn.ts";
import { generateKey, runSend, type KeygenResult } from "./send.ts";
import { serveCommand, startServe, ServeUsageError, type RunningServe, type ServeOptions } from "./serve.ts";
import { serveOptions } from "./testing.ts";

const MESSAGE =
  "From: alice@a.example\r\nTo: bob@b.example\r\nSubject: quarterly report\r\nMessage-ID: <q1@a.example>\r\n\r\nHello Bob.\r\n";
const FAIL_BOB = {
  mailbox: "bob@b.example",
  status: "5.2.1",
  diagnostic: "smtp; 550 5.2.1 mailbox disabled after delivery",
  delayMs: 50,
};
const never = new Promise<void>(() => {});

const root = mkdtempSync(join(tmpdir(), "mailscope-outbound-"));
let keys: { a: KeygenResult & { file: string }; b: KeygenResult & { file: string } } | undefined;
const running: RunningServe[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** a.example's and b.example's keys from keygen, each as a JWK file. */
async function domainKeys(): Promise<NonNullable<typeof keys>> {
  if (keys !== undefined) return keys;
  const made = { a: await generateKey("a.example", "s1"), b: await generateKey("b.example", "s1") };
  const file = (name: string, key: KeygenResult): KeygenResult & { file: string } => {
    const path = join(root, `${name}.jwk`);
    writeFileSync(path, JSON.stringify(key.jwk));
    return { ...key, file: path };
  };
  keys = { a: file("a", made.a), b: file("b", made.b) };
  return keys;
}

interface Domain {
  readonly serve: RunningServe;
  readonly log: string[];
  readonly state: string;
}

/**
 * `mailscope serve` for one domain, in-process on 127.0.0.1:0, with its own folder (state with a
 * generated self-signed certificate, mail store) and a configuration whose keyRecords hold the other
 * domain's public key, so nothing is asked of DNS (`--no-dns`).
 */
async function serveDomain(
  dir: string,
  name: "a.example" | "b.example",
  options: Partial<ServeOptions> & { policy?: Record<string, unknown> } = {},
): Promise<Domain> {
  const k = await domainKeys();
  const other = name === "a.example" ? k.b : k.a;
  await mkdir(dir, { recursive: true });
  const configFile = join(dir, "receiver.yaml");
  // YAML is a superset of JSON: the configuration file can be written as JSON.
  await writeFile(
    configFile,
    JSON.stringify({
      domains: [name],
      capabilities: { max_message_size: 26214400 },
      problem_base: `https://${name}/problems`,
      mailboxes: [{ address: name === "a.example" ? "alice@a.example" : "bob@b.example" }],
      policy: options.policy ?? {},
      keyRecords: { [other.keyid]: other.record },
    }),
  );
  const log: string[] = [];
  const { policy: _policy, ...extra } = options;
  const state = join(dir, "state");
  const serve = await startServe(serveOptions(configFile, dir, extra), {
    out: (line) => log.push(line),
    err: (line) => log.push(line),
  });
  running.push(serve);
  return { serve, log, state };
}

/** alice@a.example sends MESSAGE to bob@b.example with `mailscope send`, over HTTPS to `b`. */
async function aliceToBob(b: Domain): Promise<void> {
  const k = await domainKeys();
  const dir = mkdtempSync(join(root, "send-"));
  const message = join(dir, "hello.eml");
  writeFileSync(message, MESSAGE);
  const summary = await runSend(
    {
      from: "alice@a.example",
      to: ["bob@b.example"],
      message,
      key: k.a.file,
      resolve: [`b.example=127.0.0.1:${b.serve.server.port}`],
      ca: b.serve.tls.certFile,
      dns: false,
    },
    { out: () => {}, err: () => {} },
    { interrupt: never },
  );
  expect(summary.recipients.map((r) => r.outcome)).toEqual(["accepted"]);
}

/** Waits (polling) until `check` holds, at most `ms`. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A port on 127.0.0.1 where nothing listens (any more). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function outboxFiles(state: string): Promise<string[]> {
  return (await readdir(join(state, "outbox")).catch(() => [])).sort();
}

describe("serve's outbound side: the DSN of a failure after acceptance, for real (G17)", () => {
  it("G17 SVC-8 STATE-8 EVT-2 ENV-3: B accepts, fails afterwards, and its outbound side delivers the DSN over HTTPS to A with a null from; B's outbox ends empty", async () => {
    const dir = mkdtempSync(join(root, "e2e-"));
    const a = await serveDomain(join(dir, "a"), "a.example");
    const k = await domainKeys();
    const b = await serveDomain(join(dir, "b"), "b.example", {
      policy: { failAfterAcceptance: [FAIL_BOB] },
      outboundKey: k.b.file,
      resolve: [`a.example=127.0.0.1:${a.serve.server.port}`],
      ca: a.serve.tls.certFile,
      trace: true,
    });
    expect(b.serve.outbound.keyid).toBe("s1._svckey.b.example");

    await aliceToBob(b);
    await until(async () => (await a.serve.store.list("alice@a.example")).length === 1, "the DSN at A");
    await b.serve.outbound.whenIdle();

    // A holds a multipart/report DSN for alice, about bob, with the configured status.
    const [file] = await a.serve.store.list("alice@a.example");
    const bytes = new Uint8Array(await readFile(file ?? ""));
    const text = new TextDecoder().decode(bytes);
    expect(text).toMatch(/^Content-Type: multipart\/report; report-type=delivery-status;/m);
    expect(text).toMatch(/^Action: failed\r$/m);
    expect(text).toMatch(/^Status: 5\.2\.1\r$/m);
    const dsn = await parseDsn(bytes);
    if (!dsn.ok) throw new Error(JSON.stringify(dsn.violations));
    expect(dsn.value.to).toEqual(["alice@a.example"]);
    expect(dsn.value.deliveryStatus.reportingMta).toEqual({ type: "dns", value: "b.example" });
    expect(dsn.value.deliveryStatus.recipients.map((r) => [r.finalRecipient.value, r.action, r.status])).toEqual([
      ["bob@b.example", "failed", "5.2.1"],
    ]);
    // Part 3 returns the original's headers.
    expect(new TextDecoder().decode(dsn.value.returned?.content)).toContain("Message-ID: <q1@a.example>");

    // The envelope: B's sender submitted it with a null from (ENV-3), signed as b.example, and A accepted it.
    const events = b.log.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { name: string; data?: unknown });
    expect(events.find((e) => e.name === "message.submitted")?.data).toMatchObject({
      from: null,
      to: ["alice@a.example"],
    });
    expect(events.map((e) => e.name)).toEqual(expect.arrayContaining(["failure.after-acceptance", "attempt.started"]));
    expect(
      a.log.some((l) => / POST \/v1\/messages 200 from=b\.example key=\S+ to=alice@a\.example:accepted /.test(l)),
    ).toBe(true);

    // One line when queued, one with the final outcome; the outbox is empty again.
    expect(b.log.find((l) => / DSN \S+ queued to /.test(l))).toMatch(
      /DSN dsn\.[0-9a-f]+@b\.example queued to alice@a\.example for bob@b\.example \(5\.2\.1\) of delivery a\.example\/\S+ \[G17, STATE-8\]; outbox .*outbox\/\S+\.json$/,
    );
    expect(b.log.find((l) => / DSN \S+ final: /.test(l))).toMatch(
      /DSN dsn\.\S+ final: alice@a\.example: accepted; out of the outbox$/,
    );
    expect(await outboxFiles(b.state)).toEqual([]);
  });

  it("G17 STATE-8: serve --faults' fail-after-acceptance: B accepts bob, then its outbound side delivers the DSN to A", async () => {
    const dir = mkdtempSync(join(root, "faults-"));
    const a = await serveDomain(join(dir, "a"), "a.example");
    const k = await domainKeys();
    const faults = join(dir, "faults.yaml");
    await writeFile(
      faults,
      "recipients:\n  - { id: full, kind: fail-after-acceptance, mailbox: bob@b.example, status: 5.2.2, diagnostic: 'smtp; 552 full', delayMs: 50 }\n",
    );
    const b = await serveDomain(join(dir, "b"), "b.example", {
      faults,
      outboundKey: k.b.file,
      resolve: [`a.example=127.0.0.1:${a.serve.server.port}`],
      ca: a.serve.tls.certFile,
    });

    await aliceToBob(b);
    await until(async () => (await a.serve.store.list("alice@a.example")).length === 1, "the DSN at A");
    await b.serve.outbound.whenIdle();
    const [file] = await a.serve.store.list("alice@a.example");
    const dsn = await parseDsn(new Uint8Array(await readFile(file ?? "")));
    if (!dsn.ok) throw new Error(JSON.stringify(dsn.violations));
    expect(dsn.value.deliveryStatus.recipients.map((r) => [r.finalRecipient.value, r.action, r.status])).toEqual([
      ["bob@b.example", "failed", "5.2.2"],
    ]);
    // serve's log: the fault under the 200 that accepted bob, then the DSN queued and delivered.
    const accepted = b.log.findIndex((l) => / POST \/v1\/messages 200 .*to=bob@b\.example:accepted /.test(l));
    expect(b.log[accepted + 1]).toBe("    fault full: fail-after-acceptance for bob@b.example (1 so far for it)");
    expect(b.log.find((l) => / DSN \S+ queued to /.test(l))).toMatch(/ for bob@b\.example \(5\.2\.2\) /);
    expect(b.log.find((l) => / DSN \S+ final: /.test(l))).toMatch(/ final: alice@a\.example: accepted; /);
    expect(await outboxFiles(b.state)).toEqual([]);
  });

  it("G17 G45: a DSN whose destination is down stays in the outbox over close(), and the next start resubmits it", async () => {
    const dir = mkdtempSync(join(root, "restart-"));
    const k = await domainKeys();
    const down = await closedPort();
    const b = await serveDomain(join(dir, "b"), "b.example", {
      policy: { failAfterAcceptance: [FAIL_BOB] },
      outboundKey: k.b.file,
      resolve: [`a.example=127.0.0.1:${down}`],
    });
    await aliceToBob(b);
    await until(() => b.log.some((l) => / DSN \S+: attempt 2 in \S+, at /.test(l)), "a retry of the DSN");
    // Progress lines from the sender's trace, prefixed with the DSN.
    expect(b.log.some((l) => / DSN dsn\.\S+: a\.example is served at https:\/\/a\.example:[0-9]+$/.test(l))).toBe(true);

    await b.serve.close();
    running.splice(running.indexOf(b.serve), 1);
    expect(b.log.at(-1)).toMatch(/outbound: 1 DSN\(s\) without a final outcome stay in .*outbox\/ for the next start$/);
    const files = await outboxFiles(b.state);
    expect(files.map((f) => f.replace(/^.*\./, ""))).toEqual(["eml", "json"]);
    const envelope = JSON.parse(await readFile(join(b.state, "outbox", files[1] ?? ""), "utf8")) as unknown;
    expect(envelope).toEqual({
      from: null,
      to: ["alice@a.example"],
      submittedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      messageId: expect.stringMatching(/^dsn\.[0-9a-f]+@b\.example$/),
      about: {
        deliveryId: expect.stringMatching(/^a\.example\//),
        recipients: [{ mailbox: "bob@b.example", status: "5.2.1" }],
      },
    });
    const message = await readFile(join(b.state, "outbox", files[0] ?? ""), "utf8");
    expect(message).toContain("report-type=delivery-status");

    // A is up now; B starts again on the same state, its --resolve pointing at A.
    const a = await serveDomain(join(dir, "a"), "a.example");
    const again = await serveDomain(join(dir, "b"), "b.example", {
      policy: { failAfterAcceptance: [FAIL_BOB] },
      outboundKey: k.b.file,
      resolve: [`a.example=127.0.0.1:${a.serve.server.port}`],
      ca: a.serve.tls.certFile,
    });
    expect(again.log.find((l) => /resubmitted from the outbox/.test(l))).toMatch(
      /DSN dsn\.\S+ resubmitted from the outbox \(queued \S+\) to alice@a\.example for bob@b\.example \(5\.2\.1\)/,
    );
    await until(async () => (await a.serve.store.list("alice@a.example")).length === 1, "the DSN at A");
    await again.serve.outbound.whenIdle();
    const [stored] = await a.serve.store.list("alice@a.example");
    expect(await readFile(stored ?? "", "utf8")).toBe(message);
    expect(again.log.find((l) => / final: /.test(l))).toMatch(/alice@a\.example: accepted; out of the outbox$/);
    expect(await outboxFiles(again.state)).toEqual([]);
  });

  it("G17 G18: with no service at the destination the DSN would go to SMTP: logged as not sent, final, out of the outbox", async () => {
    const dir = mkdtempSync(join(root, "smtp-"));
    const k = await domainKeys();
    // No --resolve for a.example and no DNS: a.example has no SVCB record (G6).
    const b = await serveDomain(join(dir, "b"), "b.example", {
      policy: { failAfterAcceptance: [FAIL_BOB] },
      outboundKey: k.b.file,
    });
    await aliceToBob(b);
    await until(() => b.log.some((l) => / final: /.test(l)), "the DSN's outcome");
    await b.serve.outbound.whenIdle();
    expect(
      b.log.some((l) =>
        /would hand alice@a\.example to SMTP \(no-service\): not sent, mailscope serve has no SMTP client \[SVC-11\]$/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(b.log.find((l) => / final: /.test(l))).toMatch(
      /alice@a\.example: smtp \(no-service; not sent, mailscope serve has no SMTP client\); out of the outbox$/,
    );
    expect(await outboxFiles(b.state)).toEqual([]);
  });

  it("G17: without --outbound-key a failure after acceptance is logged with how to send its DSN, and nothing goes out", async () => {
    const dir = mkdtempSync(join(root, "nokey-"));
    const b = await serveDomain(join(dir, "b"), "b.example", { policy: { failAfterAcceptance: [FAIL_BOB] } });
    expect(b.serve.outbound.outbound).toBeUndefined();
    await aliceToBob(b);
    await until(() => b.log.some((l) => /failure after acceptance/.test(l)), "the failure");
    expect(b.log.find((l) => /failure after acceptance/.test(l))).toMatch(
      /failure after acceptance: bob@b\.example 5\.2\.1 \[G17, STATE-8\] \(no outbound key: DSN not sent; give --outbound-key\)$/,
    );
    expect(await outboxFiles(b.state)).toEqual([]);
  });

  it("G17 G45: a corrupt outbox entry does not stop serve: it is moved aside as .bad with a line naming the file", async () => {
    const dir = mkdtempSync(join(root, "corrupt-"));
    const k = await domainKeys();
    const outbox = join(dir, "b", "state", "outbox");
    await mkdir(outbox, { recursive: true });
    await writeFile(join(outbox, "20260101T000000.000Z-0001.json"), "{ half an envelope");
    await writeFile(join(outbox, "20260101T000000.000Z-0001.eml"), "the message, kept");
    const b = await serveDomain(join(dir, "b"), "b.example", { outboundKey: k.b.file });
    expect(b.log.find((l) => / outbox: /.test(l))).toMatch(
      /outbox: \S+20260101T000000\.000Z-0001\.json: the envelope is not JSON \(.+\); moved aside to \S+20260101T000000\.000Z-0001\.json\.bad$/,
    );
    expect(await outboxFiles(b.state)).toEqual([
      "20260101T000000.000Z-0001.eml.bad",
      "20260101T000000.000Z-0001.json.bad",
    ]);
    expect(await readFile(join(outbox, "20260101T000000.000Z-0001.eml.bad"), "utf8")).toBe("the message, kept");
  });
});

describe("serve's outbound side, bad input", () => {
  const cases: [string, () => Promise<Partial<ServeOptions>>, RegExp][] = [
    [
      "a key file that is not JSON",
      async () => {
        const file = join(root, "not.jwk");
        await writeFile(file, "not json");
        return { outboundKey: file };
      },
      /^--outbound-key \S+not\.jwk: not a JSON Web Key \(the file is not JSON\)$/,
    ],
    [
      "a key file that is not there",
      () => Promise.resolve({ outboundKey: join(root, "none.jwk") }),
      /^--outbound-key \S+none\.jwk: no such file$/,
    ],
    [
      "a public key only",
      async () => {
        const { d: _d, ...pub } = (await domainKeys()).b.jwk;
        const file = join(root, "public.jwk");
        await writeFile(file, JSON.stringify(pub));
        return { outboundKey: file };
      },
      /^--outbound-key \S+public\.jwk: holds a public key only; serve signs its DSNs with it, so it needs the private key \(d\)$/,
    ],
    [
      "a key of a domain not served",
      async () => ({ outboundKey: (await domainKeys()).a.file }),
      /^--outbound-key \S+a\.jwk: its keyid s1\._svckey\.a\.example signs for a\.example, which this receiver does not serve \(b\.example\)/,
    ],
    [
      "a keyid not of the G4 form",
      async () => ({ outboundKey: (await domainKeys()).b.file, outboundKeyid: "s1.b.example" }),
      /^--outbound-keyid s1\.b\.example: .*_svckey/,
    ],
    [
      "a bad --resolve",
      async () => ({ outboundKey: (await domainKeys()).b.file, resolve: ["a.example:8443"] }),
      /^--resolve a\.example:8443: expected domain=host:port/,
    ],
    [
      "a --ca without a certificate",
      async () => ({ outboundKey: (await domainKeys()).b.file, ca: (await domainKeys()).b.file }),
      /^--ca \S+b\.jwk: no PEM certificate in the file$/,
    ],
    [
      "--resolve without --outbound-key",
      () => Promise.resolve({ resolve: ["a.example=127.0.0.1:8443"] }),
      /^--resolve a\.example=127\.0\.0\.1:8443: it is for the outbound side, which needs --outbound-key/,
    ],
  ];
  for (const [title, options, message] of cases) {
    it(`G17: refuses ${title} with one clear usage line`, async () => {
      const error = await serveDomain(mkdtempSync(join(root, "bad-")), "b.example", await options()).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ServeUsageError);
      expect((error as Error).message).toMatch(message);
    });
  }

  it("the command declares the outbound options", () => {
    expect(serveCommand().options.map((o) => o.long)).toEqual(
      expect.arrayContaining(["--outbound-key", "--outbound-keyid", "--resolve", "--ca"]),
    );
  });
});
