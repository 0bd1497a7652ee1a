/**
 * A delivery whose body is at hand (made in this process, app/protocol/bodies.ts, as the engine's sender makes
 * its POSTs) is answered exactly as the same delivery read through its stream: the same status, headers and
 * body, the same messages stored and the same trace events, valid or malformed, with the Node provider (which
 * hashes a small body at hand in one go once read, decision 0215) and with WebCrypto alone (which starts its
 * digests beside the signature's verification, decision 0160).
 */
import { afterEach, describe, expect, it } from "vitest";
import { bodyBytesOf } from "../protocol/bodies.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { createReceiverHarness, swappedBody, withBodyAtHand } from "../receiver/testing.ts";
import type { SignedDeliveryOptions } from "../receiver/testing.ts";
import { nodeCryptoProvider } from "./nodeCrypto.ts";

/** `request` again with its body at hand, as app/sender/attempt.ts makes a POST. */
async function atHand(request: Request): Promise<Request> {
  const made = await withBodyAtHand(request);
  expect(bodyBytesOf(made)).toBeDefined();
  return made;
}

const swapped = swappedBody();

interface Case {
  readonly name: string;
  readonly status: number;
  readonly options?: Partial<SignedDeliveryOptions>;
}

const cases: readonly Case[] = [
  { name: "POST-11: a valid delivery", status: 200 },
  {
    name: "POST-5: its Content-Digest with SHA-512 beside SHA-256",
    status: 200,
    options: { digestAlgorithms: ["sha-256", "sha-512"] },
  },
  {
    name: "AUTH-2, POST-5: a swapped body under the old digest and signature",
    status: 401,
    options: { bodyAfterSigning: swapped },
  },
  {
    name: "AUTH-5: a body wrong in both ways (G10's order)",
    status: 401,
    options: { bodyAfterSigning: swapped, headers: { "content-digest": "sha-256=:AAAA:" } },
  },
  {
    name: "POST-5: a Content-Digest that does not parse",
    status: 400,
    options: { headers: { "content-digest": "sha-256=abc" } },
  },
  {
    name: "POST-9: a body that is not multipart, signed and digested",
    status: 400,
    options: { body: new TextEncoder().encode("not a multipart body") },
  },
  { name: "POST-8: an empty body, signed and digested", status: 400, options: { body: new Uint8Array(0) } },
];

async function answered(response: Response): Promise<{ status: number; headers: [string, string][]; body: string }> {
  return { status: response.status, headers: [...response.headers], body: await response.text() };
}

describe.each([
  ["the Node provider", () => useCryptoProvider(nodeCryptoProvider())],
  ["WebCrypto alone", () => useCryptoProvider({})],
])("a body at hand is answered as the same body read from its stream, with %s", (_, install) => {
  let restore: (() => void) | undefined;
  afterEach(() => restore?.());

  it.each(cases)("$name", async ({ status, options = {} }) => {
    restore = install();
    const streamed = await createReceiverHarness();
    const inHand = await createReceiverHarness();
    const fromStream = await streamed.request(options);
    expect(bodyBytesOf(fromStream)).toBeUndefined();
    const a = await answered(await streamed.receiver(fromStream));
    const b = await answered(await inHand.receiver(await atHand(await inHand.request(options))));
    expect(a.status).toBe(status);
    expect(b).toEqual(a);
    expect(inHand.store.all()).toEqual(streamed.store.all());
    expect(inHand.trace.events).toEqual(streamed.trace.events);
  });
});

describe("the Node provider: a small body at hand is hashed in one go once read (decision 0215)", () => {
  let restore: (() => void) | undefined;
  afterEach(() => restore?.());

  it("POST-5: a body read from its stream is hashed as it arrives, one at hand is not", async () => {
    const provider = nodeCryptoProvider();
    let incremental = 0;
    restore = useCryptoProvider({
      ...provider,
      incrementalDigest: (algorithm) => {
        incremental += 1;
        return provider.incrementalDigest?.(algorithm);
      },
    });
    const h = await createReceiverHarness();
    expect((await h.receiver(await h.request())).status).toBe(200);
    expect(incremental).toBe(1);
    expect((await h.receiver(await atHand(await h.request()))).status).toBe(200);
    expect(incremental).toBe(1);
    expect(h.store.all()).toHaveLength(2);
  });
});
