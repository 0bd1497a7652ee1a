import { describe, expect, it } from "vitest";
import rfc9457 from "./fixtures/rfc9457-examples.json" with { type: "json" };
import mailboxCases from "./fixtures/mailbox-cases.json" with { type: "json" };
import { parseMailbox } from "./mailbox.ts";
import type { Parsed, Violation } from "./result.ts";
import {
  MAX_PIN_AGE_S,
  createProblem,
  effectivePinMaxAgeS,
  envelopeJson,
  jsonSchemas,
  matchResults,
  parseCapabilities,
  parseCapabilitiesBody,
  parseDeliveryResult,
  parseEnvelope,
  parseJson,
  parseProblem,
  parseRecipientResult,
  problemIdentifier,
  problemJson,
  problemResponse,
  recipientResultJson,
} from "./resources.ts";
import type { Envelope } from "./resources.ts";

const BASE = "https://problems.example/svc";

function violations<T>(parsed: Parsed<T>): readonly Violation[] {
  return parsed.ok ? [] : parsed.violations;
}

function rules<T>(parsed: Parsed<T>): string[] {
  return violations(parsed).map((v) => `${v.path} ${v.rule}`);
}

function value<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new Error(`expected a value, got ${JSON.stringify(parsed.violations)}`);
  return parsed.value;
}

describe("parseJson", () => {
  it("POST-8: JSON text parses, as a string or as UTF-8 bytes", () => {
    expect(parseJson('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJson(new TextEncoder().encode('{"to":["ü@example.com"]}'))).toEqual({
      ok: true,
      value: { to: ["ü@example.com"] },
    });
  });

  it("POST-8: a JSON syntax error is a violation at the path given, not an exception", () => {
    const parsed = parseJson("{from:", "$.parts[0]");
    expect(parsed.ok).toBe(false);
    expect(violations(parsed)[0]).toMatchObject({ path: "$.parts[0]", rule: "POST-8" });
    expect(violations(parsed)[0]?.message).toMatch(/^the body is not valid JSON/);
  });

  it("DLR-1, GET-3, PRB-1: the caller names the rule of the resource it expected", () => {
    expect(rules(parseJson("<html>", "$", "DLR-1"))).toEqual(["$ DLR-1"]);
    expect(rules(parseJson("", "$", "GET-3"))).toEqual(["$ GET-3"]);
  });

  it("POST-8: bytes that are not UTF-8 are refused", () => {
    const parsed = parseJson(new Uint8Array([0x7b, 0xff, 0x7d]));
    expect(violations(parsed)[0]?.message).toContain("not valid UTF-8");
  });
});

describe("Envelope", () => {
  const to = ["alice@example.org", "bob@example.org"];

  it("ENV-1, ENV-4: from and to are read as mailboxes", () => {
    const envelope = value(parseEnvelope({ from: "carol@Sender.example", to }));
    expect(envelope.from).toEqual({ localPart: "carol", domain: "sender.example", address: "carol@sender.example" });
    expect(envelope.to.map((m) => m.address)).toEqual(to);
  });

  it("ENV-3: a null from is the null reverse-path", () => {
    expect(value(parseEnvelope({ from: null, to })).from).toBeNull();
  });

  it("ENV-1: from is required and must be a Mailbox string or null", () => {
    expect(rules(parseEnvelope({ to }))).toEqual(["$.from ENV-1"]);
    expect(violations(parseEnvelope({ to }))[0]?.message).toBe('"from" is required');
    expect(rules(parseEnvelope({ from: 7, to }))).toEqual(["$.from ENV-1"]);
    expect(rules(parseEnvelope({ from: "no-at-sign", to }))).toEqual(["$.from MBX-1"]);
  });

  it("ENV-1: an envelope that is not a JSON object is refused at $", () => {
    expect(rules(parseEnvelope([]))).toEqual(["$ ENV-1"]);
    expect(rules(parseEnvelope(null))).toEqual(["$ ENV-1"]);
  });

  it("ENV-4, ENV-5: to is a non-empty array of Mailbox", () => {
    expect(rules(parseEnvelope({ from: null }))).toEqual(["$.to ENV-4"]);
    expect(rules(parseEnvelope({ from: null, to: "alice@example.org" }))).toEqual(["$.to ENV-4"]);
    expect(rules(parseEnvelope({ from: null, to: [] }))).toEqual(["$.to ENV-5"]);
  });

  it("MBX-1, MBX-6: a bad recipient is reported at its index with its MBX rule", () => {
    expect(rules(parseEnvelope({ from: null, to: ["alice@example.org", 3, `${"x".repeat(65)}@example.org`] }))).toEqual(
      ["$.to[1] MBX-1", "$.to[2] MBX-6"],
    );
  });

  it("ENV-2, AUTH-4: with a signing domain, from must be in it; case and a trailing dot do not matter", () => {
    expect(parseEnvelope({ from: "carol@sender.example", to }, { signingDomain: "Sender.Example." }).ok).toBe(true);
    expect(rules(parseEnvelope({ from: "carol@other.example", to }, { signingDomain: "sender.example" }))).toEqual([
      "$.from ENV-2",
    ]);
    expect(parseEnvelope({ from: null, to }, { signingDomain: "sender.example" }).ok).toBe(true);
  });

  it("ENV-6: repeated recipients are refused; domains compare without case, local parts exactly (G22)", () => {
    expect(rules(parseEnvelope({ from: null, to: ["alice@example.org", "alice@EXAMPLE.org"] }))).toEqual([
      "$.to[1] ENV-6",
    ]);
    expect(parseEnvelope({ from: null, to: ["alice@example.org", "Alice@example.org"] }).ok).toBe(true);
  });

  it("ENV-7: all recipients share one domain", () => {
    expect(rules(parseEnvelope({ from: null, to: ["a@example.org", "b@example.net", "c@EXAMPLE.ORG"] }))).toEqual([
      "$.to[1] ENV-7",
    ]);
  });

  it("ENV-8, ERR-11: to has at most max_recipients items, 100 by default", () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@example.org`);
    expect(parseEnvelope({ from: null, to: many(100) }).ok).toBe(true);
    expect(rules(parseEnvelope({ from: null, to: many(101) }))).toEqual(["$.to ENV-8"]);
    expect(parseEnvelope({ from: null, to: many(101) }, { maxRecipients: 500 }).ok).toBe(true);
  });

  it("ENV-6, ENV-7: the checks across items still run when another item is broken", () => {
    expect(rules(parseEnvelope({ from: null, to: ["a@example.org", "a@example.org", "b@example.net", 1] }))).toEqual([
      "$.to[3] MBX-1",
      "$.to[1] ENV-6",
      "$.to[2] ENV-7",
    ]);
  });

  it("ENV-9, VER-3: unknown fields are ignored", () => {
    const envelope = value(parseEnvelope({ from: null, to, priority: "high", ext: { a: 1 } }));
    expect(Object.keys(envelope).sort()).toEqual(["from", "to"]);
  });

  it("ENV-1, ENV-4: envelopeJson writes the wire form back", () => {
    const envelope = value(parseEnvelope({ from: "carol@sender.example", to }));
    expect(envelopeJson(envelope)).toEqual({ from: "carol@sender.example", to });
    expect(value(parseEnvelope(envelopeJson(envelope)))).toEqual(envelope);
  });
});

describe("Capabilities", () => {
  const minimal = { max_message_size: 26214400 };

  it('CAP-4, CAP-9: defaults versions ["v1"] and max_recipients 100', () => {
    expect(value(parseCapabilities(minimal))).toEqual({
      versions: ["v1"],
      max_message_size: 26214400,
      max_recipients: 100,
    });
  });

  it("CAP-1, CAP-5, CAP-10, CAP-14: a full document is read as advertised", () => {
    const caps = value(
      parseCapabilities({
        versions: ["v1", "v2"],
        max_message_size: 52428800,
        max_recipients: 250,
        discovery_pin_max_age: 604800,
        abuse_contact: "mailto:abuse@example.org",
      }),
    );
    expect(caps).toEqual({
      versions: ["v1", "v2"],
      max_message_size: 52428800,
      max_recipients: 250,
      discovery_pin_max_age: 604800,
      abuse_contact: "mailto:abuse@example.org",
    });
  });

  it("CAP-1, CAP-2, CAP-3: versions is non-empty, unique, each ^v[1-9][0-9]*$", () => {
    expect(rules(parseCapabilities({ ...minimal, versions: [] }))).toEqual(["$.versions CAP-1"]);
    expect(rules(parseCapabilities({ ...minimal, versions: "v1" }))).toEqual(["$.versions CAP-1"]);
    expect(rules(parseCapabilities({ ...minimal, versions: ["v1", "v1"] }))).toEqual(["$.versions[1] CAP-2"]);
    expect(rules(parseCapabilities({ ...minimal, versions: ["v1", "v0", "v01", "V2", 2] }))).toEqual([
      "$.versions[1] CAP-3",
      "$.versions[2] CAP-3",
      "$.versions[3] CAP-3",
      "$.versions[4] CAP-3",
    ]);
  });

  it("CAP-6: max_message_size is required and an integer", () => {
    expect(rules(parseCapabilities({}))).toEqual(["$.max_message_size CAP-6"]);
    expect(rules(parseCapabilities({ max_message_size: "26214400" }))).toEqual(["$.max_message_size CAP-6"]);
    expect(rules(parseCapabilities({ max_message_size: 26214400.5 }))).toEqual(["$.max_message_size CAP-6"]);
  });

  it("CAP-7, LIM-1: max_message_size is at least 26214400, with no upper limit", () => {
    expect(rules(parseCapabilities({ max_message_size: 26214399 }))).toEqual(["$.max_message_size CAP-7"]);
    expect(value(parseCapabilities({ max_message_size: 1e18 })).max_message_size).toBe(1e18);
  });

  it("CAP-8, LIM-3: max_recipients is an integer of at least 100", () => {
    expect(rules(parseCapabilities({ ...minimal, max_recipients: 99 }))).toEqual(["$.max_recipients CAP-8"]);
    expect(rules(parseCapabilities({ ...minimal, max_recipients: 100.5 }))).toEqual(["$.max_recipients CAP-8"]);
    expect(rules(parseCapabilities({ ...minimal, max_recipients: null }))).toEqual(["$.max_recipients CAP-8"]);
  });

  it("CAP-10: discovery_pin_max_age is an integer of at least 0", () => {
    expect(rules(parseCapabilities({ ...minimal, discovery_pin_max_age: -1 }))).toEqual([
      "$.discovery_pin_max_age CAP-10",
    ]);
    expect(value(parseCapabilities({ ...minimal, discovery_pin_max_age: 0 })).discovery_pin_max_age).toBe(0);
  });

  it("CAP-11, CAP-13, LIM-11: the pin a sender applies is 0 when absent or 0, and at most one year; the advertised value is kept", () => {
    expect(effectivePinMaxAgeS(value(parseCapabilities(minimal)))).toBe(0);
    expect(effectivePinMaxAgeS({ discovery_pin_max_age: 0 })).toBe(0);
    expect(effectivePinMaxAgeS({ discovery_pin_max_age: 604800 })).toBe(604800);
    const caps = value(parseCapabilities({ ...minimal, discovery_pin_max_age: 99999999 }));
    expect(caps.discovery_pin_max_age).toBe(99999999);
    expect(effectivePinMaxAgeS(caps)).toBe(MAX_PIN_AGE_S);
    expect(MAX_PIN_AGE_S).toBe(31557600);
  });

  it("CAP-14: abuse_contact is one mailto: URI without header fields", () => {
    expect(rules(parseCapabilities({ ...minimal, abuse_contact: "mailto:abuse@example.org?subject=spam" }))).toEqual([
      "$.abuse_contact CAP-14",
    ]);
    expect(rules(parseCapabilities({ ...minimal, abuse_contact: "https://example.org/abuse" }))).toEqual([
      "$.abuse_contact CAP-14",
    ]);
  });

  it("CAP-17, VER-3: unknown members are ignored", () => {
    expect(value(parseCapabilities({ ...minimal, chunked_upload: true, features: ["x"] }))).toEqual({
      versions: ["v1"],
      max_message_size: 26214400,
      max_recipients: 100,
    });
  });

  it("GET-3, GET-9: a document that is not a JSON object is invalid", () => {
    expect(rules(parseCapabilities([minimal]))).toEqual(["$ GET-3"]);
    expect(rules(parseCapabilities("{}"))).toEqual(["$ GET-3"]);
  });

  it("GET-3: a body is read as its JSON, the same reading for the same text, each fault said as parseJson says it", () => {
    const bytes = new TextEncoder().encode('{"max_message_size":26214400,"versions":["v1"]}');
    const first = parseCapabilitiesBody(bytes);
    expect(value(first)).toEqual({ versions: ["v1"], max_message_size: 26214400, max_recipients: 100 });
    expect(parseCapabilitiesBody(bytes.slice())).toBe(first);
    expect(rules(parseCapabilitiesBody(new Uint8Array([0x7b, 0xff, 0x7d])))).toEqual(["$ GET-3"]);
    expect(rules(parseCapabilitiesBody(new TextEncoder().encode("{")))).toEqual(["$ GET-3"]);
    expect(rules(parseCapabilitiesBody(new TextEncoder().encode("[]")))).toEqual(["$ GET-3"]);
  });
});

describe("Problem", () => {
  it("PRB-1, PRB-7: the RFC 9457 403 out-of-credit example parses; its extension members are ignored", () => {
    const text = rfc9457.out_of_credit.body_as_printed;
    const problem = value(parseProblem(value(parseJson(text, "$", "PRB-1"))));
    expect(problem).toEqual({
      type: "https://example.com/probs/out-of-credit",
      title: "You do not have enough credit.",
      detail: "Your current balance is 30, but that costs 50.",
      instance: "/account/12345/msgs/abc",
      notes: [],
    });
    expect(problem).not.toHaveProperty("balance");
    expect(problem).not.toHaveProperty("accounts");
  });

  it("PRB-1, PRB-7: the RFC 9457 422 validation-error example parses; its errors array is ignored", () => {
    const problem = value(parseProblem(value(parseJson(rfc9457.validation_error.body_as_printed))));
    expect(problem).toEqual({
      type: "https://example.net/validation-error",
      title: "Your request is not valid.",
      notes: [],
    });
  });

  it("PRB-2, ERR-19: foreign types (tag: URI, about:blank) parse, and have no identifier under our problem base", () => {
    const tag = value(parseProblem({ type: rfc9457.tag_uri_type.type_uri }));
    expect(problemIdentifier(tag, BASE)).toBeUndefined();
    const blank = value(parseProblem({ type: rfc9457.about_blank.type_uri, title: "Not Found", status: 404 }));
    expect(blank.type).toBe("about:blank");
    expect(problemIdentifier(blank, BASE)).toBeUndefined();
  });

  it("PRB-2: type is required, so a problem without it (RFC 9457 would read about:blank) is refused", () => {
    for (const example of rfc9457.rfc9530_problems_without_type) {
      expect(rules(parseProblem(value(parseJson(example.body_as_printed))))).toEqual(["$.type PRB-2"]);
    }
  });

  it("PRB-2: type must be an absolute URI", () => {
    expect(rules(parseProblem({ type: "/probs/out-of-credit" }))).toEqual(["$.type PRB-2"]);
    expect(rules(parseProblem({ type: 42 }))).toEqual(["$.type PRB-2"]);
  });

  it("PRB-1: a problem that is not a JSON object is refused", () => {
    expect(rules(parseProblem("rate_limited"))).toEqual(["$ PRB-1"]);
  });

  it("PRB-3: members of the wrong type are ignored with a note (RFC 9457 §3.1), or refused when strict", () => {
    const json = { type: `${BASE}/rate_limited`, status: "429", title: 5, detail: "slow down" };
    const lenient = value(parseProblem(json, BASE));
    expect(lenient).toMatchObject({ type: `${BASE}/rate_limited`, detail: "slow down" });
    expect(lenient).not.toHaveProperty("status");
    expect(lenient.notes.map((n) => `${n.path} ${n.rule}`)).toEqual(["$.title PRB-3", "$.status PRB-3"]);
    expect(rules(parseProblem(json, BASE, { strict: true }))).toEqual(["$.title PRB-3", "$.status PRB-3"]);
  });

  it("PRB-4, ERR-15: an unsupported_version problem must carry versions", () => {
    expect(rules(parseProblem({ type: `${BASE}/unsupported_version` }, BASE))).toEqual(["$ PRB-4"]);
    expect(value(parseProblem({ type: `${BASE}/unsupported_version`, versions: ["v1"] }, BASE)).versions).toEqual([
      "v1",
    ]);
  });

  it("PRB-5: versions is absent from other problems (checked when the problem base is known)", () => {
    expect(rules(parseProblem({ type: `${BASE}/rate_limited`, versions: ["v1"] }, BASE))).toEqual(["$.versions PRB-5"]);
    expect(parseProblem({ type: `${BASE}/rate_limited`, versions: ["v1"] }).ok).toBe(true);
  });

  it("PRB-6: versions is a non-empty array of unique version strings", () => {
    const type = `${BASE}/unsupported_version`;
    expect(rules(parseProblem({ type, versions: ["v1", "v1"] }, BASE))).toEqual(["$.versions[1] PRB-6"]);
    expect(rules(parseProblem({ type, versions: ["1"] }, BASE))).toEqual(["$.versions[0] PRB-6"]);
    expect(rules(parseProblem({ type, versions: [] }, BASE))).toEqual(["$.versions PRB-6"]);
  });

  it("PRB-2: problemIdentifier reads {problem_base}/<identifier>, with or without a trailing / on the base", () => {
    expect(problemIdentifier({ type: `${BASE}/mailbox_full` }, BASE)).toBe("mailbox_full");
    expect(problemIdentifier({ type: `${BASE}/mailbox_full` }, `${BASE}/`)).toBe("mailbox_full");
    expect(problemIdentifier({ type: `${BASE}/a/b` }, BASE)).toBeUndefined();
    expect(problemIdentifier({ type: `${BASE}x/mailbox_full` }, BASE)).toBeUndefined();
    expect(problemIdentifier({ type: `${BASE}/` }, BASE)).toBeUndefined();
  });

  it("PRB-1, PRB-2, ERR-15: createProblem builds problems that parse back", () => {
    const unsupported = createProblem("unsupported_version", {
      problemBase: `${BASE}/`,
      versions: ["v1"],
      title: "Unsupported version",
    });
    expect(problemJson(unsupported)).toEqual({
      type: `${BASE}/unsupported_version`,
      title: "Unsupported version",
      versions: ["v1"],
    });
    expect(value(parseProblem(problemJson(unsupported), BASE))).toEqual(unsupported);
    const limited = createProblem("rate_limited", { problemBase: BASE, detail: "try later" });
    expect(value(parseProblem(problemJson(limited), BASE))).toEqual(limited);
  });

  it("PRB-1, POST-19: problemResponse sends application/problem+json with the status in the body", async () => {
    const response = problemResponse(createProblem("rate_limited", { problemBase: BASE }), 429, {
      "Retry-After": "120",
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("Content-Type")).toBe("application/problem+json");
    expect(response.headers.get("Retry-After")).toBe("120");
    expect(await response.json()).toEqual({ type: `${BASE}/rate_limited`, status: 429 });
  });
});

describe("RecipientResult", () => {
  const problem = { type: `${BASE}/mailbox_full`, title: "Mailbox full" };

  it("RCP-1, RCP-2: an accepted entry needs no problem", () => {
    const entry = value(parseRecipientResult({ recipient: "alice@Example.org", status: "accepted" }));
    expect(entry).toEqual({
      recipient: { localPart: "alice", domain: "example.org", address: "alice@example.org" },
      status: "accepted",
      statusAsSent: "accepted",
      notes: [],
    });
  });

  it("RCP-4, RCP-5: a deferred entry carries its problem and retry_after", () => {
    const entry = value(
      parseRecipientResult({ recipient: "alice@example.org", status: "deferred", problem, retry_after: 300 }),
    );
    expect(entry.problem).toEqual({ ...problem, notes: [] });
    expect(entry.retry_after).toBe(300);
  });

  it("RCP-1: recipient is required and a valid mailbox", () => {
    expect(rules(parseRecipientResult({ status: "accepted" }))).toEqual(["$.recipient RCP-1"]);
    expect(rules(parseRecipientResult({ recipient: "alice@[127.0.0.1]", status: "accepted" }))).toEqual([
      "$.recipient MBX-3",
    ]);
  });

  it("RCP-2: status is a required string", () => {
    expect(rules(parseRecipientResult({ recipient: "alice@example.org" }))).toEqual(["$.status RCP-2"]);
    expect(rules(parseRecipientResult({ recipient: "alice@example.org", status: 1 }))).toEqual(["$.status RCP-2"]);
  });

  it("RCP-3: an unknown status stays readable: deferred, with the sent value kept", () => {
    const entry = value(parseRecipientResult({ recipient: "alice@example.org", status: "quarantined", problem }));
    expect(entry.status).toBe("deferred");
    expect(entry.statusAsSent).toBe("quarantined");
    expect(entry.notes).toEqual([]);
  });

  it("RCP-4, G15: a non-accepted entry without problem is kept with a note, or refused when strict", () => {
    const json = { recipient: "alice@example.org", status: "rejected" };
    const entry = value(parseRecipientResult(json));
    expect(entry.status).toBe("rejected");
    expect(entry.notes.map((n) => `${n.path} ${n.rule}`)).toEqual(["$ RCP-4"]);
    expect(rules(parseRecipientResult(json, { strict: true }))).toEqual(["$ RCP-4"]);
  });

  it("RCP-4, PRB-2: a problem that is not a problem object is refused at its path", () => {
    expect(
      rules(parseRecipientResult({ recipient: "alice@example.org", status: "rejected", problem: "nope" })),
    ).toEqual(["$.problem RCP-4"]);
    expect(rules(parseRecipientResult({ recipient: "alice@example.org", status: "rejected", problem: {} }))).toEqual([
      "$.problem.type PRB-2",
    ]);
  });

  it("RCP-5: retry_after is an integer of at least 0", () => {
    const base = { recipient: "alice@example.org", status: "deferred", problem };
    expect(rules(parseRecipientResult({ ...base, retry_after: -1 }))).toEqual(["$.retry_after RCP-5"]);
    expect(rules(parseRecipientResult({ ...base, retry_after: 1.5 }))).toEqual(["$.retry_after RCP-5"]);
    expect(rules(parseRecipientResult({ ...base, retry_after: "60" }))).toEqual(["$.retry_after RCP-5"]);
  });

  it("RCP-1, RCP-2, RCP-4: recipientResultJson writes the wire form", () => {
    const entry = value(
      parseRecipientResult({ recipient: "alice@example.org", status: "deferred", problem, retry_after: 60, x: 1 }),
    );
    expect(recipientResultJson(entry)).toEqual({
      recipient: "alice@example.org",
      status: "deferred",
      problem,
      retry_after: 60,
    });
  });
});

describe("DeliveryResult", () => {
  const envelope: Envelope = value(parseEnvelope({ from: null, to: ["a@example.org", "b@example.org"] }));
  const rejected = { type: `${BASE}/recipient_not_found` };

  it("DLR-1, POST-11: one entry per recipient, in the order of to, reads without notes", () => {
    const result = value(
      parseDeliveryResult(
        {
          results: [
            { recipient: "a@example.org", status: "accepted" },
            { recipient: "b@example.org", status: "rejected", problem: rejected },
          ],
        },
        envelope,
      ),
    );
    expect(result.results.map((r) => [r.recipient.address, r.status])).toEqual([
      ["a@example.org", "accepted"],
      ["b@example.org", "rejected"],
    ]);
    expect(result.notes).toEqual([]);
  });

  it("DLR-1: results is required and an array of RecipientResult objects", () => {
    expect(rules(parseDeliveryResult({}))).toEqual(["$.results DLR-1"]);
    expect(rules(parseDeliveryResult({ results: {} }))).toEqual(["$.results DLR-1"]);
    expect(rules(parseDeliveryResult({ results: [null] }))).toEqual(["$.results[0] DLR-1"]);
    expect(rules(parseDeliveryResult([]))).toEqual(["$ DLR-1"]);
  });

  it("RCP-1, RCP-2, PRB-2: violations inside entries carry the entry's path", () => {
    const parsed = parseDeliveryResult({
      results: [
        { recipient: "a@example.org", status: "accepted" },
        { recipient: "b@example..org", status: "rejected", problem: { type: "x" } },
        { recipient: "c@example.org" },
      ],
    });
    expect(rules(parsed)).toEqual([
      "$.results[1].recipient MBX-3",
      "$.results[1].problem.type PRB-2",
      "$.results[2].status RCP-2",
    ]);
  });

  it("DLR-4, VER-3: unknown fields are ignored, at the top and in entries", () => {
    const result = value(
      parseDeliveryResult({
        results: [{ recipient: "a@example.org", status: "accepted", queue_id: "q1" }],
        trace: "x",
      }),
    );
    expect(Object.keys(result).sort()).toEqual(["notes", "results"]);
    expect(result.results[0]).not.toHaveProperty("queue_id");
  });

  it("DLR-2, G25: a missing entry or an entry for a stranger is a note, or a violation when strict", () => {
    const json = {
      results: [
        { recipient: "a@example.org", status: "accepted" },
        { recipient: "z@example.org", status: "accepted" },
      ],
    };
    const lenient = value(parseDeliveryResult(json, envelope));
    expect(lenient.notes.map((n) => `${n.path} ${n.rule}`)).toEqual([
      "$.results DLR-2",
      "$.results[1].recipient DLR-2",
    ]);
    expect(rules(parseDeliveryResult(json, envelope, { strict: true }))).toEqual([
      "$.results DLR-2",
      "$.results[1].recipient DLR-2",
    ]);
  });

  it("DLR-2: a count other than one per recipient is a note", () => {
    const lenient = value(
      parseDeliveryResult({ results: [{ recipient: "a@example.org", status: "accepted" }] }, envelope),
    );
    expect(lenient.notes.map((n) => n.rule)).toEqual(["DLR-2", "DLR-2"]);
  });

  it("DLR-3, G25: entries out of the order of to are a note; matchResults pairs them by recipient", () => {
    const result = value(
      parseDeliveryResult(
        {
          results: [
            { recipient: "b@EXAMPLE.org", status: "rejected", problem: rejected },
            { recipient: "a@example.org", status: "accepted" },
          ],
        },
        envelope,
      ),
    );
    expect(result.notes.map((n) => `${n.path} ${n.rule}`)).toEqual([
      "$.results[0].recipient DLR-3",
      "$.results[1].recipient DLR-3",
    ]);
    const { matched, ignored } = matchResults(envelope, result);
    expect(matched.map((m) => [m.recipient.address, m.result?.status])).toEqual([
      ["a@example.org", "accepted"],
      ["b@example.org", "rejected"],
    ]);
    expect(ignored).toEqual([]);
  });

  it("DLR-2, G25: matchResults leaves a recipient without entry unmatched and ignores repeats and strangers", () => {
    const result = value(
      parseDeliveryResult({
        results: [
          { recipient: "a@example.org", status: "accepted" },
          { recipient: "a@example.org", status: "rejected", problem: rejected },
          { recipient: "z@example.org", status: "accepted" },
        ],
      }),
    );
    const { matched, ignored } = matchResults(envelope, result);
    expect(matched.map((m) => [m.recipient.address, m.result?.status])).toEqual([
      ["a@example.org", "accepted"],
      ["b@example.org", undefined],
    ]);
    expect(ignored.map((r) => r.recipient.address)).toEqual(["a@example.org", "z@example.org"]);
  });

  it("RCP-4, PRB-3: notes of the entries are gathered on the DeliveryResult", () => {
    const result = value(
      parseDeliveryResult({
        results: [
          { recipient: "a@example.org", status: "deferred" },
          { recipient: "b@example.org", status: "rejected", problem: { ...rejected, status: "x" } },
        ],
      }),
    );
    expect(result.notes.map((n) => `${n.path} ${n.rule}`)).toEqual([
      "$.results[0] RCP-4",
      "$.results[1].problem.status PRB-3",
    ]);
  });
});

describe("JSON Schemas", () => {
  it("ENV-1, ENV-4, CAP-6, DLR-1, PRB-2: the four schemas name their required members", () => {
    expect(Object.keys(jsonSchemas).sort()).toEqual(["capabilities", "delivery-result", "envelope", "problem"]);
    expect(jsonSchemas.envelope).toMatchObject({ type: "object", required: ["from", "to"] });
    expect(jsonSchemas.capabilities).toMatchObject({ type: "object", required: ["max_message_size"] });
    expect(jsonSchemas["delivery-result"]).toMatchObject({ type: "object", required: ["results"] });
    expect(jsonSchemas.problem).toMatchObject({ type: "object", required: ["type"] });
  });

  it("CAP-3, CAP-4, CAP-7, CAP-9: capabilities carry the pattern, minimums and defaults", () => {
    expect(jsonSchemas.capabilities).toMatchObject({
      properties: {
        versions: { default: ["v1"], minItems: 1, uniqueItems: true, items: { pattern: "^v[1-9][0-9]*$" } },
        max_message_size: { type: "integer", minimum: 26214400 },
        max_recipients: { type: "integer", minimum: 100, default: 100 },
        discovery_pin_max_age: { type: "integer", minimum: 0 },
        abuse_contact: { pattern: "^mailto:[^?]+$" },
      },
    });
  });

  it("MBX-8, MBX-9: every mailbox parseMailbox accepts matches the schema's character pattern, which is weaker", () => {
    const schema = jsonSchemas.envelope as { properties: { to: { items: { pattern: string; maxLength: number } } } };
    const pattern = new RegExp(schema.properties.to.items.pattern, "u");
    expect(schema.properties.to.items.maxLength).toBe(320);
    for (const c of mailboxCases.cases) {
      if (parseMailbox(c.address).ok) expect(pattern.test(c.address), c.address).toBe(true);
    }
    // The pattern cannot see the 64-octet limit or minimal quoting (MBX-9).
    expect(pattern.test(`${"a".repeat(65)}@example.org`)).toBe(true);
    expect(pattern.test('"john"@example.org')).toBe(true);
  });
});
