/**
 * Property-based fuzzing of the receiver: malformed and adversarial requests,
 * each class with the answer the responses table and G10 give it. For every
 * request: the answer is a valid problem document (PRB-1, PRB-2, PRB-5), its
 * status is the errors table's status of its identifier, it is the status the
 * class expects, the handler never fails (no 503), and nothing is stored.
 *
 * Seeds are fixed so that a run repeats exactly; a failure prints the seed
 * and the shrunk counterexample.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { errorsTable, isProblemIdentifier } from "../protocol/errors.ts";
import { parseProblem } from "../protocol/resources.ts";
import { TEST_PROBLEM_BASE, createReceiverHarness, readProblem, textMessage } from "./testing.ts";
import type { ReceiverHarness, SignedDeliveryOptions } from "./testing.ts";

const URL_MESSAGES = "https://mx.b.example/v1/messages";
const BOUNDARY = "fuzz-boundary";
const MAILBOXES = ["bob@b.example", "carol@b.example", "dave@b.example"];
const encoder = new TextEncoder();

/** Checks one answer against the table and the expectation; returns the identifier. */
async function checkAnswer(h: ReceiverHarness, response: Response, expected: readonly number[]): Promise<string> {
  const answer = await readProblem(response);
  expect(answer.contentType).toBe("application/problem+json");
  expect(parseProblem(answer.json, TEST_PROBLEM_BASE, { strict: true }).ok).toBe(true);
  const identifier = answer.identifier;
  expect(isProblemIdentifier(identifier)).toBe(true);
  if (!isProblemIdentifier(identifier)) return "";
  expect(answer.json["status"]).toBe(answer.status);
  // 404/405 for paths and methods outside the service carry invalid_request; everything else matches the table.
  if (answer.status !== 404 && answer.status !== 405) expect(answer.status).toBe(errorsTable[identifier].httpStatus);
  expect(answer.status).not.toBe(503);
  expect(expected).toContain(answer.status);
  if (answer.status === 429 || answer.status === 503) expect(answer.retryAfter).toMatch(/^[0-9]+$/);
  expect(h.store.all()).toHaveLength(0);
  return identifier;
}

let harness: Promise<ReceiverHarness> | undefined;
/** One receiver for all runs: every request is bad, so nothing may ever be stored in it. */
function shared(): Promise<ReceiverHarness> {
  harness ??= createReceiverHarness();
  return harness;
}

/** Printable ASCII without the characters a header value cannot hold. */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 60,
});

/** A multipart body with these raw parts (`[content-type, content]`), for structure breakage. */
function rawMultipart(parts: readonly (readonly [string, string])[], close = true, lineBreak = "\r\n"): Uint8Array {
  const text =
    parts
      .map(
        ([type, content]) =>
          `--${BOUNDARY}${lineBreak}Content-Type: ${type}${lineBreak}${lineBreak}${content}${lineBreak}`,
      )
      .join("") + (close ? `--${BOUNDARY}--${lineBreak}` : "");
  return encoder.encode(text);
}

const ENVELOPE_JSON = JSON.stringify({ from: "alice@a.example", to: ["bob@b.example"] });
const MESSAGE_TEXT = "Subject: fuzz\r\n\r\nhello\r\n";

interface Case {
  readonly name: string;
  readonly options: Partial<SignedDeliveryOptions>;
  readonly expected: readonly number[];
}

const headerBreakage: fc.Arbitrary<Case> = fc.oneof(
  fc
    .constantFrom("idempotency-key", "signature", "signature-input", "content-digest", "content-type")
    .map((name): Case => ({ name: `delete ${name}`, options: { headers: { [name]: null } }, expected: [400] })),
  fc
    .tuple(fc.constantFrom("signature", "signature-input", "content-digest", "content-type"), headerText)
    .map(([name, value]): Case => ({
      name: `garble ${name}`,
      options: { headers: { [name]: value } },
      expected: [400, 401],
    })),
  headerText
    // Fetch trims a header value's surrounding whitespace, so "k " arrives as "k".
    .filter((key) => !/^[A-Za-z0-9._~-]{1,128}$/.test(key.trim()))
    .map((key): Case => ({
      name: "bad Idempotency-Key",
      options: { headers: { "idempotency-key": key } },
      expected: [400],
    })),
  fc
    .integer({ min: 129, max: 400 })
    .map((n): Case => ({ name: "long key", options: { idempotencyKey: "k".repeat(n) }, expected: [400] })),
  fc
    .constantFrom(
      "text/plain",
      "multipart/mixed",
      "multipart/form-data; boundary=x",
      "multipart/mixed; boundary=",
      `multipart/mixed; boundary=${"z".repeat(71)}`,
      "application/json",
    )
    .map((contentType): Case => ({ name: "bad Content-Type", options: { contentType }, expected: [400] })),
);

const multipartBreakage: fc.Arbitrary<Case> = fc
  .constantFrom(
    rawMultipart([["application/json", ENVELOPE_JSON]]),
    rawMultipart([
      ["application/json", ENVELOPE_JSON],
      ["message/rfc822", MESSAGE_TEXT],
      ["text/plain", "third"],
    ]),
    rawMultipart([
      ["message/rfc822", MESSAGE_TEXT],
      ["application/json", ENVELOPE_JSON],
    ]),
    rawMultipart(
      [
        ["application/json", ENVELOPE_JSON],
        ["message/rfc822", MESSAGE_TEXT],
      ],
      false,
    ),
    rawMultipart(
      [
        ["application/json", ENVELOPE_JSON],
        ["message/rfc822", MESSAGE_TEXT],
      ],
      true,
      "\n",
    ),
    rawMultipart([
      ["text/json", ENVELOPE_JSON],
      ["message/rfc822", MESSAGE_TEXT],
    ]),
    rawMultipart([]),
    encoder.encode("not multipart at all"),
    new Uint8Array(0),
  )
  .map((body): Case => ({
    name: "multipart structure",
    options: { body, contentType: `multipart/mixed; boundary=${BOUNDARY}` },
    expected: [400],
  }));

const badJson: fc.Arbitrary<Case> = fc
  .oneof(
    fc.string({ maxLength: 80 }).filter((s) => !s.includes(`--${BOUNDARY}`)),
    fc.json({ maxDepth: 3 }),
    fc.constantFrom(
      "{",
      '{"from":"alice@a.example","to":["bob@b.example"]',
      "null",
      "[]",
      '{"from":1,"to":["bob@b.example"]}',
      '{"from":"alice@a.example","to":[null]}',
    ),
  )
  .map((envelope): Case => ({ name: "bad JSON", options: { envelope, boundary: BOUNDARY }, expected: [400] }));

const badMailbox = fc.oneof(
  fc.string({ maxLength: 30 }).filter((s) => !s.includes("@")),
  fc.integer({ min: 65, max: 200 }).map((n) => `${"l".repeat(n)}@b.example`),
  fc.constantFrom(
    "a b@b.example",
    "@b.example",
    "bob@",
    "bob@@b.example",
    ".bob@b.example",
    "bob.@b.example",
    "bob@b..example",
    "bob@-b.example",
    '"bob"@b.example',
    "bob@[1.2.3.4]",
    "bob@1.2.3.4",
    "bob@xn--zz.example",
  ),
);

const badRecipients: fc.Arbitrary<Case> = fc.oneof(
  fc.tuple(fc.subarray(MAILBOXES), badMailbox, fc.nat()).map(([good, bad, at]): Case => {
    const to = [...good];
    to.splice(at % (to.length + 1), 0, bad);
    return { name: "bad mailbox", options: { to, url: URL_MESSAGES }, expected: [400] };
  }),
  fc
    .constantFrom(
      ["zed@c.example"],
      ["bob@b.example", "zed@c.example"],
      ["bob@B.example", "bob@b.example"],
      ["bob@b.example", "carol@b.example", "bob@b.example"],
    )
    .map((to): Case => ({ name: "wrong domain or duplicate", options: { to, url: URL_MESSAGES }, expected: [400] })),
  fc.tuple(fc.subarray(MAILBOXES, { minLength: 1 }), fc.nat()).map(([to, n]): Case => {
    const duplicated = [...to, to[n % to.length] ?? "bob@b.example"];
    return { name: "duplicate recipient", options: { to: duplicated, url: URL_MESSAGES }, expected: [400] };
  }),
  fc.integer({ min: 101, max: 160 }).map((n): Case => ({
    name: "too many recipients",
    options: { to: Array.from({ length: n }, (_, i) => `u${i}@b.example`) },
    expected: [400],
  })),
  fc.constant<Case>({ name: "empty to", options: { envelope: { from: "alice@a.example", to: [] } }, expected: [400] }),
);

const badSignature: fc.Arbitrary<Case> = fc.oneof(
  fc.integer({ min: 301, max: 10_000_000 }).chain((skew) =>
    fc.constantFrom(skew, -skew).map((s): Case => ({
      name: "created out of tolerance",
      options: { createdS: 1768467600 + s },
      expected: [401],
    })),
  ),
  fc
    .stringMatching(/^[a-z0-9]{1,12}$/)
    .filter((s) => s !== "s1")
    .map((selector): Case => ({
      name: "unknown key",
      options: { keyid: `${selector}._svckey.a.example` },
      expected: [401],
    })),
  fc
    .constantFrom("mallory@evil.example", "ceo@b.example", "alice@a.example.evil.example")
    .map((from): Case => ({ name: "from ≠ signer", options: { from }, expected: [401] })),
  fc
    .subarray(["@method", "@target-uri", "content-type", "content-digest", "idempotency-key"])
    .filter((c) => c.length < 5)
    .map((components): Case => ({ name: "too few components", options: { components }, expected: [401] })),
  fc
    .constantFrom("https://mx.b.example/v1/messages?x", "https://other.example/v1/messages")
    .map((url): Case => ({ name: "signed for another target", options: { url, headers: {} }, expected: [401] })),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes): Case => ({
    name: "body swapped after signing",
    options: { bodyAfterSigning: bytes },
    expected: [401],
  })),
);

describe("fuzz: malformed and adversarial requests (fast-check)", () => {
  for (const [title, arbitrary, seed] of [
    [
      "POST-2, POST-3, POST-4, POST-5, POST-6, LIM-5, G10: broken headers → 400 (or 401 when the garbage is well-formed)",
      headerBreakage,
      1,
    ],
    [
      "POST-7, POST-8, POST-9, G9: multipart with 1 or 3 parts, wrong order, wrong types, broken framing → 400",
      multipartBreakage,
      2,
    ],
    ["POST-8, ENV-1, ENV-4: bad JSON envelopes → 400", badJson, 3],
    [
      "MBX-1..MBX-8, ENV-5..ENV-8, ERR-11, POST-22: bad mailboxes, wrong domains, duplicates, too many → 400",
      badRecipients,
      4,
    ],
    ["AUTH-1..AUTH-5, G2, G3, G4, G19: bad signatures → 401", badSignature, 5],
  ] as const) {
    it(title, async () => {
      const h = await shared();
      await fc.assert(
        fc.asyncProperty(arbitrary, async (c) => {
          let request = await h.request(c.options);
          if (c.name === "signed for another target") {
            request = new Request(URL_MESSAGES, {
              method: "POST",
              headers: request.headers,
              body: await request.arrayBuffer(),
            });
          }
          await checkAnswer(h, await h.receiver(request), c.expected);
        }),
        { seed, numRuns: 60 },
      );
    });
  }

  it("ERR-12, LIM-2: oversize bodies, declared or streamed, with or without a lying Content-Length → 413", async () => {
    const h = await shared();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1 << 30 }),
        fc.constantFrom("declared", "lying", "absent"),
        async (excess, mode) => {
          const limit = 26214400;
          const chunk = new Uint8Array(1 << 20);
          let sent = 0;
          const stream = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (sent > limit + excess) return controller.close();
              sent += chunk.length;
              controller.enqueue(chunk);
            },
          });
          const headers: Record<string, string | null> =
            mode === "declared"
              ? { "content-length": String(limit + excess) }
              : mode === "lying"
                ? { "content-length": "10" }
                : { "content-length": null };
          const response = await h.deliver({ stream, headers });
          await checkAnswer(h, response, [413]);
          expect(sent).toBeLessThanOrEqual(limit + 3 * chunk.length);
        },
      ),
      { seed: 6, numRuns: 12 },
    );
  });

  it("POST-21, GET-10, ERR-16: arbitrary methods, paths, headers and bodies → always a problem document with a table status", async () => {
    const h = await shared();
    const path = fc.oneof(
      fc.constantFrom(
        "/v1/messages",
        "/v2/messages",
        "/v0/x",
        "/v10/messages",
        "/",
        "/v1",
        "/v1/",
        "/v1/messages/x",
        "/V1/messages",
      ),
      fc.stringMatching(/^\/[a-z0-9/._-]{0,30}$/),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("POST", "GET", "PUT", "DELETE", "PATCH", "OPTIONS"),
        path,
        fc.dictionary(
          fc.constantFrom(
            "idempotency-key",
            "signature",
            "signature-input",
            "content-digest",
            "content-type",
            "content-length",
            "x-other",
          ),
          headerText,
          {
            maxKeys: 6,
          },
        ),
        fc.option(fc.uint8Array({ maxLength: 300 }), { nil: undefined }),
        async (method, p, headers, body) => {
          const init: RequestInit = { method, headers };
          if (body !== undefined && method !== "GET") init.body = body;
          let request: Request;
          try {
            request = new Request(`https://mx.b.example${p}`, init);
          } catch {
            return; // A request fetch itself refuses to build cannot reach a server.
          }
          if (method === "GET" && p === "/v1/capabilities") return;
          const identifier = await checkAnswer(h, await h.receiver(request), [400, 401, 404, 405, 413]);
          const version = /^\/(v[0-9]+)(?:\/|$)/.exec(p)?.[1];
          if (version !== undefined && version !== "v1") expect(identifier).toBe("unsupported_version");
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it("POST-11, G11: the fuzzed receiver still delivers a good request afterwards (nothing poisoned)", async () => {
    const h = await shared();
    const message = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "after the storm" });
    const response = await h.deliver({ message, idempotencyKey: "after-fuzz" });
    expect(response.status).toBe(200);
    expect(h.store.all()).toHaveLength(1);
  });
});
