/**
 * An unauthenticated client cannot make the receiver hold
 * its body. The signature (whose inputs are the headers, Content-Digest
 * among them) is verified before a byte of the body is read, and at most
 * `maxUnauthenticatedBodies` bodies are read at once before their digest is
 * checked. The bodies here stall forever: an answer that waited for them
 * would never come (the test would time out), so nothing depends on speed.
 */
import { describe, expect, it } from "vitest";
import { createReceiverHarness, readProblem } from "./testing.ts";

/** A body that sends nothing and never ends, and counts how often it was asked for more. */
function stalledBody(): { stream: ReadableStream<Uint8Array>; pulls: () => number; end: () => void } {
  let pulls = 0;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => {
        controller = c;
      },
      pull: () => {
        pulls += 1;
        return new Promise<void>(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    pulls: () => pulls,
    end: () => {
      try {
        controller?.error(new Error("the client went away"));
      } catch {
        // Already closed.
      }
    },
  };
}

describe("no body is read before the signature verifies", () => {
  it("AUTH-5, G10: a bad signature with a body that never arrives is answered 401 at once, the body never read", async () => {
    const h = await createReceiverHarness();
    const body = stalledBody();
    const request = await h.request({ stream: body.stream, headers: { signature: "sig1=:AAAA:" } });
    const answer = await readProblem(await h.receiver(request));
    expect(answer).toMatchObject({ status: 401, identifier: "invalid_signature" });
    expect(answer.json["detail"]).toMatch(/^signature:/);
    expect(body.pulls()).toBe(0);
  });

  it("G4, ERR-10: a key that cannot be looked up (SERVFAIL) is 503 before the body is read", async () => {
    const h = await createReceiverHarness();
    h.resolver.setOutcome(h.sender.keyid, "servfail");
    const body = stalledBody();
    const answer = await readProblem(await h.receiver(await h.request({ stream: body.stream })));
    expect(answer.status).toBe(503);
    expect(body.pulls()).toBe(0);
  });

  it("maxUnauthenticatedBodies: past the cap a request is 503 with Retry-After, its body unread; a slot freed is used again", async () => {
    const h = await createReceiverHarness((c) => c, { maxUnauthenticatedBodies: 2 });
    const held = [stalledBody(), stalledBody()];
    // Two requests with a good signature whose bodies never come: each holds a slot while its body is read.
    const first = await Promise.all(held.map((b) => h.request({ stream: b.stream })));
    const answering = first.map((request) => h.receiver(request));
    await until(() => held.every((b) => b.pulls() > 0));

    const third = stalledBody();
    const refused = await h.receiver(await h.request({ stream: third.stream }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect((await readProblem(refused)).json["detail"]).toMatch(/2 request bodies are being read/);
    expect(third.pulls()).toBe(0);

    // The clients go away: their requests end (400: the body could not be read) and free their slots.
    for (const b of held) b.end();
    expect((await Promise.all(answering)).map((r) => r.status)).toEqual([400, 400]);
    expect((await h.deliver()).status).toBe(200);
  });
});

/** Waits, a macrotask at a time, until `condition` holds (the test's own timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resume) => setTimeout(resume, 0));
}
