import { describe, expect, it } from "vitest";
import { formatFileError } from "../sim/yamlPosition.ts";
import type { JudgedEvent } from "./properties.ts";
import { checkUserProperty, parseUserProperties, scopeKeys, type UserProperty } from "./userProperties.ts";

const A = "m1@a.example→b.example";
function trace(...events: Omit<JudgedEvent, "seq">[]): JudgedEvent[] {
  return events.map((e, seq) => ({ ...e, seq }));
}
const submitted = (at = 0) => ({
  name: "message.submitted",
  timeMs: at,
  domain: "a.example",
  data: { messageId: "m1@a.example", from: "alice@a.example", to: ["bob@b.example"] },
});
const ended = (timeMs: number, status: number, problem?: string) => ({
  name: "attempt.ended",
  timeMs,
  domain: "a.example",
  data: {
    deliveryId: `${A}#1`,
    status,
    ...(problem !== undefined && { problem: `https://p.example/problems/${problem}` }),
  },
});
const handoff = (timeMs: number) => ({
  name: "smtp.handoff",
  timeMs,
  domain: "a.example",
  data: { messageId: "m1@a.example", recipients: ["bob@b.example"], reason: "fallback" },
});
const bounced = (timeMs: number) => ({
  name: "delivery.bounced",
  timeMs,
  domain: "a.example",
  data: { messageId: "m1@a.example", domain: "b.example", recipients: ["bob@b.example"] },
});

function one(yaml: string): UserProperty {
  const parsed = parseUserProperties(yaml, "p.yaml");
  if (!parsed.ok) throw new Error(parsed.errors.map(formatFileError).join("\n"));
  return parsed.properties[0] as UserProperty;
}

describe("users' properties: the file", () => {
  it("reads the examples of docs/explore.md", () => {
    const parsed = parseUserProperties(
      [
        "properties:",
        "  - id: no-smtp-after-429",
        "    description: no recipient goes to SMTP after a 429",
        "    never: smtp.handoff",
        "    after: { event: attempt.ended, status: 429 }",
        "    same: actor",
        "  - id: bounce-at-5-days",
        "    every: delivery.bounced",
        "    since: message.submitted",
        "    same: message",
        "    is: 5d",
        "    tolerance: 1m",
        "",
      ].join("\n"),
      "p.yaml",
    );
    expect(parsed.ok).toBe(true);
  });

  it("locates every mistake at its line and column", () => {
    const text = [
      "properties:",
      "  - id: a",
      "    never: smtp.handof", // 3
      "  - id: b",
      "    every: delivery.bounced",
      "    within: 5x", // 6
      "  - id: c",
      "    count: attempt.started",
      "    atMost: 2",
      "    colour: red", // 10
      "",
    ].join("\n");
    const parsed = parseUserProperties(text, "p.yaml");
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    const lines = parsed.errors.map(formatFileError);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^p\.yaml:3:12: properties\[0\]\.never: unknown event "smtp\.handof" \(did you mean smtp\.handoff\?\)$/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^p\.yaml:6:13: properties\[1\]\.within: "5x" is not a duration/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^p\.yaml:10:5: properties\[2\]\.colour: unknown field "colour"/),
    );
  });

  it("says what a property lacks or mixes", () => {
    const errors = (body: string): string[] => {
      const parsed = parseUserProperties(`properties:\n  - id: x\n${body}`, "p.yaml");
      return parsed.ok ? [] : parsed.errors.map(formatFileError);
    };
    expect(errors("    every: delivery.bounced\n")).toEqual([
      expect.stringContaining("every needs followedBy or since"),
    ]);
    expect(errors("    count: attempt.started\n")).toEqual([expect.stringContaining("count needs atLeast or atMost")]);
    expect(errors("    never: smtp.handoff\n    every: delivery.bounced\n    followedBy: dsn.sent\n")).toEqual([
      expect.stringContaining("one of never, every or count"),
    ]);
    expect(errors("    never: smtp.handoff\n    per: message\n")).toEqual([
      expect.stringContaining("per does not go with never"),
    ]);
    expect(errors("    every: delivery.bounced\n    since: message.submitted\n")).toEqual([
      expect.stringContaining("since needs within, atLeast or is"),
    ]);
  });

  it("refuses an id a built-in property has, at its line", () => {
    const parsed = parseUserProperties("properties:\n  - id: terminal-outcome\n    never: smtp.handoff\n", "p.yaml", [
      "terminal-outcome",
    ]);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(formatFileError(parsed.errors[0]!)).toMatch(
        /^p\.yaml:2:9: properties\[0\]\.id: "terminal-outcome" is a built-in/,
      );
  });

  it("refuses a file that is not YAML, at the line of the mistake", () => {
    const parsed = parseUserProperties("properties:\n  - id: a\n    never: [unclosed\n", "p.yaml");
    expect(parsed.ok).toBe(false);
  });
});

describe("users' properties: the verdicts", () => {
  const no429smtp = one(
    "properties:\n  - id: n\n    never: smtp.handoff\n    after: { event: attempt.ended, status: 429 }\n    same: actor\n",
  );

  it("never … after: no recipient goes to SMTP after a 429 (ERR-23)", () => {
    const bad = checkUserProperty(no429smtp, trace(submitted(), ended(0, 429, "rate_limited"), handoff(9)));
    expect(bad.passed).toBe(false);
    expect(bad.evidence).toEqual([1, 2]);
    expect(checkUserProperty(no429smtp, trace(submitted(), ended(0, 503), handoff(9))).passed).toBe(true);
  });

  it("a selector matches a problem type by its identifier", () => {
    const p = one("properties:\n  - id: n\n    never: { event: attempt.ended, problem: rate_limited }\n");
    expect(checkUserProperty(p, trace(ended(0, 429, "rate_limited"))).passed).toBe(false);
    expect(checkUserProperty(p, trace(ended(0, 503, "temporary_failure"))).passed).toBe(true);
  });

  it("every … since … is: every bounce happens at 5 days ± 1 min (STATE-7, RETRY-6)", () => {
    const p = one(
      "properties:\n  - id: b\n    every: delivery.bounced\n    since: message.submitted\n    same: message\n    is: 5d\n    tolerance: 1m\n",
    );
    const day = 86_400_000;
    expect(checkUserProperty(p, trace(submitted(), bounced(5 * day + 30_000))).passed).toBe(true);
    const late = checkUserProperty(p, trace(submitted(), bounced(5 * day + 120_000)));
    expect(late.passed).toBe(false);
    expect(late.detail).toContain("came 5d 0:02:00 after message.submitted");
  });

  it("every … followedBy … within", () => {
    const p = one(
      "properties:\n  - id: d\n    every: delivery.bounced\n    followedBy: dsn.sent\n    same: message\n    within: 1s\n",
    );
    const dsn = { name: "dsn.sent", timeMs: 10, domain: "a.example", data: { messageId: "m1@a.example" } };
    expect(checkUserProperty(p, trace(submitted(), bounced(10), dsn)).passed).toBe(true);
    expect(checkUserProperty(p, trace(submitted(), bounced(10))).passed).toBe(false);
    // The span is written exactly, as a run writes its times: 1.5 s is not rounded to within the bound.
    const late = { ...dsn, timeMs: 1_510 };
    expect(checkUserProperty(p, trace(submitted(), bounced(10), late)).detail).toContain(
      "is followed by dsn.sent only 0:00:01.500 later (within 0:00:01)",
    );
  });

  it("count … per … atMost", () => {
    const p = one("properties:\n  - id: c\n    count: attempt.ended\n    per: delivery\n    atMost: 1\n");
    expect(checkUserProperty(p, trace(ended(0, 503))).passed).toBe(true);
    const bad = checkUserProperty(p, trace(ended(0, 503), ended(60_000, 503)));
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain(`delivery ${A}#1 has 2 (at most 1)`);
  });

  it("relates events by message, actor, delivery and recipient", () => {
    const e = { seq: 0, name: "attempt.ended", timeMs: 0, data: { deliveryId: `${A}#2` } };
    expect(scopeKeys(e, "delivery")).toEqual([`${A}#2`]);
    expect(scopeKeys(e, "actor")).toEqual([A]);
    expect(scopeKeys(e, "message")).toEqual(["m1@a.example"]);
    const s = { seq: 1, ...submitted() };
    expect(scopeKeys(s, "actor")).toEqual([A]);
    expect(scopeKeys(s, "recipient")).toEqual(["m1@a.example bob@b.example"]);
  });
});
