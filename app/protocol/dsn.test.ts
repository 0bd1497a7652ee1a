import { describe, expect, it } from "vitest";
import fc from "fast-check";
import PostalMime from "postal-mime";
import rfc3464 from "./fixtures/rfc3464.json" with { type: "json" };
import { bytesEqual, bytesToHex } from "./base64.ts";
import {
  DSN_ACTIONS,
  GIVE_UP_STATUS,
  STATUS_PATTERN,
  buildDsn,
  decodeUtf8AddrXtext,
  isDsnMessage,
  encodeUtf8AddrXtext,
  formatRfc5322Date,
  parseDeliveryStatus,
  parseDsn,
  problemDiagnostic,
  statusFor,
  typedAddress,
} from "./dsn.ts";
import type { DsnInput, DsnTypedValue, ParsedDsn } from "./dsn.ts";
import { chooseBoundary, indexOfBytes, splitMultipart } from "./multipart.ts";
import { ProtocolError } from "./result.ts";
import type { Parsed, Violation } from "./result.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = (s: string): Uint8Array => enc.encode(s);

function value<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new Error(`expected a value, got ${JSON.stringify(parsed.violations)}`);
  return parsed.value;
}

function violations<T>(parsed: Parsed<T>): readonly Violation[] {
  if (parsed.ok) throw new Error(`expected violations, got ${JSON.stringify(parsed.value)}`);
  return parsed.violations;
}

function thrown(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error("expected a ProtocolError");
}

/** The raw field value of a parsed block, by name. */
function field(fields: readonly { name: string; value: string }[], name: string): string | undefined {
  return fields.find((f) => f.name.toLowerCase() === name.toLowerCase())?.value;
}

// ── The RFC 3464 example ────────────────────────────────────────────────

const fixture = rfc3464.fields;
const eml = bytes(rfc3464.eml);

describe("parseDsn on the RFC 3464 Appendix E Multi-Recipient DSN", () => {
  it("EVT-4: the fixture holds the published .eml unchanged (length and SHA-256)", async () => {
    expect(eml.length).toBe(fixture.eml_file.length_bytes);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", eml as Uint8Array<ArrayBuffer>));
    expect(bytesToHex(digest)).toBe(fixture.eml_file.sha256);
  });

  it("EVT-4: reads the top-level headers, the report type and the three parts", async () => {
    const dsn = value(await parseDsn(eml));
    const headers = Object.fromEntries(fixture.eml_file.top_level_headers);
    expect(dsn.date).toBe(headers["Date"]);
    expect(dsn.subject).toBe(headers["Subject"]);
    expect(dsn.from).toBe("MAILER-DAEMON@CS.UTK.EDU");
    expect(dsn.to).toEqual(["owner-ups-mib@CS.UTK.EDU"]);
    expect(dsn.reportType).toBe(fixture.eml_file.content_type_parameters["report-type"]);
    expect(dsn.partTypes).toEqual(fixture.eml_file.mime_structure.map((p) => p.content_type.split(";")[0]));
    expect(dsn.humanReadable).toBe(
      "       ----- The following addresses had delivery problems -----\n" +
        "<arathib@vnet.ibm.com> (unrecoverable error)\n<wsnell@sdcc13.ucsd.edu> (unrecoverable error)\n",
    );
    expect(dsn.returned?.contentType).toBe("message/rfc822");
    expect(dec.decode(dsn.returned?.content)).toBe("[original message goes here]\r\n");
  });

  it("EVT-4: every per-message and per-recipient field equals rfc3464-fields.json", async () => {
    const dsn = value(await parseDsn(eml));
    const expected = fixture.eml_file.expected;
    expect(field(dsn.deliveryStatus.perMessageFields, "Reporting-MTA")).toBe(expected["Reporting-MTA"]);
    expect(dsn.deliveryStatus.reportingMta).toEqual({ type: "dns", value: "cs.utk.edu" });
    expect(dsn.deliveryStatus.recipients).toHaveLength(expected.recipients.length);
    expected.recipients.forEach((want, i) => {
      const got = dsn.deliveryStatus.recipients[i];
      if (got === undefined) throw new Error(`recipient ${i} missing`);
      for (const name of [
        "Original-Recipient",
        "Final-Recipient",
        "Action",
        "Diagnostic-Code",
        "Remote-MTA",
      ] as const) {
        expect(field(got.fields, name), `${name} of recipient ${i}`).toBe(want[name as keyof typeof want]);
      }
      expect(got.status).toBe(want.Status);
      expect(got.statusComment).toBe("Status_comment" in want ? want.Status_comment : undefined);
      expect(got.action).toBe(want.Action);
    });
  });
});

describe("parseDeliveryStatus on the four RFC 3464 Appendix E examples", () => {
  type ExpectedField = {
    name: string;
    value: string;
    mta_name_type?: string;
    mta_name?: string;
    address_type?: string;
    address?: string;
    diagnostic_type?: string;
    diagnostic?: string;
    status_code?: string;
    class?: number;
    comment?: string | null;
  };
  const typed = (v: DsnTypedValue | undefined): { type: string; value: string } | undefined =>
    v && { type: v.type, value: v.value };

  for (const [name, example] of Object.entries(fixture.examples)) {
    it(`EVT-4: ${name} — fields, typed values, status codes and comments`, () => {
      const status = value(parseDeliveryStatus(example.delivery_status_text));
      const perMessage = example.per_message_fields as ExpectedField[];
      expect(status.perMessageFields).toEqual(perMessage.map((f) => ({ name: f.name, value: f.value })));
      expect(typed(status.reportingMta)).toEqual({
        type: perMessage[0]?.mta_name_type,
        value: perMessage[0]?.mta_name,
      });
      expect(status.recipients).toHaveLength(example.per_recipient.length);
      (example.per_recipient as ExpectedField[][]).forEach((fields, i) => {
        const got = status.recipients[i];
        if (got === undefined) throw new Error(`recipient ${i} missing`);
        expect(got.fields).toEqual(fields.map((f) => ({ name: f.name, value: f.value })));
        for (const f of fields) {
          if (f.name === "Final-Recipient")
            expect(typed(got.finalRecipient)).toEqual({ type: f.address_type, value: f.address });
          if (f.name === "Original-Recipient")
            expect(typed(got.originalRecipient)).toEqual({ type: f.address_type, value: f.address });
          if (f.name === "Remote-MTA")
            expect(typed(got.remoteMta)).toEqual({ type: f.mta_name_type, value: f.mta_name });
          if (f.name === "Diagnostic-Code")
            expect(typed(got.diagnosticCode)).toEqual({ type: f.diagnostic_type, value: f.diagnostic });
          if (f.name === "Action") expect(got.action).toBe(f.value);
          if (f.name === "Last-Attempt-Date") expect(got.lastAttemptDate).toBe(f.value);
          if (f.name === "Status") {
            expect(got.status).toBe(f.status_code);
            expect(Number(got.status[0])).toBe(f.class);
            expect(got.statusComment ?? null).toBe(f.comment);
          }
        }
      });
    });
  }
});

describe("parseDeliveryStatus: RFC 3464 required fields", () => {
  const recipient = "Final-Recipient: rfc822; a@b.example\r\nAction: failed\r\nStatus: 5.1.1\r\n";

  it("EVT-4: Reporting-MTA is required in the per-message block", () => {
    expect(violations(parseDeliveryStatus(`Arrival-Date: Fri, 8 Jul 1994 09:21:47 -0400\r\n\r\n${recipient}`))).toEqual(
      [expect.objectContaining({ path: "delivery-status.per-message.Reporting-MTA", rule: "EVT-4" })],
    );
  });

  it("EVT-4: at least one recipient block is required", () => {
    expect(violations(parseDeliveryStatus("Reporting-MTA: dns; a.example\r\n"))[0]).toMatchObject({
      path: "delivery-status",
      rule: "EVT-4",
    });
  });

  it("EVT-4: Final-Recipient, Action and Status are required in every recipient block", () => {
    const found = violations(
      parseDeliveryStatus(`Reporting-MTA: dns; a.example\r\n\r\n${recipient}\r\nRemote-MTA: dns; x.example\r\n`),
    );
    expect(found.map((v) => v.path)).toEqual([
      "delivery-status.recipient[1].Final-Recipient",
      "delivery-status.recipient[1].Action",
      "delivery-status.recipient[1].Status",
    ]);
  });

  it("EVT-4: Action must be one of failed, delayed, delivered, relayed, expanded (case-insensitive)", () => {
    expect(
      value(
        parseDeliveryStatus(
          "Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; a@b\r\nAction: FAILED\r\nStatus: 5.0.0\r\n",
        ),
      ).recipients[0]?.action,
    ).toBe("failed");
    expect(
      violations(
        parseDeliveryStatus(
          "Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; a@b\r\nAction: bounced\r\nStatus: 5.0.0\r\n",
        ),
      ),
    ).toEqual([expect.objectContaining({ path: "delivery-status.recipient[0].Action", rule: "EVT-4" })]);
  });

  it("EVT-4: Status must be an RFC 3463 code: class 2, 4 or 5, 1–3 digit sub-codes, no leading zeros", () => {
    for (const good of ["2.0.0", "4.4.7", "5.1.1", "5.7.999 (comment)", "4.10.0"]) {
      expect(
        parseDeliveryStatus(
          `Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; a@b\r\nAction: failed\r\nStatus: ${good}\r\n`,
        ).ok,
      ).toBe(true);
    }
    for (const bad of ["5.1", "6.0.0", "5.01.1", "5.1.1000", "5. 1.1", "550", "5.1.1 junk"]) {
      expect(
        violations(
          parseDeliveryStatus(
            `Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; a@b\r\nAction: failed\r\nStatus: ${bad}\r\n`,
          ),
        ),
      ).toEqual([expect.objectContaining({ path: "delivery-status.recipient[0].Status", rule: "EVT-4" })]);
    }
  });

  it("EVT-4: typed fields need the form type; value, and a required field may not repeat", () => {
    expect(violations(parseDeliveryStatus("Reporting-MTA: cs.utk.edu\r\n\r\n" + recipient))[0]).toMatchObject({
      path: "delivery-status.per-message.Reporting-MTA",
    });
    expect(
      violations(parseDeliveryStatus("Reporting-MTA: dns; a\r\n\r\n" + recipient + "Status: 5.1.2\r\n"))[0],
    ).toMatchObject({ path: "delivery-status.recipient[0].Status" });
  });
});

// ── Building ────────────────────────────────────────────────────────────

const ORIGINAL_HEADERS = bytes(
  "Received: from sender.example by receiver.example;\r\n\tMon, 1 Jan 2024 00:00:00 +0000\r\n" +
    "DKIM-Signature: v=1; a=ed25519-sha256; d=sender.example; s=s1;\r\n b=AAAA\r\n" +
    "From: Alice <alice@sender.example>\r\nTo: bob@receiver.example, carol@receiver.example\r\nSubject: Hello\r\n" +
    "Message-ID: <m1@sender.example>\r\n",
);

function input(overrides: Partial<DsnInput> = {}): DsnInput {
  return {
    reportingMta: "receiver.example",
    arrivalDate: Date.UTC(2024, 0, 1, 0, 0, 0),
    from: undefined,
    to: "alice@sender.example",
    recipients: [
      {
        finalRecipient: "bob@receiver.example",
        originalRecipient: "Bob@receiver.example",
        action: "failed",
        status: statusFor("recipient_not_found"),
        diagnosticCode: problemDiagnostic("https://problems.example/recipient_not_found", "no such mailbox"),
        remoteMta: "mx.receiver.example",
        lastAttemptDate: Date.UTC(2024, 0, 1, 0, 5, 0),
      },
      {
        finalRecipient: "carol@receiver.example",
        action: "failed",
        status: statusFor("mailbox_full", { gaveUp: true }),
        diagnosticCode: { type: "smtp", text: "452 4.2.2 mailbox full" },
      },
    ],
    originalHeaders: ORIGINAL_HEADERS,
    humanReadable: "Your message could not be delivered.\nDetails follow.\n",
    dateMs: Date.UTC(2024, 0, 6, 0, 0, 1),
    messageId: "dsn-1@receiver.example",
    boundary: chooseBoundary(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), ORIGINAL_HEADERS),
    ...overrides,
  };
}

async function roundTrip(dsnInput: DsnInput): Promise<ParsedDsn> {
  return value(await parseDsn(buildDsn(dsnInput)));
}

describe("buildDsn", () => {
  it("STATE-8, G17, EVT-4: a complete RFC 5322 message with the DSN headers, CRLF everywhere", () => {
    const dsn = dec.decode(buildDsn(input()));
    const head = dsn.slice(0, dsn.indexOf("\r\n\r\n") + 2);
    expect(head).toBe(
      "From: Mail Delivery System <mailer-daemon@receiver.example>\r\n" +
        "To: <alice@sender.example>\r\n" +
        "Subject: Undelivered Mail Returned to Sender\r\n" +
        "Date: Sat, 06 Jan 2024 00:00:01 +0000\r\n" +
        "Message-ID: <dsn-1@receiver.example>\r\n" +
        "Auto-Submitted: auto-replied\r\n" +
        "MIME-Version: 1.0\r\n" +
        `Content-Type: multipart/report; report-type=delivery-status;\r\n\tboundary=${input().boundary}\r\n`,
    );
    expect(/(^|[^\r])\n/.test(dsn)).toBe(false);
    expect(/\r(?!\n)/.test(dsn)).toBe(false);
    expect(dsn.split("\r\n").every((line) => line.length <= 998)).toBe(true);
  });

  it("EVT-4, G29: the delivery-status part holds the per-message and per-recipient fields in RFC 3464 form", () => {
    // Compared unfolded (RFC 5322 §2.2.3): the long Diagnostic-Code is folded.
    const dsn = dec.decode(buildDsn(input())).replace(/\r\n(?=[ \t])/g, "");
    expect(dsn).toContain(
      "Content-Type: message/delivery-status\r\n\r\n" +
        "Reporting-MTA: dns; receiver.example\r\n" +
        "Arrival-Date: Mon, 01 Jan 2024 00:00:00 +0000\r\n" +
        "\r\n" +
        "Original-Recipient: rfc822; Bob@receiver.example\r\n" +
        "Final-Recipient: rfc822; bob@receiver.example\r\n" +
        "Action: failed\r\n" +
        "Status: 5.1.1\r\n" +
        "Remote-MTA: dns; mx.receiver.example\r\n" +
        "Diagnostic-Code: x-svc; https://problems.example/recipient_not_found no such mailbox\r\n" +
        "Last-Attempt-Date: Mon, 01 Jan 2024 00:05:00 +0000\r\n" +
        "\r\n" +
        "Final-Recipient: rfc822; carol@receiver.example\r\n" +
        "Action: failed\r\n" +
        "Status: 4.4.7\r\n" +
        "Diagnostic-Code: smtp; 452 4.2.2 mailbox full\r\n",
    );
  });

  it("EVT-4, STATE-8: postal-mime reads it as multipart/report; report-type=delivery-status with the three parts", async () => {
    const email = await PostalMime.parse(buildDsn(input()), { forceRfc822Attachments: true });
    const contentType = email.headers.find((h) => h.key === "content-type")?.value ?? "";
    expect(contentType).toMatch(/^multipart\/report;\s*report-type=delivery-status;\s*boundary=/);
    // postal-mime keeps the delimiter's line break as one more newline.
    expect(email.text).toBe("Your message could not be delivered.\nDetails follow.\n\n");
    expect(email.attachments.map((a) => a.mimeType)).toEqual(["message/delivery-status", "text/rfc822-headers"]);
    expect(email.subject).toBe("Undelivered Mail Returned to Sender");
    expect(email.messageId).toBe("<dsn-1@receiver.example>");
    const status = email.attachments[0]?.content;
    expect(dec.decode(status as ArrayBuffer)).toContain("Final-Recipient: rfc822; bob@receiver.example");
  });

  it("EVT-4, STATE-8: parseDsn reads back every field, and each Status and Action has RFC 3464 syntax", async () => {
    const dsn = await roundTrip(input());
    expect(dsn.reportType).toBe("delivery-status");
    expect(dsn.partTypes).toEqual(["text/plain", "message/delivery-status", "text/rfc822-headers"]);
    expect(dsn.humanReadable).toBe("Your message could not be delivered.\nDetails follow.\n");
    expect(dsn.subject).toBe("Undelivered Mail Returned to Sender");
    expect(dsn.messageId).toBe("<dsn-1@receiver.example>");
    expect(dsn.from).toBe("mailer-daemon@receiver.example");
    expect(dsn.to).toEqual(["alice@sender.example"]);
    expect(dsn.date).toBe("Sat, 06 Jan 2024 00:00:01 +0000");
    expect(dsn.deliveryStatus.reportingMta).toEqual({ type: "dns", value: "receiver.example" });
    expect(dsn.deliveryStatus.arrivalDate).toBe("Mon, 01 Jan 2024 00:00:00 +0000");
    const [bob, carol] = dsn.deliveryStatus.recipients;
    expect(bob).toMatchObject({
      finalRecipient: { type: "rfc822", value: "bob@receiver.example" },
      originalRecipient: { type: "rfc822", value: "Bob@receiver.example" },
      action: "failed",
      status: "5.1.1",
      remoteMta: { type: "dns", value: "mx.receiver.example" },
      diagnosticCode: { type: "x-svc", value: "https://problems.example/recipient_not_found no such mailbox" },
      lastAttemptDate: "Mon, 01 Jan 2024 00:05:00 +0000",
    });
    expect(carol).toMatchObject({
      finalRecipient: { type: "rfc822", value: "carol@receiver.example" },
      action: "failed",
      status: "4.4.7",
    });
    for (const r of dsn.deliveryStatus.recipients) {
      expect(r.status).toMatch(/^[245]\.\d{1,3}\.\d{1,3}$/);
      expect(DSN_ACTIONS).toContain(r.action);
      expect(r.finalRecipient.type).toMatch(/^(rfc822|utf-8)$/);
    }
  });

  it("EVT-4: part 3 holds the original header block byte for byte", async () => {
    const built = buildDsn(input());
    const dsn = await roundTrip(input());
    expect(dsn.returned?.contentType).toBe("text/rfc822-headers");
    expect(bytesEqual(dsn.returned?.content ?? new Uint8Array(), ORIGINAL_HEADERS)).toBe(true);
    // And by the raw layout: the block sits between the part's blank line and the closing delimiter's CRLF.
    const marker = bytes("Content-Type: text/rfc822-headers\r\n\r\n");
    const start = indexOfBytes(built, marker, 0) + marker.length;
    expect(bytesEqual(built.subarray(start, start + ORIGINAL_HEADERS.length), ORIGINAL_HEADERS)).toBe(true);
    expect(dec.decode(built.subarray(start + ORIGINAL_HEADERS.length))).toBe(`\r\n--${input().boundary}--\r\n`);
  });

  it("EVT-4: original headers with odd bytes (no final CRLF, a bare LF, 8-bit) still come back byte for byte", async () => {
    const odd = new Uint8Array([...bytes("X-A: 1\nX-B: \u00e9t\u00e9"), 0xff]);
    const dsn = await roundTrip(input({ originalHeaders: odd }));
    expect(dsn.returned?.contentType).toBe("message/global-headers");
    expect(bytesEqual(dsn.returned?.content ?? new Uint8Array(), odd)).toBe(true);
  });

  it("EVT-4: without original headers the report has two parts", async () => {
    const dsn = await roundTrip(input({ originalHeaders: new Uint8Array(0) }));
    expect(dsn.partTypes).toEqual(["text/plain", "message/delivery-status"]);
    expect(dsn.returned).toBeUndefined();
  });

  it("EVT-4, G14: a DSN for rejected recipients to a given From, with a subject, one recipient, no arrival date", async () => {
    const dsn = await roundTrip(
      input({
        from: "postmaster@sender.example",
        subject: "Delivery failed",
        arrivalDate: undefined,
        recipients: [{ finalRecipient: "x@receiver.example", action: "failed", status: statusFor("policy_rejected") }],
      }),
    );
    expect(dsn.from).toBe("postmaster@sender.example");
    expect(dsn.subject).toBe("Delivery failed");
    expect(dsn.deliveryStatus.arrivalDate).toBeUndefined();
    expect(dsn.deliveryStatus.recipients).toEqual([
      expect.objectContaining({
        finalRecipient: { type: "rfc822", value: "x@receiver.example" },
        status: "5.7.1",
        action: "failed",
      }),
    ]);
  });

  it("EVT-4, MBX-5: non-ASCII addresses use the RFC 6533 utf-8 address type in xtext form, keeping the part 7-bit", async () => {
    const built = buildDsn(
      input({
        to: "j\u00f6rg@sender.example",
        recipients: [
          {
            finalRecipient: "\u7528\u6237@receiver.example",
            originalRecipient: "b+x=y@receiver.example",
            action: "delayed",
            status: "4.2.2",
            diagnosticCode: { type: "x-svc", text: "Postfach voll \u2014 sp\u00e4ter" },
          },
        ],
      }),
    );
    const text = dec.decode(built);
    expect(text).toContain("Final-Recipient: utf-8; \\x{7528}\\x{6237}@receiver.example\r\n");
    expect(text).toContain("Original-Recipient: rfc822; b+x=y@receiver.example\r\n");
    expect(text).toContain("Diagnostic-Code: x-svc; Postfach voll \\x{2014} sp\\x{E4}ter\r\n");
    expect(text).toContain("To: <j\u00f6rg@sender.example>\r\n");
    expect(text).toContain("Subject: Delayed Mail (still being retried)\r\n");
    // The delivery-status part itself is 7-bit.
    const split = value(
      splitMultipart(built.subarray(indexOfBytes(built, bytes("\r\n\r\n"), 0) + 4), input().boundary, "dsn", "EVT-4"),
    );
    expect(split.parts[1]?.content.every((b) => b < 0x80)).toBe(true);
    const dsn = value(await parseDsn(built));
    expect(dsn.deliveryStatus.recipients[0]?.finalRecipient).toEqual({
      type: "utf-8",
      value: "\u7528\u6237@receiver.example",
    });
    expect(dsn.to).toEqual(["j\u00f6rg@sender.example"]);
  });

  it("EVT-4: a non-ASCII human-readable part is sent as UTF-8, 8bit, and decodes back", async () => {
    const dsn = await roundTrip(
      input({ humanReadable: "Zustellung fehlgeschlagen \u2014 \u00fcbermorgen erneut.\r\n" }),
    );
    expect(dsn.humanReadable).toBe("Zustellung fehlgeschlagen \u2014 \u00fcbermorgen erneut.\n");
  });

  it("EVT-4: long diagnostics are folded at spaces and unfold to the same text; line breaks cannot start a field", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const built = buildDsn(
      input({
        recipients: [
          {
            finalRecipient: "a@receiver.example",
            action: "failed",
            status: "5.0.0",
            diagnosticCode: { type: "smtp", text: `550 ${words}\r\nStatus: 2.0.0` },
          },
        ],
      }),
    );
    const text = dec.decode(built);
    const statusPart = text.slice(
      text.indexOf("Reporting-MTA"),
      text.indexOf(`--${input().boundary}`, text.indexOf("Reporting-MTA")),
    );
    expect(statusPart.split("\r\n").every((line) => line.length <= 78)).toBe(true);
    const dsn = value(await parseDsn(built));
    const [recipient] = dsn.deliveryStatus.recipients;
    expect(recipient?.diagnosticCode?.value).toBe(`550 ${words} Status: 2.0.0`);
    expect(recipient?.status).toBe("5.0.0");
  });

  it("EVT-4: refuses input no caller should pass (ProtocolError with the offending path)", () => {
    const cases: [Partial<DsnInput>, string][] = [
      [{ recipients: [] }, "recipients"],
      [{ recipients: [{ finalRecipient: "a@b.example", action: "failed", status: "5.1" }] }, "recipients[0].status"],
      [
        { recipients: [{ finalRecipient: "a@b.example", action: "bounced" as "failed", status: "5.1.1" }] },
        "recipients[0].action",
      ],
      [
        { recipients: [{ finalRecipient: "a@b.example", action: "failed", status: "5.1.1", remoteMta: "not a host" }] },
        "recipients[0].remoteMta",
      ],
      [
        {
          recipients: [
            {
              finalRecipient: "a@b.example",
              action: "failed",
              status: "5.1.1",
              diagnosticCode: { type: "bad type", text: "x" },
            },
          ],
        },
        "recipients[0].diagnosticCode.type",
      ],
      [{ to: "a@b.example\r\nBcc: c@d.example" }, "to"],
      [{ reportingMta: "bad;mta" }, "reportingMta"],
      [{ boundary: "x".repeat(71) }, "boundary"],
      [{ boundary: "b", originalHeaders: bytes("X: --b\r\n") }, "originalHeaders"],
      [{ boundary: "b", humanReadable: "see --b" }, "humanReadable"],
      [{ messageId: "two words" }, "messageId"],
    ];
    for (const [overrides, path] of cases) {
      const error = thrown(() => buildDsn(input(overrides)));
      expect(
        error.violations.map((v) => v.path),
        path,
      ).toContain(path);
      expect(error.violations.every((v) => v.rule === "EVT-4")).toBe(true);
    }
  });
});

describe("parseDsn: what is not a DSN", () => {
  const built = dec.decode(buildDsn(input()));
  const boundary = input().boundary;

  it("EVT-4: another top-level type or report-type is a violation at dsn.headers.Content-Type", async () => {
    const mixed = built.replace("multipart/report; report-type=delivery-status;", "multipart/mixed;");
    expect(violations(await parseDsn(bytes(mixed)))).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "dsn.headers.Content-Type", rule: "EVT-4" })]),
    );
    const mdn = built.replace("report-type=delivery-status", "report-type=disposition-notification");
    expect(violations(await parseDsn(bytes(mdn)))).toEqual([
      expect.objectContaining({ path: "dsn.headers.Content-Type", rule: "EVT-4" }),
    ]);
  });

  it("EVT-4: a report whose second part is not message/delivery-status, or with one part, is a violation", async () => {
    const wrong = built.replace("Content-Type: message/delivery-status", "Content-Type: text/plain");
    expect(violations(await parseDsn(bytes(wrong)))).toEqual([
      expect.objectContaining({ path: "dsn.body.part[1].Content-Type", rule: "EVT-4" }),
    ]);
    const cut =
      built.slice(0, built.indexOf(`\r\n--${boundary}\r\nContent-Type: message/delivery-status`)) +
      `\r\n--${boundary}--\r\n`;
    expect(violations(await parseDsn(bytes(cut)))).toEqual([
      expect.objectContaining({ path: "dsn.body", rule: "EVT-4" }),
    ]);
  });

  it("EVT-4: a delivery-status part without its required fields is a violation under dsn.delivery-status", async () => {
    const noStatus = built.replace("Status: 5.1.1\r\n", "");
    expect(violations(await parseDsn(bytes(noStatus)))).toEqual([
      expect.objectContaining({ path: "dsn.delivery-status.recipient[0].Status", rule: "EVT-4" }),
    ]);
  });

  it("EVT-4: a message without a header/body separator or Content-Type is a violation, not an exception", async () => {
    expect(violations(await parseDsn(bytes("Subject: x")))[0]).toMatchObject({ path: "dsn", rule: "EVT-4" });
    expect(violations(await parseDsn(bytes("Subject: x\r\n\r\nbody")))[0]).toMatchObject({
      path: "dsn.headers.Content-Type",
      rule: "EVT-4",
    });
  });
});

// ── Status codes and helpers ────────────────────────────────────────────

describe("isDsnMessage (a DSN never causes a DSN, whatever its envelope)", () => {
  const text = (t: string): Uint8Array => new TextEncoder().encode(t);
  it("EVT-4: a DSN buildDsn makes, and the RFC 3464 example, are DSNs", () => {
    expect(isDsnMessage(buildDsn(input()))).toBe(true);
    expect(isDsnMessage(text(rfc3464.eml))).toBe(true);
  });

  it("reads the Content-Type whatever its case, folding, quoting and line ends; RFC 6533's global-delivery-status too", () => {
    for (const header of [
      "Content-Type: multipart/report; report-type=delivery-status; boundary=x",
      'content-type: Multipart/Report;\r\n\tREPORT-TYPE="Delivery-Status";\r\n boundary=x',
      "Content-Type: multipart/report; boundary=x; report-type=global-delivery-status",
      "Content-Type:multipart/report;report-type=delivery-status",
    ]) {
      expect(isDsnMessage(text(`From: <>\r\n${header}\r\n\r\nbody`)), header).toBe(true);
      expect(isDsnMessage(text(`From: <>\n${header.replace(/\r\n/g, "\n")}\n\nbody`)), header).toBe(true);
    }
  });

  it("is false for other messages: another report, a multipart/mixed, no Content-Type, a DSN only in the body", () => {
    for (const message of [
      "Subject: hi\r\n\r\nContent-Type: multipart/report; report-type=delivery-status\r\n",
      "Content-Type: multipart/report; report-type=disposition-notification; boundary=x\r\n\r\n",
      "Content-Type: multipart/mixed; report-type=delivery-status; boundary=x\r\n\r\n",
      "Content-Type: text/plain\r\nX-Note: multipart/report; report-type=delivery-status\r\n\r\n",
      "Content-Type: multipart/report; report-type=delivery-statuses\r\n\r\n",
      "",
    ]) {
      expect(isDsnMessage(text(message)), message).toBe(false);
    }
  });
});

describe("statusFor", () => {
  it("G29, ERR-1..ERR-7: permanent problems map to their RFC 3463 codes", () => {
    expect(statusFor("recipient_not_found")).toBe("5.1.1");
    expect(statusFor("policy_rejected")).toBe("5.7.1");
    expect(statusFor("message_too_large")).toBe("5.3.4");
    expect(statusFor("invalid_signature")).toBe("5.7.7");
    expect(statusFor("invalid_request")).toBe("5.5.0");
    expect(statusFor("idempotency_conflict")).toBe("5.5.0");
    expect(statusFor("unsupported_version")).toBe("5.5.0");
    expect(statusFor("recipient_not_found", { gaveUp: true })).toBe("5.1.1");
  });

  it("G29, STATE-7, ERR-8..ERR-10: temporary problems keep class 4, and a give-up after 5 days says 4.4.7", () => {
    expect(statusFor("mailbox_full")).toBe("4.2.2");
    expect(statusFor("rate_limited")).toBe("4.7.0");
    expect(statusFor("temporary_failure")).toBe("4.0.0");
    for (const id of ["mailbox_full", "rate_limited", "temporary_failure"])
      expect(statusFor(id, { gaveUp: true })).toBe(GIVE_UP_STATUS);
  });

  it("ERR-19, ERR-20: an unknown identifier goes by its class", () => {
    expect(statusFor("something_new")).toBe("5.0.0");
    expect(statusFor("something_new", { permanent: false })).toBe("4.0.0");
    expect(statusFor("something_new", { permanent: false, gaveUp: true })).toBe("4.4.7");
    expect(statusFor("toString")).toBe("5.0.0");
  });

  it("EVT-4: every status it returns has RFC 3463 syntax", () => {
    for (const id of [
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
      "x",
    ]) {
      for (const gaveUp of [false, true]) expect(statusFor(id, { gaveUp })).toMatch(STATUS_PATTERN);
    }
  });
});

describe("helpers", () => {
  it("EVT-4: formatRfc5322Date writes UTC with +0000 (the RFC 3464 example's own instant)", () => {
    // JAA13167.773673707: the example's boundary carries its time, 09:21:47 -0400.
    expect(formatRfc5322Date(773673707000)).toBe("Fri, 08 Jul 1994 13:21:47 +0000");
    expect(formatRfc5322Date(0)).toBe("Thu, 01 Jan 1970 00:00:00 +0000");
    expect(() => formatRfc5322Date(Number.NaN)).toThrow(RangeError);
  });

  it("G29: problemDiagnostic gives x-svc with the problem type URI", () => {
    expect(problemDiagnostic("https://p.example/mailbox_full")).toEqual({
      type: "x-svc",
      text: "https://p.example/mailbox_full",
    });
  });

  it("EVT-4, MBX-5: typedAddress uses rfc822 for ASCII and utf-8 xtext (RFC 6533) otherwise", () => {
    expect(typedAddress("a@b.example")).toBe("rfc822; a@b.example");
    expect(typedAddress("j\u00f6rg+tag=1@b.example")).toBe("utf-8; j\\x{F6}rg\\x{2B}tag\\x{3D}1@b.example");
    expect(encodeUtf8AddrXtext("a\\b c@\u{1F600}.example")).toBe("a\\x{5C}b\\x{20}c@\\x{1F600}.example");
  });

  it("EVT-4, MBX-5 (property): utf-8-addr-xtext decodes back to the address and is 7-bit printable", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), (address) => {
        const encoded = encodeUtf8AddrXtext(address);
        expect(/^[\x21-\x7e]*$/.test(encoded)).toBe(true);
        expect(decodeUtf8AddrXtext(encoded)).toBe(address);
      }),
      { numRuns: 300 },
    );
  });

  it("EVT-4, STATE-8 (property): build then parse gives back recipients, actions and statuses", async () => {
    const status = fc
      .tuple(fc.constantFrom("2", "4", "5"), fc.nat({ max: 999 }), fc.nat({ max: 999 }))
      .map(([c, s, d]) => `${c}.${s}.${d}`);
    const local = fc.stringMatching(/^[a-z0-9]{1,12}$/);
    const recipient = fc.record({
      finalRecipient: fc
        .oneof(
          local,
          fc
            .string({ unit: "grapheme", minLength: 1, maxLength: 8 })
            .map(
              (s) =>
                [...s]
                  .map((c) =>
                    /\s/.test(c) ||
                    (c.codePointAt(0) ?? 0) < 0x20 ||
                    ((c.codePointAt(0) ?? 0) >= 0x7f && (c.codePointAt(0) ?? 0) < 0xa0)
                      ? "x"
                      : c,
                  )
                  .join("") || "x",
            ),
        )
        .map((l) => `${l}@receiver.example`),
      action: fc.constantFrom(...DSN_ACTIONS),
      status,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(recipient, { minLength: 1, maxLength: 5 }), async (recipients) => {
        const dsn = await roundTrip(input({ recipients }));
        expect(
          dsn.deliveryStatus.recipients.map((r) => ({
            finalRecipient: r.finalRecipient.value,
            action: r.action,
            status: r.status,
          })),
        ).toEqual(recipients);
      }),
      { numRuns: 60 },
    );
  });
});
