import { describe, expect, it } from "vitest";
import * as protocol from "./index.ts";

describe("the protocol library's public surface", () => {
  it.each([
    "parseMailbox",
    "minimalLocalPart",
    "parseEnvelope",
    "parseCapabilities",
    "parseDeliveryResult",
    "parseProblem",
    "createContentDigest",
    "verifyContentDigest",
    "createSignatureBase",
    "signRequest",
    "verifyRequestSignature",
    "buildMultipartBody",
    "parseMultipartBody",
    "negotiateVersion",
    "interpretRequestLevel",
    "interpretRecipientResult",
  ])("exports %s as a function", (name) => {
    expect(typeof (protocol as Record<string, unknown>)[name]).toBe("function");
  });

  it("ERR-1..ERR-10: exports the errors table with one row per identifier of SPEC.md", () => {
    expect(Object.keys(protocol.errorsTable).sort()).toEqual(
      [
        "invalid_request",
        "invalid_signature",
        "policy_rejected",
        "recipient_not_found",
        "unsupported_version",
        "idempotency_conflict",
        "message_too_large",
        "rate_limited",
        "mailbox_full",
        "temporary_failure",
      ].sort(),
    );
  });

  it("a parse through the public surface reports the field and the rule, and never throws", () => {
    const parsed = protocol.parseEnvelope({ from: "alice@a.example", to: [] });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.violations[0]?.path).toBe("$.to");
      expect(protocol.ruleById(parsed.violations[0]!.rule)).toBeDefined();
    }
    expect(() => protocol.parseEnvelope(undefined)).not.toThrow();
    expect(() => protocol.parseCapabilities("not an object")).not.toThrow();
    expect(() => protocol.parseProblem(null)).not.toThrow();
    expect(() => protocol.parseMailbox(42)).not.toThrow();
  });
});
