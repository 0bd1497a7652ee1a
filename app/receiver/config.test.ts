import { describe, expect, it } from "vitest";
import { createReceiver } from "./receiver.ts";
import { receiverConfigSchema } from "./config.ts";
import type { ReceiverConfigInput } from "./config.ts";
import { createMemoryMailStore } from "./memoryMailStore.ts";
import { createSlidingWindow } from "./policy.ts";
import { createManualClock, createTestResolver, testReceiverConfig } from "./testing.ts";

/** The issue paths of a config that does not validate. */
function issuePaths(config: unknown): string[] {
  const result = receiverConfigSchema.safeParse(config);
  expect(result.success).toBe(false);
  return result.success ? [] : result.error.issues.map((i) => i.path.join("."));
}

const base = testReceiverConfig();
const withCapabilities = (capabilities: Record<string, unknown>): unknown => ({
  ...base,
  capabilities: { max_message_size: 26214400, ...capabilities },
});

describe("receiverConfigSchema", () => {
  it("CAP-4, CAP-9, CAP-12, GET-5, POST-25, G3, G19: defaults are the spec's and the gaps' defaults", () => {
    const config = receiverConfigSchema.parse({
      domains: ["B.Example."],
      capabilities: { max_message_size: 26214400 },
      problem_base: "https://p.example/problems/",
    });
    expect(config.domains).toEqual(["b.example"]);
    expect(config.problem_base).toBe("https://p.example/problems");
    expect(config.capabilities).toEqual({
      versions: ["v1"],
      max_message_size: 26214400,
      max_recipients: 100,
      discovery_pin_max_age: 604800,
    });
    expect(config.capabilitiesMaxAgeS).toBe(3600);
    expect(config.idempotencyRetentionS).toBe(604800);
    expect(config.readings).toEqual({ signatureTolerance: { toleranceS: 300 }, fromDomainMismatch: "401" });
    expect(config.policy.failAfterAcceptance).toEqual([]);
  });

  it("CAP-7: max_message_size below 26214400 is refused at its path", () => {
    expect(issuePaths(withCapabilities({ max_message_size: 1000 }))).toEqual(["capabilities.max_message_size"]);
  });

  it("CAP-8: max_recipients below 100 is refused", () => {
    expect(issuePaths(withCapabilities({ max_recipients: 99 }))).toEqual(["capabilities.max_recipients"]);
  });

  it("CAP-2, CAP-3: versions must match ^v[1-9][0-9]*$ and be unique", () => {
    expect(issuePaths(withCapabilities({ versions: ["v0"] }))).toEqual(["capabilities.versions.0"]);
    expect(issuePaths(withCapabilities({ versions: ["v1", "v1"] }))).toEqual(["capabilities.versions"]);
  });

  it("CAP-14: abuse_contact is one mailto: URI without header fields", () => {
    expect(issuePaths(withCapabilities({ abuse_contact: "mailto:abuse@b.example?subject=x" }))).toEqual([
      "capabilities.abuse_contact",
    ]);
  });

  it("POST-25, LIM-6: a retention under 7 days is refused", () => {
    expect(issuePaths({ ...base, idempotencyRetentionS: 3600 })).toEqual(["idempotencyRetentionS"]);
  });

  it("PRB-2: problem_base must be an absolute URI", () => {
    expect(issuePaths({ ...base, problem_base: "problems" })).toEqual(["problem_base"]);
  });

  it("MBX-4, MBX-3: mailboxes and policy entries are mailboxes of a served domain; unknown keys are typos", () => {
    expect(issuePaths({ ...base, mailboxes: [{ address: "a b@b.example" }] })).toEqual(["mailboxes.0.address"]);
    expect(issuePaths({ ...base, mailboxes: [{ address: "bob@c.example" }] })).toEqual(["mailboxes.0.address"]);
    expect(issuePaths({ ...base, mailboxes: [{ address: "bob@b.example" }, { address: "bob@B.example" }] })).toEqual([
      "mailboxes.1.address",
    ]);
    expect(
      issuePaths({
        ...base,
        policy: { failAfterAcceptance: [{ mailbox: "bob@c.example", status: "5.0.0", diagnostic: "x" }] },
      }),
    ).toEqual(["policy.failAfterAcceptance.0.mailbox"]);
    expect(
      issuePaths({
        ...base,
        policy: { failAfterAcceptance: [{ mailbox: "bob@b.example", status: "6.0.0", diagnostic: "x" }] },
      }),
    ).toEqual(["policy.failAfterAcceptance.0.status"]);
    expect(issuePaths({ ...base, polcy: {} })).toEqual([""]);
  });

  it("G19: only the readings 401 and 403 exist", () => {
    expect(issuePaths({ ...base, readings: { G19: "402" } })).toEqual(["readings.G19"]);
  });

  it("G3, G19: a configuration parsed once parses again to itself (serve parses its file, createReceiver again)", () => {
    const once = receiverConfigSchema.parse({ ...base, readings: { G3: { toleranceS: 60 }, G19: "403" } });
    expect(once.readings).toEqual({ signatureTolerance: { toleranceS: 60 }, fromDomainMismatch: "403" });
    expect(receiverConfigSchema.parse(once)).toEqual(once);
    expect(issuePaths({ ...base, readings: { G19: "403", fromDomainMismatch: "401" } })).toEqual([
      "readings.fromDomainMismatch",
    ]);
  });

  it("CAP-7: createReceiver refuses a bad configuration by throwing (a caller's mistake, not network input)", () => {
    const bad = { ...base, capabilities: { max_message_size: 5 } } as ReceiverConfigInput;
    expect(() =>
      createReceiver(bad, {
        clock: createManualClock(),
        resolver: createTestResolver(),
        mailStore: createMemoryMailStore(),
      }),
    ).toThrow();
  });
});

describe("policy state", () => {
  it("LIM-14, ERR-8: a sliding window lets `max` events through per window and says how long to wait", () => {
    const window = createSlidingWindow(2, 10);
    expect(window.waitS("k", 0)).toBe(0);
    window.record("k", 0);
    window.record("k", 4000);
    expect(window.waitS("k", 5000)).toBe(5);
    expect(window.waitS("other", 5000)).toBe(0);
    expect(window.waitS("k", 10_000)).toBe(0);
    window.record("k", 10_000);
    expect(window.waitS("k", 10_500)).toBe(4);
  });
});

describe("memory mail store", () => {
  it("POST-9, POST-10: keeps each message byte for byte, the very bytes it was handed (no copy), and reports usage", async () => {
    const store = createMemoryMailStore();
    const message = new Uint8Array([1, 2, 3]);
    await store.deliver("bob@b.example", message, { deliveryId: "d1", receivedAtMs: 5 });
    expect(store.messages("bob@b.example")[0]?.message).toBe(message);
    expect(store.messages("bob@b.example")[0]?.message).toEqual(new Uint8Array([1, 2, 3]));
    expect(await store.usage("bob@b.example")).toEqual({ messages: 1, bytes: 3 });
    expect(await store.usage("carol@b.example")).toEqual({ messages: 0, bytes: 0 });
    expect(store.all().map((m) => [m.mailbox, m.deliveryId, m.receivedAtMs])).toEqual([["bob@b.example", "d1", 5]]);
  });
});
