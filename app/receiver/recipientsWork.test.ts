import { describe, expect, it } from "vitest";
import { createReceiverHarness, createTestSender, readProblem } from "./testing.ts";
import type { ReceiverHarness } from "./testing.ts";

// One unauthenticated POST of 100,000 recipients (1.9 MB, a bogus
// signature) held `serve` for 103 s, since the envelope was parsed, and every
// recipient compared with every other, before the signature's verdict and
// before max_recipients. The receiver's work per recipient is counted here
// in steps (the `work` port: the envelope's steps, then one per recipient
// checked), not timed, and compared with a request of 100 recipients.

const recipients = (n: number): string[] => Array.from({ length: n }, (_, i) => `user${i}@b.example`);

/** A receiver (catch-all, max_recipients 100) whose steps of work per recipient are counted. */
async function counted(): Promise<{ h: ReceiverHarness; steps: () => number }> {
  let steps = 0;
  const h = await createReceiverHarness((c) => ({ ...c, catchAll: true }), {
    work: (n) => {
      steps += n;
    },
  });
  return {
    h,
    steps: () => {
      const taken = steps;
      steps = 0;
      return taken;
    },
  };
}

describe("100,000 recipients cost no more than 100", () => {
  it("AUTH-5, G10: with a bogus signature, 401 invalid_signature and no work per recipient at all", async () => {
    const { h, steps } = await counted();
    const small = await h.deliver({ to: recipients(100) });
    expect(small.status).toBe(200);
    const smallSteps = steps();
    expect(smallSteps).toBeGreaterThan(100);

    // Signed with another domain's key under a.example's keyid: the signature does not verify.
    const mallory = await createTestSender("evil.example");
    const request = await h.request({ to: recipients(100_000), key: mallory.privateKey });
    expect((await request.clone().arrayBuffer()).byteLength).toBeGreaterThan(1_900_000);
    const answer = await readProblem(await h.receiver(request));
    expect(answer.status).toBe(401);
    expect(answer.identifier).toBe("invalid_signature");
    const hugeSteps = steps();
    expect(hugeSteps).toBe(0);
    expect(hugeSteps / smallSteps).toBeLessThanOrEqual(2);
  });

  it("ENV-8, ERR-11: with a valid signature, 400 invalid_request on max_recipients, within 2× the steps of 100", async () => {
    const { h, steps } = await counted();
    expect((await h.deliver({ to: recipients(100) })).status).toBe(200);
    const smallSteps = steps();

    // Every recipient the same, and some broken: none of it is looked at, the length decides.
    const to = [...recipients(99_998), "user0@b.example", "not a mailbox"];
    const answer = await readProblem(await h.deliver({ to }));
    expect(answer.status).toBe(400);
    expect(answer.identifier).toBe("invalid_request");
    expect(answer.json["detail"]).toBe('$.to: "to" has 100000 recipients; this receiver takes at most 100 [ENV-8]');
    const hugeSteps = steps();
    expect(hugeSteps / smallSteps).toBeLessThanOrEqual(2);
    expect(h.store.all()).toHaveLength(100);
  });
});

describe("bad input with a violation per line", () => {
  it("POST-8, G9: a part header block of 200,000 broken lines is 400 with a short detail, not a 503", async () => {
    // Spread into one call, that many violations overflowed the stack: the handler's catch made it a 503.
    const h = await createReceiverHarness();
    const lines = Array.from({ length: 200_000 }, () => "not a header").join("\r\n");
    const envelope = JSON.stringify({ from: "alice@a.example", to: ["bob@b.example"] });
    const body = new TextEncoder().encode(
      `--b\r\nContent-Type: application/json\r\n${lines}\r\n\r\n${envelope}\r\n` +
        `--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: x\r\n\r\nx\r\n--b--\r\n`,
    );
    const answer = await readProblem(await h.deliver({ body, contentType: "multipart/mixed; boundary=b" }));
    expect(answer.status).toBe(400);
    expect(answer.identifier).toBe("invalid_request");
    const detail = String(answer.json["detail"]);
    expect(detail).toMatch(/; and 199980 more$/);
    expect(detail.length).toBeLessThan(5000);
  });
});
