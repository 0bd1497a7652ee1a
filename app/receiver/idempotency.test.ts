import { describe, expect, it } from "vitest";
import { StorageError, type MailStore } from "../ports.ts";
import { createMemoryIdempotencyStore } from "./idempotencyStore.ts";
import type { IdempotencyRecord, IdempotencyStore } from "./idempotencyStore.ts";
import { createMemoryMailStore } from "./memoryMailStore.ts";
import { createReceiver } from "./receiver.ts";
import {
  createReceiverHarness,
  createTestSender,
  createTraceRecorder,
  readProblem,
  testReceiverConfig,
  textMessage,
} from "./testing.ts";

const DAY_MS = 24 * 3600 * 1000;

/** Everything a response carries, for byte-for-byte comparison. */
async function snapshot(
  response: Response,
): Promise<{ status: number; headers: [string, string][]; body: Uint8Array }> {
  return {
    status: response.status,
    headers: [...response.headers],
    body: new Uint8Array(await response.arrayBuffer()),
  };
}

describe("idempotency (POST-12, POST-25, POST-26, G11)", () => {
  it("POST-12, POST-24, G11: a retry re-signed later with the same key and body gets the original response byte for byte, delivered once", async () => {
    const h = await createReceiverHarness();
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example", "nobody@b.example"] });
    const options = { idempotencyKey: "retry-me", to: ["bob@b.example", "nobody@b.example"], message };
    const first = await snapshot(await h.deliver(options));
    await h.clock.advance(90_000);
    const second = await snapshot(await h.deliver(options));
    expect(second).toEqual(first);
    expect(first.status).toBe(200);
    expect(h.store.all()).toHaveLength(1);
    expect(h.trace.named("idempotency.replay").map((e) => e.data)).toEqual([
      { signingDomain: "a.example", key: "retry-me", recipients: ["bob@b.example", "nobody@b.example"] },
    ]);
  });

  it("G11: a replay returns the stored answer whatever the mailbox looks like now (dave is full by now)", async () => {
    const h = await createReceiverHarness();
    const message = textMessage({ from: "alice@a.example", to: ["dave@b.example"] });
    const first = await snapshot(await h.deliver({ idempotencyKey: "k1", to: ["dave@b.example"], message }));
    const full = await h.deliver({ idempotencyKey: "k2", to: ["dave@b.example"] });
    expect(JSON.stringify(await full.json())).toContain("mailbox_full");
    expect(await snapshot(await h.deliver({ idempotencyKey: "k1", to: ["dave@b.example"], message }))).toEqual(first);
  });

  it("POST-26, ERR-13, POST-17: the same key with another body → 409 idempotency_conflict, nothing more stored", async () => {
    const h = await createReceiverHarness();
    expect((await h.deliver({ idempotencyKey: "k" })).status).toBe(200);
    const answer = await readProblem(await h.deliver({ idempotencyKey: "k", to: ["carol@b.example"] }));
    expect([answer.status, answer.identifier, answer.contentType]).toEqual([
      409,
      "idempotency_conflict",
      "application/problem+json",
    ]);
    expect(h.store.all().map((m) => m.mailbox)).toEqual(["bob@b.example"]);
    expect(h.trace.named("idempotency.conflict").map((e) => e.data)).toEqual([
      { signingDomain: "a.example", key: "k" },
    ]);
  });

  it("G11: the same envelope with one byte of the message changed is other content → 409", async () => {
    const h = await createReceiverHarness();
    expect((await h.deliver({ idempotencyKey: "k", message: "Subject: a\r\n\r\nbody1\r\n" })).status).toBe(200);
    expect((await h.deliver({ idempotencyKey: "k", message: "Subject: a\r\n\r\nbody2\r\n" })).status).toBe(409);
  });

  it("POST-12, POST-23: two identical requests in flight at once deliver once; the second gets the first's answer", async () => {
    // The first key lookup is held until the second request looks its key up too, so both are
    // past the signature when neither has an answer yet: one of them must wait for the other's.
    const idempotency = createMemoryIdempotencyStore();
    let release: () => void = () => {};
    const bothArrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    let gets = 0;
    let puts = 0;
    const h = await createReceiverHarness((c) => c, {
      idempotencyStore: {
        get: async (domain, key, nowMs) => {
          gets += 1;
          if (gets === 1) await bothArrived;
          else release();
          return idempotency.get(domain, key, nowMs);
        },
        put: (domain, key, record) => {
          puts += 1;
          return idempotency.put(domain, key, record);
        },
      },
    });
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    const a = await h.request({ idempotencyKey: "twin", message });
    const b = await h.request({ idempotencyKey: "twin", message });
    const [ra, rb] = await Promise.all([h.receiver(a), h.receiver(b)]);
    const [sa, sb] = [await snapshot(ra), await snapshot(rb)];
    expect(sa.status).toBe(200);
    expect(sb).toEqual(sa);
    expect([gets, puts]).toEqual([2, 1]);
    expect(h.store.all()).toHaveLength(1);
    expect(h.trace.named("mailbox.delivered")).toHaveLength(1);
    expect(h.trace.named("idempotency.replay")).toHaveLength(1);
  });

  it("POST-12, POST-23: a request arriving while an identical one is still being stored gets the same answer and delivers nothing", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => {};
    const firstInStore = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const inner = createMemoryMailStore();
    const slowStore: MailStore = {
      deliver: async (mailbox, message, meta) => {
        entered();
        await gate;
        return inner.deliver(mailbox, message, meta);
      },
      usage: (mailbox) => inner.usage(mailbox),
    };
    let gets = 0;
    const idempotency = createMemoryIdempotencyStore();
    const h = await createReceiverHarness((c) => c, {
      mailStore: slowStore,
      idempotencyStore: {
        get: (domain, key, nowMs) => {
          gets += 1;
          return idempotency.get(domain, key, nowMs);
        },
        put: (domain, key, record) => idempotency.put(domain, key, record),
      },
    });
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    const first = h.receiver(await h.request({ idempotencyKey: "twin", message }));
    await firstInStore;
    const second = h.receiver(await h.request({ idempotencyKey: "twin", message }));
    const verdicts = Promise.all([first, second]);
    // Whether the second waits for the first in flight or finds its stored record, it must not deliver again.
    release();
    const [ra, rb] = await verdicts;
    expect(await snapshot(rb)).toEqual(await snapshot(ra));
    expect(inner.all()).toHaveLength(1);
    expect(gets).toBeGreaterThanOrEqual(1);
  });

  it("POST-26: two requests in flight with one key and different bodies: one is delivered, the other conflicts", async () => {
    const h = await createReceiverHarness();
    const a = await h.request({ idempotencyKey: "twin", to: ["bob@b.example"] });
    const b = await h.request({ idempotencyKey: "twin", to: ["carol@b.example"] });
    const statuses = (await Promise.all([h.receiver(a), h.receiver(b)])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    expect(h.store.all()).toHaveLength(1);
  });

  it("POST-26, ERR-13: the same key with another body while the first request is still being stored: 409 at once, nothing stored for it", async () => {
    // The first request is held inside the mail store: it is in flight, with no record of its key yet,
    // when the second arrives (this order is made, not left to the engine's timing).
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const entered: (() => void)[] = [];
    const inStore = [0, 1].map((i) => new Promise<string>((resolve) => (entered[i] = () => resolve("stored"))));
    let deliveries = 0;
    const inner = createMemoryMailStore();
    const h = await createReceiverHarness((c) => c, {
      mailStore: {
        deliver: async (mailbox, message, meta) => {
          entered[deliveries++]?.();
          await gate;
          return inner.deliver(mailbox, message, meta);
        },
        usage: (mailbox) => inner.usage(mailbox),
      },
    });
    const first = h.receiver(await h.request({ idempotencyKey: "twin", to: ["bob@b.example"] }));
    await inStore[0];
    expect(h.idempotency.size()).toBe(0);
    const second = h.receiver(await h.request({ idempotencyKey: "twin", to: ["carol@b.example"] }));
    // Answered while the first is still held; reaching the mail store instead is the failure.
    const answer = await Promise.race([second, inStore[1]]);
    expect(answer).toBeInstanceOf(Response);
    const problem = await readProblem(answer as Response);
    expect([problem.status, problem.identifier]).toEqual([409, "idempotency_conflict"]);
    expect(h.trace.named("idempotency.conflict")).toHaveLength(1);
    release();
    expect((await first).status).toBe(200);
    expect(inner.all().map((m) => m.mailbox)).toEqual(["bob@b.example"]);
  });

  it("POST-25, LIM-6: a key is remembered for 7 days on the clock and forgotten after", async () => {
    const h = await createReceiverHarness();
    expect((await h.deliver({ idempotencyKey: "weekly" })).status).toBe(200);
    await h.clock.advance(7 * DAY_MS - 1000);
    expect((await h.deliver({ idempotencyKey: "weekly", to: ["carol@b.example"] })).status).toBe(409);
    await h.clock.advance(1000);
    const fresh = await h.deliver({ idempotencyKey: "weekly", to: ["carol@b.example"] });
    expect(fresh.status).toBe(200);
    expect(h.store.all().map((m) => m.mailbox)).toEqual(["bob@b.example", "carol@b.example"]);
  });

  it("POST-25: a longer configured retention is honoured (10 days)", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, idempotencyRetentionS: 10 * 24 * 3600 }));
    expect((await h.deliver({ idempotencyKey: "k" })).status).toBe(200);
    await h.clock.advance(9 * DAY_MS);
    expect((await h.deliver({ idempotencyKey: "k", to: ["carol@b.example"] })).status).toBe(409);
  });

  it("AUTH-6, POST-25: keys are scoped per signing domain: the same key from two domains never collides", async () => {
    const h = await createReceiverHarness();
    const other = await createTestSender("x.example");
    h.resolver.setTxt(other.keyid, [other.keyRecord]);
    const fromA = await snapshot(await h.deliver({ idempotencyKey: "shared", to: ["bob@b.example"] }));
    const fromX = await snapshot(
      await h.deliver({
        idempotencyKey: "shared",
        to: ["carol@b.example"],
        from: "zoe@x.example",
        key: other.privateKey,
        keyid: other.keyid,
      }),
    );
    expect([fromA.status, fromX.status]).toEqual([200, 200]);
    expect(h.store.all().map((m) => m.mailbox)).toEqual(["bob@b.example", "carol@b.example"]);
    expect(
      await snapshot(
        await h.deliver({ idempotencyKey: "shared", to: ["bob@b.example"], message: h.store.all()[0]?.message }),
      ),
    ).toEqual(fromA);
  });

  it("POST-24, ERR-8: a 429 is not remembered: the retry with the same key after the window is delivered", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { rateLimits: [{ signingDomain: "*", max: 1, windowS: 60 }] },
    }));
    expect((await h.deliver({ idempotencyKey: "first" })).status).toBe(200);
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "second" });
    expect((await h.deliver({ idempotencyKey: "second", message })).status).toBe(429);
    await h.clock.advance(60_000);
    expect((await h.deliver({ idempotencyKey: "second", message })).status).toBe(200);
  });

  it("POST-24, ERR-10: a 503 answered after the idempotency step is not remembered: the retry with the same key is delivered", async () => {
    // The receiver fails after the key was looked up (its trace sink throws once as the message is
    // stored): the request-level 503 comes out of the steps after idempotency, not a switch before it.
    const looked: string[] = [];
    const stored: number[] = [];
    const records = createMemoryIdempotencyStore();
    const idempotencyStore: IdempotencyStore = {
      get: (domain, key, nowMs) => {
        looked.push(key);
        return records.get(domain, key, nowMs);
      },
      put: (domain, key, record) => {
        stored.push(record.response.status);
        return records.put(domain, key, record);
      },
    };
    let failures = 1;
    const trace = createTraceRecorder();
    const h = await createReceiverHarness((c) => c, {
      idempotencyStore,
      trace: {
        emit: (event) => {
          if (event.name === "mailbox.delivered" && failures-- > 0) throw new Error("disk full");
          trace.emit(event);
        },
      },
    });
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    const failed = await h.deliver({ idempotencyKey: "k", message });
    expect(failed.status).toBe(503);
    expect((await readProblem(failed)).identifier).toBe("temporary_failure");
    expect(looked).toEqual(["k"]);
    expect(stored).toEqual([]);
    expect(records.size()).toBe(0);
    await h.clock.advance(60_000);
    expect((await h.deliver({ idempotencyKey: "k", message })).status).toBe(200);
    expect(trace.named("idempotency.replay")).toHaveLength(0);
    expect(stored).toEqual([200]);
  });

  it("POST-24, ERR-27, G26: a 403 with Retry-After is not remembered: once the policy lifts, the retry with the same key is delivered", async () => {
    const h = await createReceiverHarness((c) => ({
      ...c,
      policy: { refusedDomains: ["a.example"], refusedRetryAfterS: 900 },
    }));
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    const refused = await h.deliver({ idempotencyKey: "k", message });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("retry-after")).toBe("900");
    expect(h.idempotency.size()).toBe(0);
    // The policy lifts: the receiver runs on without the refusal, with the same key store.
    const lifted = createReceiver(testReceiverConfig(), {
      clock: h.clock,
      resolver: h.resolver,
      mailStore: h.store,
      idempotencyStore: h.idempotency,
      trace: h.trace,
    });
    await h.clock.advance(900_000);
    const retry = await lifted(await h.request({ idempotencyKey: "k", message }));
    expect(retry.status).toBe(200);
    expect(h.trace.named("idempotency.replay")).toHaveLength(0);
    expect(h.store.all().map((m) => m.mailbox)).toEqual(["bob@b.example"]);
  });

  it("POST-12, ERR-3: a 403 without Retry-After is final and remembered: the same key is answered the stored 403 after the policy lifts", async () => {
    const h = await createReceiverHarness((c) => ({ ...c, policy: { refusedDomains: ["a.example"] } }));
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    const refused = await snapshot(await h.deliver({ idempotencyKey: "k", message }));
    expect(refused.status).toBe(403);
    const lifted = createReceiver(testReceiverConfig(), {
      clock: h.clock,
      resolver: h.resolver,
      mailStore: h.store,
      idempotencyStore: h.idempotency,
      trace: h.trace,
    });
    await h.clock.advance(900_000);
    expect(await snapshot(await lifted(await h.request({ idempotencyKey: "k", message })))).toEqual(refused);
    expect(h.store.all()).toEqual([]);
  });

  it("POST-12: a permanent 400 after the idempotency step is remembered and replayed byte for byte", async () => {
    const h = await createReceiverHarness();
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    const options = { idempotencyKey: "bad-envelope", envelope: { from: "alice@a.example", to: [] }, message };
    const first = await snapshot(await h.deliver(options));
    expect(first.status).toBe(400);
    expect(await snapshot(await h.deliver(options))).toEqual(first);
    expect(h.trace.named("idempotency.replay")).toHaveLength(1);
  });

  it("AUTH-5, AUTH-6: a request that fails the signature leaves no trace in the key store", async () => {
    const h = await createReceiverHarness();
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"] });
    expect((await h.deliver({ idempotencyKey: "k", message, createdS: h.clock.nowS() - 3600 })).status).toBe(401);
    expect(h.idempotency.size()).toBe(0);
    expect((await h.deliver({ idempotencyKey: "k", message })).status).toBe(200);
  });
});

describe("a failing store is named in the answer (the idempotency store's full disk was blamed on the mail store)", () => {
  /** A memory idempotency store whose `begin` (the intent written before any mail is) or `get` fails. */
  function failingIdempotency(fails: "begin" | "get"): IdempotencyStore {
    const inner = createMemoryIdempotencyStore();
    const full = (): Promise<never> => Promise.reject(new Error("disk full"));
    return {
      get: fails === "get" ? full : (domain, key, nowMs) => inner.get(domain, key, nowMs),
      put: (domain, key, record) => inner.put(domain, key, record),
      begin: fails === "begin" ? full : () => Promise.resolve(),
    };
  }

  it("ERR-21, STATE-6: the intent cannot be written: the recipient is deferred by the idempotency store, and nothing is stored", async () => {
    const h = await createReceiverHarness((c) => c, { idempotencyStore: failingIdempotency("begin") });
    const response = await h.deliver();
    const body = (await response.json()) as {
      results: { status: string; problem?: { type: string; detail: string } }[];
    };
    expect(body.results[0]).toMatchObject({
      status: "deferred",
      problem: { type: expect.stringMatching(/temporary_failure$/), detail: "the idempotency store failed: disk full" },
    });
    expect(h.store.all()).toHaveLength(0);
  });

  it("ERR-10: the key cannot be looked up: 503 naming the idempotency store", async () => {
    const h = await createReceiverHarness((c) => c, { idempotencyStore: failingIdempotency("get") });
    const problem = await readProblem(await h.deliver());
    expect(problem).toMatchObject({
      status: 503,
      identifier: "temporary_failure",
      json: { detail: "the idempotency store failed: disk full" },
    });
  });

  it("ERR-9: the mail store fails: the recipient is deferred by the mail store, with the store and path a StorageError names", async () => {
    const mailStore: MailStore = {
      deliver: () =>
        Promise.reject(
          new StorageError(
            "mail store",
            "/srv/mail/bob@b.example",
            new Error("ENOSPC: no space left on device, write"),
          ),
        ),
      usage: () => Promise.resolve({ messages: 0, bytes: 0 }),
    };
    const h = await createReceiverHarness((c) => c, { mailStore });
    const body = (await (await h.deliver()).json()) as { results: { status: string; problem?: { detail: string } }[] };
    expect(body.results[0]).toMatchObject({
      status: "deferred",
      problem: { detail: "the mail store failed at /srv/mail/bob@b.example: ENOSPC: no space left on device, write" },
    });
  });
});

describe("the in-memory idempotency store", () => {
  const record = (digest: string, storedAtMs: number, ttlMs = 1000): IdempotencyRecord => ({
    contentDigest: digest,
    response: { status: 200, headers: [["content-type", "application/json"]], body: new Uint8Array([123, 125]) },
    storedAtMs,
    expiresAtMs: storedAtMs + ttlMs,
  });

  it("AUTH-6: records are kept per (signing domain, key); a domain never sees another's", async () => {
    const store = createMemoryIdempotencyStore();
    await store.put("a.example", "k", record("sha-256:aa", 0));
    await store.put("b.example", "k", record("sha-256:bb", 0));
    expect((await store.get("a.example", "k", 10))?.contentDigest).toBe("sha-256:aa");
    expect((await store.get("b.example", "k", 10))?.contentDigest).toBe("sha-256:bb");
    expect(await store.get("c.example", "k", 10)).toBeUndefined();
    expect(store.size()).toBe(2);
  });

  it("LIM-6: a record is gone from its expiry on, and expired records are swept on put", async () => {
    const store = createMemoryIdempotencyStore();
    await store.put("a.example", "k1", record("d1", 0, 1000));
    await store.put("a.example", "k2", record("d2", 500, 1000));
    expect(await store.get("a.example", "k1", 999)).toBeDefined();
    expect(await store.get("a.example", "k1", 1000)).toBeUndefined();
    expect(store.size()).toBe(1);
    await store.put("a.example", "k3", record("d3", 2000, 1000));
    expect(store.size()).toBe(1);
  });

  it("POST-25: a key put again gets the new record, and the sweep of the old entry leaves it alone", async () => {
    const store = createMemoryIdempotencyStore();
    await store.put("a.example", "k", record("old", 0, 1000));
    await store.put("a.example", "k", record("new", 900, 1000));
    await store.put("a.example", "other", record("x", 1500, 1000));
    expect((await store.get("a.example", "k", 1500))?.contentDigest).toBe("new");
    expect(store.size()).toBe(2);
  });
});

describe("the in-memory idempotency store (POST-12)", () => {
  it("POST-12: gives back the stored response byte for byte, every byte value, each time a copy of its own", async () => {
    const store = createMemoryIdempotencyStore();
    const body = Uint8Array.from({ length: 256 }, (_, i) => 255 - i);
    const headers = [["Content-Type", "application/json"] as const];
    const record = {
      contentDigest: "sha-256:00",
      response: { status: 200, headers, body },
      storedAtMs: 1_000,
      expiresAtMs: 2_000,
    };
    await store.put("a.example", "k1", record);
    body.fill(0); // the caller's bytes are not the store's
    const first = await store.get("a.example", "k1", 1_500);
    expect(first?.response.body).toEqual(Uint8Array.from({ length: 256 }, (_, i) => 255 - i));
    expect(first).toMatchObject({ contentDigest: "sha-256:00", storedAtMs: 1_000, expiresAtMs: 2_000 });
    expect(first?.response).toMatchObject({ status: 200, headers });
    first?.response.body.fill(7);
    expect((await store.get("a.example", "k1", 1_500))?.response.body[0]).toBe(255);
    expect(await store.get("a.example", "k1", 2_000)).toBeUndefined();
  });
});
