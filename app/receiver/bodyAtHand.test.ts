/**
 * A delivery whose body is at hand (made in this process, app/protocol/bodies.ts, as the engine's sender
 * makes its POSTs): with WebCrypto alone its digests start beside the signature's verification, and the
 * verdicts keep G10's order (decision 0160).
 */
import { describe, expect, it } from "vitest";
import { bodyBytesOf } from "../protocol/bodies.ts";
import { createContentDigest } from "../protocol/digest.ts";
import { createReceiverHarness, readProblem, swappedBody, withBodyAtHand } from "./testing.ts";

/** `request` again with its body at hand, as app/sender/attempt.ts makes a POST. */
async function atHand(request: Request): Promise<Request> {
  const made = await withBodyAtHand(request);
  expect(bodyBytesOf(made)).toBeDefined();
  return made;
}

const swapped = swappedBody();

describe("a body at hand, its digest computed beside the signature's verification (G10)", () => {
  it("POST-11: a valid delivery is accepted and stored", async () => {
    const h = await createReceiverHarness();
    const response = await h.receiver(await atHand(await h.request()));
    expect(response.status).toBe(200);
    expect(h.store.all()).toHaveLength(1);
  });

  it("AUTH-2, POST-5: a swapped body under the old digest and signature → 401 at the digest check", async () => {
    const h = await createReceiverHarness();
    const answer = await readProblem(await h.receiver(await atHand(await h.request({ bodyAfterSigning: swapped }))));
    expect(answer.status).toBe(401);
    expect(String(answer.json["detail"])).toMatch(/^digest: .*\[POST-5\]$/);
    expect(h.store.all()).toHaveLength(0);
  });

  it("AUTH-5: a body wrong in both ways (new digest, old signature) is refused for its signature, G10's order", async () => {
    const h = await createReceiverHarness();
    const request = await h.request({
      bodyAfterSigning: swapped,
      headers: { "content-digest": await createContentDigest(swapped) },
    });
    const answer = await readProblem(await h.receiver(await atHand(request)));
    expect(answer.status).toBe(401);
    expect(String(answer.json["detail"])).toMatch(/^signature: .*\[AUTH-5\]$/);
    expect(h.store.all()).toHaveLength(0);
  });
});
