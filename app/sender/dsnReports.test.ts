import PostalMime from "postal-mime";
import { describe, expect, it } from "vitest";
import { parseDsn } from "../protocol/dsn.ts";
import { buildFailureReport, headerBlockOf, statusOf } from "./dsnReports.ts";
import type { FailedRecipient, FailureReport } from "./dsnReports.ts";
import { PROBLEM_BASE, T0, createSeededRandom } from "./testing.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const original = encoder.encode(
  "From: Alice <alice@a.example>\r\nTo: <bob@b.example>\r\nSubject: Quarterly numbers\r\nMessage-ID: <q1@a.example>\r\n\r\nThe numbers.\r\n",
);

function report(recipients: readonly FailedRecipient[], from: string | null = "alice@a.example"): FailureReport {
  return { messageId: "q1@a.example", from, message: original, arrivalAtMs: T0, domain: "b.example", recipients };
}

const problem = (identifier: string, detail?: string) => ({
  type: `${PROBLEM_BASE}/${identifier}`,
  identifier,
  ...(detail !== undefined && { detail }),
});

async function parsed(bytes: Uint8Array | undefined) {
  const result = await parseDsn(bytes ?? new Uint8Array());
  if (!result.ok) throw new Error(JSON.stringify(result.violations));
  return result.value;
}

describe("the header block returned in part 3", () => {
  it("EVT-4: everything before the empty line, with the last line break; the whole message when there is no body", () => {
    expect(decoder.decode(headerBlockOf(original))).toBe(
      "From: Alice <alice@a.example>\r\nTo: <bob@b.example>\r\nSubject: Quarterly numbers\r\nMessage-ID: <q1@a.example>\r\n",
    );
    expect(decoder.decode(headerBlockOf(encoder.encode("Subject: x\n\nbody\n")))).toBe("Subject: x\n");
    expect(decoder.decode(headerBlockOf(encoder.encode("Subject: only headers\r\n")))).toBe(
      "Subject: only headers\r\n",
    );
  });
});

describe("status codes (G29)", () => {
  it("G29, ERR-17: permanent problems keep their own codes; an unknown permanent one is 5.0.0", () => {
    expect(
      statusOf({
        recipient: "x@b.example",
        kind: "rejected",
        permanent: true,
        problem: problem("recipient_not_found"),
      }),
    ).toBe("5.1.1");
    expect(
      statusOf({ recipient: "x@b.example", kind: "rejected", permanent: true, problem: problem("policy_rejected") }),
    ).toBe("5.7.1");
    expect(
      statusOf({ recipient: "x@b.example", kind: "rejected", permanent: true, problem: problem("message_too_large") }),
    ).toBe("5.3.4");
    expect(
      statusOf({
        recipient: "x@b.example",
        kind: "rejected",
        permanent: true,
        problem: { type: "https://other.example/p/odd" },
      }),
    ).toBe("5.0.0");
    expect(statusOf({ recipient: "x@b.example", kind: "rejected", permanent: true })).toBe("5.0.0");
  });

  it("G29, STATE-7: a bounce after give-up on temporary answers is 4.4.7", () => {
    for (const identifier of ["temporary_failure", "rate_limited", "mailbox_full"]) {
      expect(
        statusOf({ recipient: "x@b.example", kind: "bounced", permanent: false, problem: problem(identifier) }),
      ).toBe("4.4.7");
    }
    expect(statusOf({ recipient: "x@b.example", kind: "bounced", permanent: false })).toBe("4.4.7");
  });
});

describe("the DSN the sender writes (RFC 3464)", () => {
  it("G14, EVT-4, G29: a rejection reads back with Reporting-MTA, Arrival-Date and per recipient Final-Recipient, Action, Status, Diagnostic-Code, Last-Attempt-Date", async () => {
    const built = buildFailureReport(
      report([
        {
          recipient: "bob@b.example",
          kind: "rejected",
          permanent: true,
          problem: problem("recipient_not_found", "no such user"),
          lastAttemptAtMs: T0 + 60_000,
          remoteOrigin: "https://mx.b.example",
        },
        {
          recipient: "carol@b.example",
          kind: "rejected",
          permanent: true,
          problem: problem("policy_rejected"),
          lastAttemptAtMs: T0 + 60_000,
        },
      ]),
      { reportingDomain: "a.example", nowMs: T0 + 120_000, random: createSeededRandom(3) },
    );
    expect(built?.to).toBe("alice@a.example");
    expect(built?.dsnMessageId).toMatch(/^dsn\.[0-9a-f]{24}@a\.example$/);
    const dsn = await parsed(built?.bytes);
    expect(dsn.reportType).toBe("delivery-status");
    expect(dsn.partTypes).toEqual(["text/plain", "message/delivery-status", "text/rfc822-headers"]);
    expect(dsn.to).toEqual(["alice@a.example"]);
    expect(dsn.deliveryStatus.reportingMta).toEqual({ type: "dns", value: "a.example" });
    expect(dsn.deliveryStatus.arrivalDate).toBe("Thu, 15 Jan 2026 09:00:00 +0000");
    expect(
      dsn.deliveryStatus.recipients.map((r) => ({
        finalRecipient: r.finalRecipient,
        action: r.action,
        status: r.status,
        diagnosticCode: r.diagnosticCode,
        lastAttemptDate: r.lastAttemptDate,
        remoteMta: r.remoteMta,
      })),
    ).toEqual([
      {
        finalRecipient: { type: "rfc822", value: "bob@b.example" },
        action: "failed",
        status: "5.1.1",
        diagnosticCode: { type: "x-svc", value: `${PROBLEM_BASE}/recipient_not_found no such user` },
        lastAttemptDate: "Thu, 15 Jan 2026 09:01:00 +0000",
        remoteMta: { type: "dns", value: "mx.b.example" },
      },
      {
        finalRecipient: { type: "rfc822", value: "carol@b.example" },
        action: "failed",
        status: "5.7.1",
        diagnosticCode: { type: "x-svc", value: `${PROBLEM_BASE}/policy_rejected` },
        lastAttemptDate: "Thu, 15 Jan 2026 09:01:00 +0000",
        remoteMta: undefined,
      },
    ]);
    expect(dsn.returned?.content).toEqual(headerBlockOf(original));
    expect(dsn.humanReadable).toContain(
      "<bob@b.example>: the receiving domain refused it for good (recipient_not_found: no such user)",
    );
  });

  it("EVT-3, STATE-7: a bounce says 4.4.7 and that the sender gave up after 5 days; postal-mime reads it as a report to alice", async () => {
    const built = buildFailureReport(
      report([
        {
          recipient: "bob@b.example",
          kind: "bounced",
          permanent: false,
          problem: problem("temporary_failure"),
          lastAttemptAtMs: T0,
        },
      ]),
      { reportingDomain: "a.example", nowMs: T0 + 5 * 86_400_000, random: createSeededRandom(3) },
    );
    const dsn = await parsed(built?.bytes);
    expect(dsn.deliveryStatus.recipients.map((r) => [r.action, r.status])).toEqual([["failed", "4.4.7"]]);
    expect(dsn.humanReadable).toContain("gave up after 5 days");
    const email = await PostalMime.parse(built?.bytes ?? new Uint8Array());
    expect(email.to?.map((a) => ("address" in a ? a.address : undefined))).toEqual(["alice@a.example"]);
    expect(email.from).toMatchObject({ address: "mailer-daemon@a.example" });
    expect(email.headers.find((h) => h.key === "auto-submitted")?.value).toBe("auto-replied");
    expect(email.date).toBe(new Date(T0 + 5 * 86_400_000).toISOString());
  });

  it("ENV-3, G14: no DSN for a null envelope sender, nor when nothing failed", () => {
    const options = { reportingDomain: "a.example", nowMs: T0, random: createSeededRandom(3) };
    expect(
      buildFailureReport(report([{ recipient: "bob@b.example", kind: "rejected", permanent: true }], null), options),
    ).toBeUndefined();
    expect(buildFailureReport(report([]), options)).toBeUndefined();
  });

  it("a seeded Random makes the same DSN byte for byte; a G5 underscore origin is left out of Remote-MTA", async () => {
    const make = () =>
      buildFailureReport(
        report([
          {
            recipient: "bob@b.example",
            kind: "rejected",
            permanent: true,
            remoteOrigin: "https://_svc.b.example:8443",
          },
        ]),
        {
          reportingDomain: "a.example",
          nowMs: T0,
          random: createSeededRandom(9),
        },
      );
    expect(make()?.bytes).toEqual(make()?.bytes);
    expect((await parsed(make()?.bytes)).deliveryStatus.recipients[0]?.remoteMta).toBeUndefined();
  });
});
