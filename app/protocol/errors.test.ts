import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  PROBLEM_IDENTIFIERS,
  errorsTable,
  interpretRecipientResult,
  interpretRequestLevel,
  noCommonVersion,
  parseHttpDate,
  parseRetryAfter,
  transportFailure,
} from "./errors.ts";
import { createProblem, parseProblem, parseRecipientResult } from "./resources.ts";
import type { Problem, RecipientResult } from "./resources.ts";
import { ruleById } from "./rules.ts";

const BASE = "https://problems.example/svc";

function problem(identifier: string): Problem {
  const parsed = parseProblem({
    type: `${BASE}/${identifier}`,
    ...(identifier === "unsupported_version" && { versions: ["v1"] }),
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
  return parsed.value;
}

function entry(json: unknown): RecipientResult {
  const parsed = parseRecipientResult(json);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
  return parsed.value;
}

describe("errorsTable", () => {
  it("ERR-1..ERR-10: the table has the spec's ten identifiers, in the spec's order", () => {
    expect(Object.keys(errorsTable)).toEqual([...PROBLEM_IDENTIFIERS]);
    expect(PROBLEM_IDENTIFIERS.map((id) => errorsTable[id].rules[0])).toEqual([
      "ERR-1",
      "ERR-2",
      "ERR-3",
      "ERR-4",
      "ERR-5",
      "ERR-6",
      "ERR-7",
      "ERR-8",
      "ERR-9",
      "ERR-10",
    ]);
  });

  it("ERR-1..ERR-10: each row reads exactly as SPEC.md's table", () => {
    const rows = PROBLEM_IDENTIFIERS.map((id) => {
      const r = errorsTable[id];
      return [r.identifier, r.level, r.httpStatus, r.class, r.retryOverService, r.smtpFallback];
    });
    expect(rows).toEqual([
      ["invalid_request", "R", 400, "permanent", "no", "never"],
      ["invalid_signature", "R", 401, "permanent", "no", "never"],
      ["policy_rejected", "R, P", 403, "permanent", "no", "never"],
      ["recipient_not_found", "P", null, "permanent", "no", "never"],
      ["unsupported_version", "R", 404, "permanent", "no", "immediately"],
      ["idempotency_conflict", "R", 409, "permanent", "no", "never"],
      ["message_too_large", "R", 413, "permanent", "no", "never"],
      ["rate_limited", "R, P", 429, "temporary", "yes, honoring Retry-After / retry_after", "never"],
      ["mailbox_full", "P", null, "temporary", "yes", "never"],
      ["temporary_failure", "R, P", 503, "temporary", "yes", "after the fallback window (R only)"],
    ]);
  });

  it("ERR-1..ERR-10: every rule a row cites exists in the catalogue", () => {
    for (const id of PROBLEM_IDENTIFIERS) {
      for (const rule of errorsTable[id].rules) expect(ruleById(rule), `${id} ${rule}`).toBeDefined();
    }
  });

  it("POST-13..POST-20: the HTTP statuses agree with the POST responses table", () => {
    const byStatus = Object.fromEntries(
      PROBLEM_IDENTIFIERS.filter((id) => errorsTable[id].httpStatus !== null).map((id) => [
        errorsTable[id].httpStatus,
        id,
      ]),
    );
    expect(byStatus).toEqual({
      400: "invalid_request",
      401: "invalid_signature",
      403: "policy_rejected",
      404: "unsupported_version",
      409: "idempotency_conflict",
      413: "message_too_large",
      429: "rate_limited",
      503: "temporary_failure",
    });
  });
});

describe("interpretRequestLevel", () => {
  it("ERR-1, ERR-2, ERR-3, ERR-6, ERR-7, STATE-9: permanent request-level problems are final, never retried, never SMTP", () => {
    for (const [status, id] of [
      [400, "invalid_request"],
      [401, "invalid_signature"],
      [403, "policy_rejected"],
      [409, "idempotency_conflict"],
      [413, "message_too_large"],
    ] as const) {
      expect(interpretRequestLevel(status, problem(id), BASE)).toEqual({
        identifier: id,
        typeAsSent: `${BASE}/${id}`,
        known: true,
        class: "permanent",
        retry: false,
        fallbackEligible: false,
        smtpFallback: "never",
        rule: errorsTable[id].rules[0],
        gaps: [],
      });
    }
  });

  it("ERR-5, ERR-26, STATE-4: unsupported_version hands to SMTP at once (G32)", () => {
    expect(interpretRequestLevel(404, problem("unsupported_version"), BASE)).toMatchObject({
      identifier: "unsupported_version",
      class: "permanent",
      retry: false,
      fallbackEligible: false,
      smtpFallback: "immediately",
      rule: "ERR-26",
      gaps: ["G32"],
    });
  });

  it("ERR-8, ERR-23, STATE-5: rate_limited is retried over the service and never falls back", () => {
    expect(interpretRequestLevel(429, problem("rate_limited"), BASE)).toMatchObject({
      identifier: "rate_limited",
      known: true,
      class: "temporary",
      retry: true,
      fallbackEligible: false,
      smtpFallback: "never",
      rule: "ERR-8",
    });
  });

  it("ERR-10, ERR-22, STATE-2: temporary_failure at 503 is retried and fallback-eligible after the window", () => {
    expect(interpretRequestLevel(503, problem("temporary_failure"), BASE)).toMatchObject({
      identifier: "temporary_failure",
      class: "temporary",
      retry: true,
      fallbackEligible: true,
      smtpFallback: "after the fallback window",
      rule: "ERR-10",
    });
  });

  it("ERR-22, ERR-23: temporary_failure sent with a 4xx status is retried but never falls back", () => {
    expect(interpretRequestLevel(400, problem("temporary_failure"), BASE)).toMatchObject({
      class: "temporary",
      retry: true,
      fallbackEligible: false,
      smtpFallback: "never",
    });
  });

  it("ERR-19: an unknown problem type at 4xx is permanent, never falls back", () => {
    expect(interpretRequestLevel(422, problem("out_of_credit"), BASE)).toMatchObject({
      identifier: undefined,
      typeAsSent: `${BASE}/out_of_credit`,
      known: false,
      class: "permanent",
      retry: false,
      fallbackEligible: false,
      rule: "ERR-19",
    });
  });

  it("ERR-19, ERR-22: an unknown problem type at 5xx is temporary and fallback-eligible", () => {
    const foreign = parseProblem({ type: "about:blank", title: "Bad Gateway" });
    expect(foreign.ok).toBe(true);
    if (foreign.ok) {
      expect(interpretRequestLevel(502, foreign.value, BASE)).toMatchObject({
        identifier: undefined,
        class: "temporary",
        retry: true,
        fallbackEligible: true,
        rule: "ERR-19",
      });
    }
  });

  it("ERR-19: a P-only identifier at request level is handled like an unknown type", () => {
    expect(interpretRequestLevel(507, problem("mailbox_full"), BASE)).toMatchObject({
      identifier: undefined,
      known: false,
      class: "temporary",
      fallbackEligible: true,
    });
    expect(interpretRequestLevel(404, problem("recipient_not_found"), BASE)).toMatchObject({
      identifier: undefined,
      known: false,
      class: "permanent",
      smtpFallback: "never",
    });
  });

  it("ERR-21, STATE-2: a 5xx without a problem document is temporary_failure, fallback-eligible", () => {
    expect(interpretRequestLevel(500, undefined, BASE)).toEqual({
      identifier: "temporary_failure",
      typeAsSent: undefined,
      known: false,
      class: "temporary",
      retry: true,
      fallbackEligible: true,
      smtpFallback: "after the fallback window",
      rule: "ERR-21",
      gaps: [],
    });
  });

  it("ERR-19, ERR-23, G30: a 4xx without a problem document is permanent — a bare 429 too — and never fallback-eligible", () => {
    expect(interpretRequestLevel(404, undefined, BASE)).toMatchObject({
      class: "permanent",
      fallbackEligible: false,
      smtpFallback: "never",
      gaps: ["G30"],
    });
    expect(interpretRequestLevel(429, undefined, BASE)).toMatchObject({
      class: "permanent",
      retry: false,
      fallbackEligible: false,
      smtpFallback: "never",
    });
  });

  it("POST-21, G30: a status outside 4xx/5xx is a temporary, fallback-eligible failure", () => {
    expect(interpretRequestLevel(302, undefined, BASE)).toMatchObject({
      identifier: "temporary_failure",
      class: "temporary",
      fallbackEligible: true,
      gaps: ["G30"],
    });
  });

  it("ERR-21, G15: a 200 whose body does not parse is a temporary, fallback-eligible failure", () => {
    expect(interpretRequestLevel(200, undefined, BASE)).toMatchObject({
      identifier: "temporary_failure",
      fallbackEligible: true,
      gaps: ["G15"],
    });
  });
});

describe("interpretRequestLevel over the whole table (ERR-19, ERR-22, ERR-23, ERR-26)", () => {
  // The spec's own reading, written out here rather than taken from errors.ts: the identifiers the
  // table allows at request level (R or "R, P"), their class, and which of them may fall back.
  const REQUEST_LEVEL: Readonly<Record<string, "permanent" | "temporary">> = {
    invalid_request: "permanent",
    invalid_signature: "permanent",
    policy_rejected: "permanent",
    unsupported_version: "permanent",
    idempotency_conflict: "permanent",
    message_too_large: "permanent",
    rate_limited: "temporary",
    temporary_failure: "temporary",
  };
  const STATUSES_4XX = Array.from({ length: 100 }, (_, i) => 400 + i);
  const STATUSES_5XX = Array.from({ length: 100 }, (_, i) => 500 + i);

  /** What the spec says of `status` with `identifier` (undefined: no problem document, or a type it does not list at R). */
  function expected(status: number, identifier: string | undefined) {
    const is5xx = status >= 500;
    const tableClass = identifier === undefined ? undefined : REQUEST_LEVEL[identifier];
    if (tableClass !== undefined) {
      const smtpFallback =
        identifier === "unsupported_version"
          ? "immediately" // ERR-26
          : identifier === "temporary_failure" && is5xx
            ? "after the fallback window" // ERR-22: a request-level 5xx only
            : "never"; // ERR-23: every 4xx problem, and every other identifier
      return {
        class: tableClass,
        retry: tableClass === "temporary",
        fallbackEligible: smtpFallback === "after the fallback window",
        smtpFallback,
      };
    }
    // ERR-19: an unknown problem type by its status class; ERR-21/ERR-22: a 5xx may fall back.
    return {
      class: is5xx ? "temporary" : "permanent",
      retry: is5xx,
      fallbackEligible: is5xx,
      smtpFallback: is5xx ? "after the fallback window" : "never",
    };
  }

  const pick = (r: ReturnType<typeof interpretRequestLevel>) => ({
    class: r.class,
    retry: r.retry,
    fallbackEligible: r.fallbackEligible,
    smtpFallback: r.smtpFallback,
  });

  it("every identifier the table allows at request level, with every 4xx and 5xx status", () => {
    expect(Object.keys(REQUEST_LEVEL)).toEqual(PROBLEM_IDENTIFIERS.filter((id) => errorsTable[id].level !== "P"));
    let cases = 0;
    for (const identifier of Object.keys(REQUEST_LEVEL)) {
      for (const status of [...STATUSES_4XX, ...STATUSES_5XX]) {
        const got = pick(interpretRequestLevel(status, problem(identifier), BASE));
        expect({ status, identifier, ...got }).toEqual({ status, identifier, ...expected(status, identifier) });
        cases++;
      }
    }
    expect(cases).toBe(8 * 200);
  });

  it("P-only identifiers and no problem document, with every 4xx and 5xx status, go by the status class", () => {
    for (const status of [...STATUSES_4XX, ...STATUSES_5XX]) {
      for (const identifier of ["recipient_not_found", "mailbox_full"]) {
        const got = pick(interpretRequestLevel(status, problem(identifier), BASE));
        expect({ status, identifier, ...got }).toEqual({ status, identifier, ...expected(status, undefined) });
      }
      const bare = pick(interpretRequestLevel(status, undefined, BASE));
      expect({ status, ...bare }).toEqual({ status, ...expected(status, undefined) });
    }
  });

  it("an unknown problem type at any 4xx or 5xx status goes by the status class (property)", () => {
    const known = new Set<string>(PROBLEM_IDENTIFIERS);
    const type = fc.oneof(
      fc
        .stringMatching(/^[a-z][a-z_]{0,30}$/)
        .filter((name) => !known.has(name))
        .map((name) => `${BASE}/${name}`),
      fc.constantFrom("about:blank", "https://other.example/problems/temporary_failure", `${BASE}/`),
      fc.webUrl(),
    );
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 599 }), type, (status, t) => {
        const parsed = parseProblem({ type: t, title: "x" });
        if (!parsed.ok) throw new Error(`not a problem: ${t}`);
        const reading = interpretRequestLevel(status, parsed.value, BASE);
        expect(reading.known).toBe(false);
        expect(pick(reading)).toEqual(expected(status, undefined));
      }),
      { numRuns: 500, seed: 18 },
    );
  });
});

describe("transportFailure and noCommonVersion", () => {
  it("ERR-21, ERR-22: connection, TLS and timeout failures are temporary_failure, fallback-eligible", () => {
    for (const kind of ["connection", "tls", "timeout"] as const) {
      expect(transportFailure(kind)).toMatchObject({
        identifier: "temporary_failure",
        class: "temporary",
        retry: true,
        fallbackEligible: true,
        rule: "ERR-21",
      });
    }
  });

  it("GET-9, ERR-21: an unfetchable or invalid capabilities document is temporary_failure, fallback-eligible (G28)", () => {
    expect(transportFailure("capabilities")).toMatchObject({
      identifier: "temporary_failure",
      fallbackEligible: true,
      rule: "GET-9",
      gaps: ["G28"],
    });
  });

  it("ERR-26, STATE-4, VER-5: no common version hands to SMTP at once (G32)", () => {
    expect(noCommonVersion()).toMatchObject({
      identifier: "unsupported_version",
      smtpFallback: "immediately",
      retry: false,
      fallbackEligible: false,
      rule: "ERR-26",
      gaps: ["G32"],
    });
  });
});

describe("interpretRecipientResult", () => {
  const to = "alice@example.org";

  it("RCP-2: accepted is accepted", () => {
    expect(interpretRecipientResult(entry({ recipient: to, status: "accepted" }), BASE)).toEqual({
      outcome: "accepted",
      problem: undefined,
      consistent: true,
      rule: "RCP-2",
      gaps: [],
    });
  });

  it("ERR-17, ERR-4, RCP-7: a permanent problem makes the result rejected", () => {
    expect(
      interpretRecipientResult(
        entry({ recipient: to, status: "rejected", problem: problem("recipient_not_found") }),
        BASE,
      ),
    ).toEqual({
      outcome: "rejected",
      problem: "recipient_not_found",
      consistent: true,
      rule: "ERR-17",
      gaps: [],
    });
  });

  it("ERR-18, ERR-9, RCP-6, RETRY-7: a temporary problem makes the result deferred, with retry_after as a lower bound", () => {
    expect(
      interpretRecipientResult(
        entry({ recipient: to, status: "deferred", problem: problem("mailbox_full"), retry_after: 600 }),
        BASE,
      ),
    ).toEqual({
      outcome: "deferred",
      problem: "mailbox_full",
      retryAfterS: 600,
      consistent: true,
      rule: "ERR-18",
      gaps: [],
    });
  });

  it("RCP-6: retry_after means nothing unless the outcome is deferred", () => {
    const reading = interpretRecipientResult(
      entry({ recipient: to, status: "rejected", problem: problem("policy_rejected"), retry_after: 60 }),
      BASE,
    );
    expect(reading.outcome).toBe("rejected");
    expect(reading).not.toHaveProperty("retryAfterS");
  });

  it("ERR-17, ERR-18: when status and problem class disagree, the class decides and the reading says so", () => {
    expect(
      interpretRecipientResult(
        entry({ recipient: to, status: "deferred", problem: problem("recipient_not_found") }),
        BASE,
      ),
    ).toMatchObject({
      outcome: "rejected",
      consistent: false,
    });
    expect(
      interpretRecipientResult(entry({ recipient: to, status: "rejected", problem: problem("mailbox_full") }), BASE),
    ).toMatchObject({
      outcome: "deferred",
      consistent: false,
    });
  });

  it("RCP-3: an unknown status is deferred, whatever the problem", () => {
    expect(
      interpretRecipientResult(
        entry({ recipient: to, status: "quarantined", problem: problem("policy_rejected") }),
        BASE,
      ),
    ).toMatchObject({
      outcome: "deferred",
      problem: "policy_rejected",
      consistent: false,
      rule: "RCP-3",
    });
    expect(
      interpretRecipientResult(entry({ recipient: to, status: "quarantined", problem: problem("whatever") }), BASE),
    ).toMatchObject({
      outcome: "deferred",
      rule: "RCP-3",
    });
  });

  it("RCP-4, G15: a non-accepted entry without problem is deferred with temporary_failure", () => {
    expect(interpretRecipientResult(entry({ recipient: to, status: "rejected", retry_after: 30 }), BASE)).toEqual({
      outcome: "deferred",
      problem: "temporary_failure",
      retryAfterS: 30,
      consistent: false,
      rule: "RCP-4",
      gaps: ["G15"],
    });
  });

  it("ERR-20: an unknown problem type inside a result is handled by the result status", () => {
    expect(
      interpretRecipientResult(entry({ recipient: to, status: "rejected", problem: problem("greylisted") }), BASE),
    ).toMatchObject({
      outcome: "rejected",
      problem: undefined,
      rule: "ERR-20",
    });
    expect(
      interpretRecipientResult(entry({ recipient: to, status: "deferred", problem: problem("greylisted") }), BASE),
    ).toMatchObject({
      outcome: "deferred",
      rule: "ERR-20",
    });
  });

  it("ERR-20: an R-only identifier inside a result is handled like an unknown type, by the status", () => {
    expect(
      interpretRecipientResult(entry({ recipient: to, status: "deferred", problem: problem("invalid_request") }), BASE),
    ).toMatchObject({
      outcome: "deferred",
      problem: undefined,
      rule: "ERR-20",
    });
  });

  it("ERR-3, ERR-8, ERR-10: R,P identifiers built by createProblem read back at level P", () => {
    const limited = createProblem("rate_limited", { problemBase: BASE });
    expect(
      interpretRecipientResult(entry({ recipient: to, status: "deferred", problem: { type: limited.type } }), BASE)
        .problem,
    ).toBe("rate_limited");
  });
});

describe("parseRetryAfter", () => {
  const now = Date.UTC(1994, 10, 6, 8, 49, 0); // Sun, 06 Nov 1994 08:49:00 GMT

  it("RETRY-7, G21: delta-seconds is read as seconds", () => {
    expect(parseRetryAfter("120")).toBe(120);
    expect(parseRetryAfter("0")).toBe(0);
    expect(parseRetryAfter(" 30 ")).toBe(30);
  });

  it("RETRY-7: a delta-seconds too large to hold is read as 2^31 (RFC 9111 §1.2.2)", () => {
    expect(parseRetryAfter("99999999999999999999")).toBe(2147483648);
  });

  it("RETRY-7: the three HTTP-date forms are read against the clock", () => {
    expect(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now)).toBe(37);
    expect(parseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now)).toBe(37);
    expect(parseRetryAfter("Sun Nov  6 08:49:37 1994", now)).toBe(37);
  });

  it("RETRY-7: a date in the past means no wait; fractions of a second round up", () => {
    expect(parseRetryAfter("Sat, 05 Nov 1994 08:49:37 GMT", now)).toBe(0);
    expect(parseRetryAfter("Sun, 06 Nov 1994 08:49:01 GMT", now + 500)).toBe(1);
  });

  it("G21: a missing, negative or unparsable value is ignored", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("-5")).toBeUndefined();
    expect(parseRetryAfter("1.5")).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("")).toBeUndefined();
    expect(parseRetryAfter("Sun, 31 Feb 1994 08:49:37 GMT", now)).toBeUndefined();
    expect(parseRetryAfter("sun, 06 Nov 1994 08:49:37 GMT", now)).toBeUndefined();
  });

  it("G21: an HTTP-date without a clock to compare with is ignored", () => {
    expect(parseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT")).toBeUndefined();
  });

  it("RETRY-7: a two-digit rfc850 year more than 50 years ahead is in the past century (RFC 9110 §5.6.7)", () => {
    const in2030 = Date.UTC(2030, 0, 1);
    expect(parseHttpDate("Friday, 01-Jan-79 00:00:00 GMT", in2030)).toBe(Date.UTC(2079, 0, 1));
    expect(parseHttpDate("Monday, 01-Jan-99 00:00:00 GMT", in2030)).toBe(Date.UTC(1999, 0, 1));
  });
});
