import { fork } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { openSqliteIdempotencyStore } from "../node/sqliteIdempotencyStore.ts";
import { textMessage, type TestSender } from "../receiver/testing.ts";
import {
  describeServe,
  serveCommand,
  startServe,
  ServeUsageError,
  type RunningServe,
  type ServeOptions,
} from "./serve.ts";
import {
  createServeFolder,
  sendRequest,
  serveOptions,
  signedForServe,
  type HttpsAnswer,
  type ServeAddress,
} from "./testing.ts";

let dir: string;
let config: string;
let sender: TestSender;

beforeAll(async () => {
  ({ dir, config, sender } = await createServeFolder("mailscope-serve-restart-", ["bob@b.example", "carol@b.example"]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** One signed delivery to `server`, signed now (a retry re-signs: POST-24); the same key and message give the same body. */
async function deliver(
  server: ServeAddress,
  options: { key: string; to?: string[]; text?: string },
): Promise<HttpsAnswer> {
  const to = options.to ?? ["bob@b.example"];
  const request = await signedForServe(sender, server.port, {
    to,
    message: textMessage({
      from: "alice@a.example",
      to,
      body: options.text ?? "Kept across restarts.",
      messageId: "m1",
    }),
    idempotencyKey: options.key,
  });
  return sendRequest(server, request);
}

/** A serve in this process on `case`'s own state and mail folders, with every trace event kept. */
async function serveIn(
  name: string,
  extra: Partial<ServeOptions> = {},
): Promise<{ running: RunningServe; events: string[] }> {
  const events: string[] = [];
  const running = await startServe(serveOptions(config, join(dir, name), { trace: true, ...extra }), {
    out: () => {},
    err: (line) => events.push(line),
  });
  return { running, events };
}

/** A serve in a child process on `name`'s folders (app/cli/fixtures/serveChild.ts), killed with the test at the latest. */
async function serveChild(
  name: string,
  extra: Record<string, unknown>,
): Promise<
  ServeAddress & {
    exited: Promise<NodeJS.Signals | null>;
    stderr: () => string;
    kill: () => void;
  }
> {
  const child = fork(
    fileURLToPath(new URL("./fixtures/serveChild.ts", import.meta.url)),
    [JSON.stringify({ ...serveOptions(config, join(dir, name)), ...extra })],
    { stdio: ["ignore", "ignore", "pipe", "ipc"] },
  );
  // Whatever fails in the test, the child does not outlive it.
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  const ready = await new Promise<{ port: number; certFile: string }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { port: number; certFile: string }));
    child.once("exit", (code) => reject(new Error(`serveChild exited (${code}) before it was ready: ${stderr}`)));
  });
  return {
    port: ready.port,
    cert: await readFile(ready.certFile, "utf8"),
    exited,
    stderr: () => stderr,
    kill: () => child.kill("SIGKILL"),
  };
}

const named = (events: readonly string[], name: string): number =>
  events.filter((line) => line.startsWith("{") && (JSON.parse(line) as { name?: string }).name === name).length;

describe("serve keeps idempotency keys across restarts (POST-12, POST-25, POST-26)", () => {
  it("POST-12, POST-25: after a restart the same key and content is replayed byte for byte; other content is 409; stored once", async () => {
    const first = await serveIn("restart");
    const cert = first.running.tls.cert;
    const original = await deliver({ port: first.running.server.port, cert }, { key: "restart-1" });
    expect(original.status).toBe(200);
    await first.running.close();

    const second = await serveIn("restart");
    try {
      expect(second.running.idempotencyAtStart).toEqual({ kept: 1, purged: 0, cutOff: 0 });
      expect(describeServe(second.running).join("\n")).toContain(
        `idempotency: ${join(dir, "restart", "state", "idempotency.sqlite")} (1 key(s) kept from earlier runs`,
      );
      const port = second.running.server.port;
      const retry = await deliver({ port, cert }, { key: "restart-1" });
      expect([retry.status, retry.headers["content-type"], retry.body]).toEqual([
        original.status,
        original.headers["content-type"],
        original.body,
      ]);
      expect(named(second.events, "idempotency.replay")).toBe(1);
      const other = await deliver({ port, cert }, { key: "restart-1", text: "Other content." });
      expect(other.status).toBe(409);
      expect(JSON.parse(other.body.toString())).toMatchObject({
        type: "https://b.example/problems/idempotency_conflict",
      });
      expect(await second.running.store.list("bob@b.example")).toHaveLength(1);
    } finally {
      await second.running.close();
    }
  });

  it("POST-12, SVC-8: killed (SIGKILL) after the key is stored and before the answer, the retry after the restart is replayed, not stored twice", async () => {
    const child = await serveChild("crash", { crashAfterIdempotencyPut: true });

    // The first try gets no answer: the server dies between storing and answering.
    const lost = await deliver(child, { key: "crash-1", to: ["bob@b.example", "carol@b.example"] }).then(
      (answer) => `answered ${answer.status}`,
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    expect(lost).toMatch(/ECONNRESET|socket hang up/);
    expect(await child.exited).toBe("SIGKILL");
    expect(child.stderr()).toContain("idempotency record stored; SIGKILL before the answer");

    const restarted = await serveIn("crash");
    try {
      expect(restarted.running.idempotencyAtStart.kept).toBe(1);
      // The retry trusts the certificate it saw before the crash: the restarted serve keeps it.
      const retry = await deliver(
        { port: restarted.running.server.port, cert: child.cert },
        { key: "crash-1", to: ["bob@b.example", "carol@b.example"] },
      );
      expect(retry.status).toBe(200);
      expect(JSON.parse(retry.body.toString())).toEqual({
        results: [
          { recipient: "bob@b.example", status: "accepted" },
          { recipient: "carol@b.example", status: "accepted" },
        ],
      });
      expect(named(restarted.events, "idempotency.replay")).toBe(1);
      expect(named(restarted.events, "mailbox.delivered")).toBe(0);
      // Stored once, before the crash: one file per recipient.
      expect(await restarted.running.store.list("bob@b.example")).toHaveLength(1);
      expect(await restarted.running.store.list("carol@b.example")).toHaveLength(1);
    } finally {
      await restarted.running.close();
    }
  });

  it("POST-12, SVC-8: killed (SIGKILL) after the mail is stored and before the key is written, the retry after the restart stores nothing twice", async () => {
    const to = ["bob@b.example", "carol@b.example"];
    const child = await serveChild("window", { crashBeforeIdempotencyPut: true });
    const lost = await deliver(child, { key: "window-1", to }).then(
      (answer) => `answered ${answer.status}`,
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    expect(lost).toMatch(/ECONNRESET|socket hang up/);
    expect(await child.exited).toBe("SIGKILL");
    expect(child.stderr()).toContain("mail stored, idempotency record not yet; SIGKILL");

    const restarted = await serveIn("window");
    try {
      expect(restarted.running.idempotencyAtStart).toEqual({ kept: 0, purged: 0, cutOff: 1 });
      expect(await restarted.running.store.list("bob@b.example")).toHaveLength(1);
      // Another body with the same key is a conflict, as it would have been had the first been answered.
      const server = { port: restarted.running.server.port, cert: child.cert };
      const other = await deliver(server, { key: "window-1", to, text: "Something else." });
      expect(other.status).toBe(409);
      const retry = await deliver(server, { key: "window-1", to });
      expect(retry.status).toBe(200);
      expect(JSON.parse(retry.body.toString())).toEqual({
        results: [
          { recipient: "bob@b.example", status: "accepted" },
          { recipient: "carol@b.example", status: "accepted" },
        ],
      });
      expect(named(restarted.events, "mailbox.delivered")).toBe(0);
      expect(await restarted.running.store.list("bob@b.example")).toHaveLength(1);
      expect(await restarted.running.store.list("carol@b.example")).toHaveLength(1);
      // Now answered, the key is a record: the next retry is a replay.
      expect(restarted.running.idempotency.countIntents()).toBe(0);
      const again = await deliver(server, { key: "window-1", to });
      expect(again.body.equals(retry.body)).toBe(true);
      expect(named(restarted.events, "idempotency.replay")).toBe(1);
    } finally {
      await restarted.running.close();
    }
  });

  it("a second serve on the same state is refused at start: the idempotency store is in use", async () => {
    const first = await serveIn("twice");
    try {
      const error = await serveIn("twice").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServeUsageError);
      expect((error as Error).message).toMatch(/idempotency store .*idempotency\.sqlite: in use by another process/);
    } finally {
      await first.running.close();
    }
  });

  it("--idempotency-db chooses the file; the command declares it", async () => {
    const file = join(dir, "elsewhere", "keys.sqlite");
    const { running } = await serveIn("option", { idempotencyDb: file });
    try {
      expect(running.idempotency.file).toBe(file);
    } finally {
      await running.close();
    }
    expect(serveCommand().options.map((o) => o.long)).toContain("--idempotency-db");
  });

  it("the temporary files an interrupted run left in the mail store are removed at start, with a log line; nothing else is", async () => {
    const mail = join(dir, "leftovers", "mail");
    const box = join(mail, "bob@b.example");
    await mkdir(join(mail, ".spool"), { recursive: true });
    await mkdir(box, { recursive: true });
    const left = [join(box, ".0123456789abcdef.tmp"), join(mail, ".spool", ".fedcba9876543210.tmp")];
    const kept = [join(box, "20260101T000000.000Z-a.eml"), join(box, "notes.tmp"), join(box, ".0123.tmp")];
    for (const file of [...left, ...kept]) await writeFile(file, "x");
    const { running, events } = await serveIn("leftovers");
    try {
      for (const file of left) expect(existsSync(file)).toBe(false);
      for (const file of kept) expect(existsSync(file)).toBe(true);
      const line = events.find((l) => l.includes("mail store: removed"));
      expect(line).toMatch(/mail store: removed 2 temporary file\(s\) an interrupted run left \(not mail/);
      expect(line).toContain(".0123456789abcdef.tmp");
    } finally {
      await running.close();
    }
  });

  it("LIM-6: keys expired by the start are purged then, and the banner counts both", async () => {
    const file = join(dir, "purge", "state", "idempotency.sqlite");
    const store = openSqliteIdempotencyStore(file);
    const response = { status: 200, headers: [] as [string, string][], body: new Uint8Array() };
    const now = Date.now();
    await store.put("a.example", "old", { contentDigest: "d", response, storedAtMs: 0, expiresAtMs: now - 1 });
    await store.put("a.example", "live", { contentDigest: "d", response, storedAtMs: now, expiresAtMs: now + 60_000 });
    await store.close();
    const { running } = await serveIn("purge");
    try {
      expect(running.idempotencyAtStart).toEqual({ kept: 1, purged: 1, cutOff: 0 });
      expect(describeServe(running).join("\n")).toContain("(1 key(s) kept from earlier runs, 1 expired purged;");
    } finally {
      await running.close();
    }
  });

  it("across three SIGKILLs (after a key is written, between mail and key, between requests), no accepted message is lost and none is stored twice", async () => {
    const keys = Array.from({ length: 8 }, (_, i) => `kill-${i + 1}`);
    const to = ["bob@b.example", "carol@b.example"];
    /** Keys answered 200, and the answers, as the sender saw them. */
    const accepted = new Map<string, string>();
    let next = 0;
    /** Sends keys in order from `next` (a key whose answer was lost is sent again) until the server dies or `stopAfter` are accepted. */
    const sendUntilDown = async (server: ServeAddress, stopAfter = keys.length): Promise<void> => {
      let taken = 0;
      while (next < keys.length && taken < stopAfter) {
        const key = keys[next] ?? "";
        const answer = await deliver(server, { key, to, text: `Message ${key}.` }).catch(() => undefined);
        if (answer === undefined) return;
        expect(answer.status).toBe(200);
        accepted.set(key, answer.body.toString());
        next += 1;
        taken += 1;
      }
    };
    const rounds = [
      { crashAfterIdempotencyPut: true, crashAtPut: 2 },
      { crashBeforeIdempotencyPut: true, crashAtPut: 2 },
      { killAfter: 2 },
    ];
    for (const round of rounds) {
      const child = await serveChild("kills", round);
      await sendUntilDown(child, "killAfter" in round ? round.killAfter : keys.length);
      if ("killAfter" in round) child.kill();
      expect(await child.exited).toBe("SIGKILL");
    }
    expect(next).toBeLessThan(keys.length);

    // The last start: every key is sent again (a sender that never saw an answer retries; one that did may too).
    const last = await serveIn("kills");
    try {
      const server = { port: last.running.server.port, cert: await readFile(last.running.tls.certFile, "utf8") };
      for (const key of keys) {
        const answer = await deliver(server, { key, to, text: `Message ${key}.` });
        expect(answer.status, key).toBe(200);
        expect(JSON.parse(answer.body.toString()), key).toEqual({
          results: to.map((recipient) => ({ recipient, status: "accepted" })),
        });
        // An answer given before a crash is the answer given after it, byte for byte.
        if (accepted.has(key)) expect(answer.body.toString(), key).toBe(accepted.get(key));
      }
      // Each key's message once in each mailbox: nothing lost, nothing twice.
      for (const mailbox of to) {
        const files = await last.running.store.list(mailbox);
        const texts = await Promise.all(files.map((f) => readFile(f, "utf8")));
        for (const key of keys) {
          expect(texts.filter((t) => t.includes(`Message ${key}.`)).length, `${mailbox} ${key}`).toBe(1);
        }
        expect(files).toHaveLength(keys.length);
      }
    } finally {
      await last.running.close();
    }
  }, 120_000);
});
