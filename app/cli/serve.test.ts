import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { receiverConfigYaml, textMessage, type TestSender } from "../receiver/testing.ts";
import { describeServe, serveCommand, startServe, ServeUsageError, type RunningServe } from "./serve.ts";
import {
  addressOf,
  createServeFolder,
  headersOf,
  httpsSend,
  largeMessage,
  sendRequest,
  serveOptions,
  signedForServe,
  type HttpsAnswer,
} from "./testing.ts";

let dir: string;
let sender: TestSender;
let running: RunningServe;
const logs: string[] = [];
const errs: string[] = [];

const PROBLEMS = "https://b.example/problems";

beforeAll(async () => {
  let config: string;
  ({ dir, config, sender } = await createServeFolder("mailscope-serve-", ["bob@b.example"], PROBLEMS));
  running = await startServe(serveOptions(config, dir), {
    out: (l) => logs.push(l),
    err: (l) => errs.push(l),
  });
});

afterAll(async () => {
  await running?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A real HTTPS client that trusts only the server's self-signed certificate. */
const send = (options: Parameters<typeof httpsSend>[1]): Promise<HttpsAnswer> => httpsSend(addressOf(running), options);

describe("mailscope serve, end to end over HTTPS", () => {
  it("GET-1 GET-3 GET-5: GET /v1/capabilities answers 200 with the configured document", async () => {
    const answer = await send({ path: "/v1/capabilities" });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(answer.headers["cache-control"]).toBe("max-age=3600");
    expect(JSON.parse(answer.body.toString())).toEqual({
      versions: ["v1"],
      max_message_size: 26214400,
      max_recipients: 100,
      discovery_pin_max_age: 604800,
    });
  });

  it("POST-11 POST-9 POST-10: a signed delivery is accepted and stored as .eml, byte for byte", async () => {
    const message = textMessage({
      from: "alice@a.example",
      to: ["bob@b.example"],
      body: "Over the real network.\r\nDKIM survives.",
    });
    const request = await signedForServe(sender, running.server.port, { message, idempotencyKey: "e2e-1" });
    const answer = await sendRequest(addressOf(running), request);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual({
      results: [{ recipient: "bob@b.example", status: "accepted" }],
    });
    const files = await running.store.list("bob@b.example");
    expect(files).toHaveLength(1);
    expect(new Uint8Array(await readFile(files[0] as string))).toEqual(message);
    expect(files[0]).toContain(join(dir, "mail", "bob@b.example"));
    // The log line names the signing domain, the key and the recipients.
    expect(
      logs.some((l) => / POST \/v1\/messages 200 from=a\.example key=e2e-1 to=bob@b\.example:accepted /.test(l)),
    ).toBe(true);
  });

  it("POST-9 SVC-8: a 3 MiB delivery, written to the store while it arrives, is stored byte for byte; the spool is emptied", async () => {
    const message = largeMessage(3 * 1024 * 1024);
    const request = await signedForServe(sender, running.server.port, { message, idempotencyKey: "e2e-large" });
    const before = (await running.store.list("bob@b.example")).length;
    const answer = await sendRequest(addressOf(running), request);
    expect(answer.status).toBe(200);
    const files = await running.store.list("bob@b.example");
    expect(files).toHaveLength(before + 1);
    const stored = await Promise.all(files.map((f) => readFile(f)));
    expect(stored.some((bytes) => Buffer.compare(bytes, Buffer.from(message)) === 0)).toBe(true);
    // The spooled file was linked into the mailbox, then let go (decision 0011).
    await vi.waitFor(async () => expect(await readdir(join(dir, "mail", ".spool"))).toEqual([]));
  });

  it("AUTH-5: a request whose signature does not verify is 401 and stores nothing", async () => {
    const request = await signedForServe(sender, running.server.port, {
      idempotencyKey: "e2e-2",
      // Signed for another origin than the one it reaches: @target-uri differs.
      url: `https://localhost:1/v1/messages`,
    });
    const before = (await running.store.list("bob@b.example")).length;
    const answer = await sendRequest(addressOf(running), request);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ type: `${PROBLEMS}/invalid_signature` });
    expect(await running.store.list("bob@b.example")).toHaveLength(before);
  });

  it("G48: a delivery signed for https://mx.other.example/v1/messages and sent with that Host is 401; for a served name it is taken", async () => {
    const signedFor = async (authority: string, key: string): Promise<HttpsAnswer> => {
      const request = await signedForServe(sender, running.server.port, {
        idempotencyKey: key,
        url: `https://${authority}/v1/messages`,
      });
      return sendRequest(addressOf(running), request, { host: authority });
    };
    const before = (await running.store.list("bob@b.example")).length;
    const other = await signedFor("mx.other.example", "g48-1");
    expect(other.status).toBe(401);
    expect(JSON.parse(other.body.toString())).toMatchObject({ type: `${PROBLEMS}/invalid_signature` });
    expect(JSON.parse(other.body.toString()).detail).toContain(
      "mx.other.example, which is not a name of this receiver",
    );
    expect(await running.store.list("bob@b.example")).toHaveLength(before);
    expect((await signedFor("MX.B.EXAMPLE", "g48-2")).status).toBe(200);
  });

  it("the banner states the limits on slow and many clients", () => {
    expect(describeServe(running).join("\n")).toContain(
      "limits:      512 connections, 16 bodies before authentication, 408 after 30000 ms for the head or 30000 ms without body bytes",
    );
  });

  it("GET-10 VER-7 ERR-15: GET /v2/x is 404 unsupported_version with the versions served", async () => {
    const answer = await send({ path: "/v2/x" });
    expect(answer.status).toBe(404);
    expect(answer.headers["content-type"]).toBe("application/problem+json");
    expect(JSON.parse(answer.body.toString())).toMatchObject({
      type: `${PROBLEMS}/unsupported_version`,
      versions: ["v1"],
      status: 404,
    });
  });

  it("ERR-12 LIM-2: a body over 25 MiB is 413, from its Content-Length", async () => {
    const answer = await send({
      method: "POST",
      path: "/v1/messages",
      headers: headersOf(await signedForServe(sender, running.server.port, { idempotencyKey: "big-1" })),
      body: new Uint8Array(26214400 + 1024),
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ type: `${PROBLEMS}/message_too_large` });
  });

  it("ERR-12 LIM-2: a chunked body over 25 MiB is 413 once the bytes pass the limit", async () => {
    const total = 27 * 1024 * 1024;
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const n = Math.min(256 * 1024, total - sent);
        controller.enqueue(new Uint8Array(n));
        sent += n;
        if (sent >= total) controller.close();
      },
    });
    const headers = headersOf(await signedForServe(sender, running.server.port, { idempotencyKey: "big-2" }));
    delete headers["content-length"];
    const answer = await send({ method: "POST", path: "/v1/messages", headers, body: stream });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body.toString()).detail).toMatch(/stopped reading after \d+ bytes/);
  });

  it("SVC-6 AUTH-8: a TLS 1.2 client is refused", async () => {
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({
        host: "127.0.0.1",
        port: running.server.port,
        maxVersion: "TLSv1.2",
        ca: running.tls.cert,
        servername: "localhost",
      });
      socket.once("secureConnect", () => {
        socket.destroy();
        resolve("connected");
      });
      socket.once("error", () => resolve("refused"));
    });
    expect(outcome).toBe("refused");
  });

  it("AUTH-8: the generated certificate names the served domain, localhost and 127.0.0.1, and the banner says where it is", () => {
    expect(running.tls.source).toBe("generated");
    expect(running.tls.altNames).toEqual(
      expect.arrayContaining(["DNS:b.example", "DNS:localhost", "IP Address:127.0.0.1"]),
    );
    const banner = describeServe(running);
    expect(banner[0]).toBe(`mailscope serve: https://127.0.0.1:${running.server.port} for b.example (TLS 1.3 only)`);
    expect(banner.join("\n")).toContain(`curl --cacert ${running.tls.certFile}`);
  });
});

describe("mailscope serve, bad input", () => {
  it("G10: a bad configuration is reported as file:line:column: field: message", async () => {
    const config = join(dir, "bad.yaml");
    await writeFile(
      config,
      "domains: [b.example]\ncapabilities:\n  max_message_size: 10\nproblem_base: https://b.example/p\n",
    );
    const error = await startServe(
      { config, port: "0", state: join(dir, "state"), dns: false },
      { out: () => {}, err: () => {} },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServeUsageError);
    expect((error as Error).message).toBe(
      `${config}:3:21: capabilities.max_message_size: max_message_size is at least 26214400 (CAP-7)`,
    );
  });

  it("G10: a bad port or a lone --cert is a usage error", async () => {
    const config = join(dir, "ok.yaml");
    await writeFile(
      config,
      "domains: [b.example]\ncapabilities:\n  max_message_size: 26214400\nproblem_base: https://b.example/p\n",
    );
    const io = { out: () => {}, err: () => {} };
    await expect(startServe({ config, port: "http", dns: false }, io)).rejects.toThrow(/--port "http"/);
    await expect(startServe({ config, port: "0", cert: join(dir, "c.pem"), dns: false }, io)).rejects.toThrow(
      /--cert and --key go together/,
    );
  });

  it("G4: a keyRecords value that is not a key record is refused at start, with its position", async () => {
    const config = join(dir, "badkey.yaml");
    await writeFile(
      config,
      "domains: [b.example]\ncapabilities:\n  max_message_size: 26214400\nproblem_base: https://b.example/p\nkeyRecords:\n  s1._svckey.a.example: not-a-record\n",
    );
    const error = await startServe(
      { config, port: "0", state: join(dir, "state-badkey"), maildir: join(dir, "mail-badkey"), dns: false },
      { out: () => {}, err: () => {} },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServeUsageError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^${config.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:6:25: keyRecords\\["s1\\._svckey\\.a\\.example"\\]: not a key record \\(G4\\)`,
      ),
    );
  });

  it("a --maildir that is a file is refused at start, before anything listens", async () => {
    const config = join(dir, "ok2.yaml");
    await writeFile(
      config,
      "domains: [b.example]\ncapabilities:\n  max_message_size: 26214400\nproblem_base: https://b.example/p\n",
    );
    const file = join(dir, "a-file");
    await writeFile(file, "x");
    const io = { out: () => {}, err: () => {} };
    const options = { config, port: "0", state: join(dir, "state-file"), dns: false };
    await expect(startServe({ ...options, maildir: file }, io)).rejects.toThrow(
      `--maildir ${file}: is a file (or under one), not a folder`,
    );
    await expect(startServe({ ...options, maildir: join(file, "mail") }, io)).rejects.toThrow(/is a file/);
    await expect(startServe({ ...options, maxConnections: "0" }, io)).rejects.toThrow(
      '--max-connections "0": a whole number above 0',
    );
    await expect(startServe({ ...options, bodyTimeout: "1s" }, io)).rejects.toThrow(/--body-timeout "1s"/);
  });

  it("--headers-timeout and --body-timeout reach the server: 408 for a stalled head, and for a signed delivery whose body stalls", async () => {
    const config = join(dir, "limits.yaml");
    await writeFile(config, receiverConfigYaml(sender, ["bob@b.example"], "https://b.example/p"));
    const limited = await startServe(
      serveOptions(config, join(dir, "limits"), { headersTimeout: "200", bodyTimeout: "200", maxConnections: "4" }),
      { out: () => {}, err: () => {} },
    );
    try {
      expect(limited.limits).toEqual({
        headersTimeoutMs: 200,
        bodyTimeoutMs: 200,
        maxConnections: 4,
        maxUnauthenticatedBodies: 16,
      });
      const stalled = async (first: string): Promise<string> => {
        const socket = connect({
          host: "127.0.0.1",
          port: limited.server.port,
          ca: limited.tls.cert,
          servername: "localhost",
        });
        await new Promise<void>((resolve, reject) => {
          socket.once("secureConnect", () => resolve());
          socket.once("error", reject);
        });
        return new Promise<string>((resolve) => {
          let text = "";
          socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
          socket.on("error", () => {});
          socket.once("close", () => resolve(text));
          socket.write(first);
        });
      };
      expect(await stalled("POST /v1/messages HTTP/1.1\r\nHost: localhost\r\n")).toMatch(/^HTTP\/1\.1 408 /);
      // A signed delivery whose body stops halfway: the signature verifies, the body read waits, 408.
      const request = await signedForServe(sender, limited.server.port, { idempotencyKey: "limits-1" });
      const body = Buffer.from(await request.arrayBuffer());
      const head = [
        "POST /v1/messages HTTP/1.1",
        `Host: localhost:${limited.server.port}`,
        ...Object.entries(headersOf(request)).map(([n, v]) => `${n}: ${v}`),
        `Content-Length: ${body.byteLength}`,
        "",
        "",
      ].join("\r\n");
      const half = body.subarray(0, body.byteLength >> 1).toString("latin1");
      const answer = await stalled(head + half);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain("sent no more of the body for 200 ms");
      expect(await limited.store.list("bob@b.example")).toHaveLength(0);
    } finally {
      await limited.close();
    }
  });

  it("POST-1: the command declares its options", () => {
    const command = serveCommand();
    expect(command.name()).toBe("serve");
    expect(command.options.map((o) => o.long)).toEqual(
      expect.arrayContaining([
        "--config",
        "--cert",
        "--key",
        "--port",
        "--host",
        "--maildir",
        "--state",
        "--no-dns",
        "--headers-timeout",
        "--body-timeout",
        "--max-connections",
        "--max-unauthenticated-bodies",
      ]),
    );
  });
});
