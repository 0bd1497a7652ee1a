/**
 * The Node crypto provider answers exactly as WebCrypto does (the contract of
 * `CryptoProvider`, app/protocol/webCrypto.ts), so that installing it changes
 * speed and nothing else: same signatures, verdicts, digests and errors, and
 * the same trace hash for every scenario of the library (ARCHITECTURE.md
 * "Determinism": Node with the provider, Node without, and Chromium agree).
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createDigester, incrementalDigester } from "../protocol/digest.ts";
import type { DigestAlgorithm } from "../protocol/digest.ts";
import vectors from "../protocol/fixtures/rfc9530-vectors.json" with { type: "json" };
import {
  digestNow,
  observeWebCrypto,
  startDigest,
  subtle as observedSubtle,
  useCryptoProvider,
} from "../protocol/webCrypto.ts";
import type { IncrementalAlgorithm } from "../protocol/webCrypto.ts";
import fixture from "../sim/fixtures/determinism.json" with { type: "json" };
import { SCENARIO } from "../sim/fixtures/determinismScenario.ts";
import { runLoadedScenario, runScenarioText } from "../sim/runScenario.ts";
import { traceHash } from "../trace/exportJson.ts";
import { nodeCryptoProvider, SYNC_DIGEST_LIMIT } from "./nodeCrypto.ts";
import { findScenarioFiles, loadScenarioFile } from "./scenarioLoader.ts";

const provider = nodeCryptoProvider();
const web = globalThis.crypto.subtle;
const hex = (buffer: ArrayBuffer): string => Buffer.from(buffer).toString("hex");

async function ed25519(extractable = true): Promise<CryptoKeyPair> {
  return (await web.generateKey({ name: "Ed25519" }, extractable, ["sign", "verify"])) as CryptoKeyPair;
}

/** Settles a promise into what it gave or the name of the error it failed with. */
async function outcome<T>(promise: () => Promise<T>): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await promise() };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

describe("nodeCryptoProvider: WebCrypto's answers, computed in place (SIG-* Ed25519, DIG-* SHA-256)", () => {
  it("signs Ed25519 byte for byte as WebCrypto does (RFC 8032 signatures are deterministic)", async () => {
    const pair = await ed25519();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (data) => {
        const ours = await provider.sign!({ name: "Ed25519" }, pair.privateKey, data);
        const theirs = await web.sign({ name: "Ed25519" }, pair.privateKey, data);
        expect(hex(ours)).toBe(hex(theirs));
      }),
      { numRuns: 100 },
    );
  });

  it("verifies as WebCrypto does: good signatures, flipped bits, wrong lengths, another key", async () => {
    const pair = await ed25519();
    const other = await ed25519();
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 512 }),
        fc.nat(),
        fc.constantFrom("good", "flip", "short", "long", "empty", "other-key"),
        async (data, at, kind) => {
          const good = new Uint8Array(await web.sign("Ed25519", pair.privateKey, data));
          let signature = good;
          if (kind === "flip") {
            signature = good.slice();
            signature[at % 64] = (signature[at % 64] ?? 0) ^ (1 << (at % 8));
          } else if (kind === "short") signature = good.subarray(0, 63);
          else if (kind === "long") signature = new Uint8Array([...good, 0]);
          else if (kind === "empty") signature = new Uint8Array(0);
          const key = kind === "other-key" ? other.publicKey : pair.publicKey;
          const ours = await provider.verify!("Ed25519", key, signature, data);
          const theirs = await web.verify("Ed25519", key, signature, data);
          expect(ours).toBe(theirs);
          if (kind === "good") expect(ours).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("G4: imports a key record's 32 raw bytes as WebCrypto does — the same key, whatever the bytes — and verifies with it", async () => {
    const pair = await ed25519();
    const raw = new Uint8Array(await web.exportKey("raw", pair.publicKey));
    const data = new Uint8Array([1, 2, 3]);
    const signature = await web.sign("Ed25519", pair.privateKey, data);
    const ours = await provider.importKey!("raw", raw, { name: "Ed25519" }, true, ["verify"]);
    const theirs = await web.importKey("raw", raw, { name: "Ed25519" }, true, ["verify"]);
    expect([ours.type, ours.algorithm, ours.usages, ours.extractable]).toEqual([
      theirs.type,
      theirs.algorithm,
      theirs.usages,
      theirs.extractable,
    ]);
    expect(hex(await web.exportKey("raw", ours))).toBe(hex(raw.buffer));
    expect(await provider.verify!("Ed25519", ours, signature, data)).toBe(true);
    expect(await web.verify("Ed25519", ours, signature, data)).toBe(true);
    // Any 32 bytes import (neither side checks the point), and verify the same way after.
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 32, maxLength: 32 }), async (bytes) => {
        const a = await outcome(async () => {
          const key = await provider.importKey!("raw", bytes, "Ed25519", true, ["verify"]);
          return provider.verify!("Ed25519", key, signature, data);
        });
        const b = await outcome(async () => {
          const key = await web.importKey("raw", bytes, "Ed25519", true, ["verify"]);
          return web.verify("Ed25519", key, signature, data);
        });
        expect(a).toEqual(b);
      }),
      { numRuns: 50 },
    );
    // The same bytes again (as a fleet's receivers each import a sender's key): a CryptoKey of its own, the same key.
    const twice = await provider.importKey!("raw", raw.slice(), { name: "Ed25519" }, false, ["verify"]);
    expect([twice.extractable, twice.usages]).toEqual([false, ["verify"]]);
    expect(await provider.verify!("Ed25519", twice, signature, data)).toBe(
      await web.verify("Ed25519", twice, signature, data),
    );
    // What it does not import itself, WebCrypto does, with its own answer or error.
    for (const [format, bytes, usages] of [
      ["raw", raw.subarray(0, 31), ["verify"]],
      ["raw", raw, ["sign"]],
      ["raw", raw, []],
      ["spki", raw, ["verify"]],
    ] as const) {
      const a = await outcome(() => provider.importKey!(format, bytes, "Ed25519", true, [...usages]));
      const b = await outcome(() => web.importKey(format, bytes, "Ed25519", true, [...usages]));
      expect("error" in a ? a : { type: a.value.type }).toEqual("error" in b ? b : { type: b.value.type });
    }
  });

  it("digests SHA-256 as WebCrypto does, below and above the in-place limit, from ArrayBuffers and views", async () => {
    const sizes = [0, 1, 55, 56, 64, 10_240, SYNC_DIGEST_LIMIT, SYNC_DIGEST_LIMIT + 1];
    for (const size of sizes) {
      const backing = new Uint8Array(size + 7).map((_, i) => (i * 31) & 0xff);
      const view = backing.subarray(3, 3 + size);
      expect(hex(await provider.digest!("SHA-256", view))).toBe(hex(await web.digest("SHA-256", view)));
      expect(hex(await provider.digest!({ name: "sha-256" }, view.slice().buffer))).toBe(
        hex(await web.digest("SHA-256", view)),
      );
    }
  });

  it("POST-5: its SHA-256 and SHA-512 fed in pieces (a body hashed as it arrives) equal WebCrypto's digest of the whole", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 0, maxLength: 5000 }),
        fc.array(fc.nat({ max: 5000 }), { maxLength: 6 }),
        fc.constantFrom<IncrementalAlgorithm>("SHA-256", "SHA-512"),
        async (data, cuts, algorithm) => {
          const running = provider.incrementalDigest?.(algorithm);
          if (running === undefined) throw new Error("the Node provider hashes in pieces");
          let at = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            const end = Math.min(cut, data.length);
            if (end < at) continue;
            running.update(data.subarray(at, end));
            at = end;
          }
          running.update(data.subarray(at));
          expect(Buffer.from(running.digest()).toString("hex")).toBe(hex(await web.digest(algorithm, data)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("POST-5: digestNow gives WebCrypto's SHA-256 and SHA-512 at once, up to the in-place limit; nothing past it or for another algorithm", async () => {
    restore = useCryptoProvider(provider);
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 4096 }),
        fc.constantFrom("SHA-256", "SHA-512"),
        async (data, algorithm) => {
          const now = digestNow(algorithm as IncrementalAlgorithm, data);
          expect(now === undefined ? undefined : hex(now.buffer as ArrayBuffer)).toBe(
            hex(await web.digest(algorithm, data)),
          );
        },
      ),
      { numRuns: 60 },
    );
    expect(digestNow("SHA-256", new Uint8Array(SYNC_DIGEST_LIMIT + 1))).toBeUndefined();
    expect(digestNow("SHA-1" as IncrementalAlgorithm, new Uint8Array(1))).toBeUndefined();
    restore();
    restore = undefined;
    // WebCrypto alone has no such thing.
    expect(digestNow("SHA-256", new Uint8Array(1))).toBeUndefined();
  });

  it("startDigest: WebCrypto alone offers no digest in pieces (the core hashes the whole body); the provider offers SHA-256 and SHA-512", () => {
    expect(startDigest("SHA-256")).toBeUndefined();
    expect(startDigest("SHA-512")).toBeUndefined();
    restore = useCryptoProvider(provider);
    expect(startDigest("SHA-256")).toBeDefined();
    expect(startDigest("SHA-512")).toBeDefined();
    expect(startDigest("SHA-384" as IncrementalAlgorithm)).toBeUndefined();
  });

  it("hands back a fresh ArrayBuffer of exactly the result's length (not a pooled slab)", async () => {
    const digest = await provider.digest!("SHA-256", new Uint8Array(10));
    expect(digest.byteLength).toBe(32);
    const pair = await ed25519();
    expect((await provider.sign!("Ed25519", pair.privateKey, new Uint8Array(10))).byteLength).toBe(64);
    // node:crypto's own result buffer when it is the whole of it: no one else writes into it later.
    const first = await provider.digest!("SHA-256", new Uint8Array([1]));
    const copy = new Uint8Array(first).slice();
    await provider.digest!("SHA-256", new Uint8Array([2]));
    expect(new Uint8Array(first)).toEqual(copy);
    expect(provider.digestNow!("SHA-256", new Uint8Array(10))?.buffer.byteLength).toBe(32);
    const running = provider.incrementalDigest!("SHA-512");
    running?.update(new Uint8Array(3));
    expect(running?.digest().buffer.byteLength).toBe(64);
  });

  it("leaves to WebCrypto what it does not know, with WebCrypto's own errors", async () => {
    const pair = await ed25519();
    const hmac = await web.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    const data = new Uint8Array([1, 2, 3]);
    const sealed = await ed25519(false);
    const cases: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
      ["SHA-384", () => provider.digest!("SHA-384", data), () => web.digest("SHA-384", data)],
      ["HMAC sign", () => provider.sign!("HMAC", hmac, data), () => web.sign("HMAC", hmac, data)],
      // A public key cannot sign, a private one cannot verify: InvalidAccessError from WebCrypto.
      [
        "public key signs",
        () => provider.sign!("Ed25519", pair.publicKey, data),
        () => web.sign("Ed25519", pair.publicKey, data),
      ],
      [
        "private key verifies",
        () => provider.verify!("Ed25519", pair.privateKey, new Uint8Array(64), data),
        () => web.verify("Ed25519", pair.privateKey, new Uint8Array(64), data),
      ],
      ["unknown digest", () => provider.digest!("MD5", data), () => web.digest("MD5", data)],
      // Not extractable: no KeyObject may be made of it (DEP0204), so WebCrypto signs.
      [
        "non-extractable key",
        () => provider.sign!("Ed25519", sealed.privateKey, data),
        () => web.sign("Ed25519", sealed.privateKey, data),
      ],
    ];
    for (const [, ours, theirs] of cases) {
      const a = await outcome(ours);
      const b = await outcome(theirs);
      if ("value" in a && "value" in b) expect(hex(a.value as ArrayBuffer)).toBe(hex(b.value as ArrayBuffer));
      else expect(a).toEqual(b);
    }
  });

  it("settles at once: the core's observed subtle answers before any host task runs", async () => {
    restore = useCryptoProvider(provider);
    let settled = false;
    void observedSubtle.digest("SHA-256", new Uint8Array(100)).then(() => (settled = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it("what it computes in place is not observed (no host task to wait for); what it leaves to WebCrypto is", async () => {
    restore = useCryptoProvider(provider);
    const pair = await ed25519();
    const seen: string[] = [];
    const stop = observeWebCrypto(() => void seen.push("observed"));
    try {
      const data = new Uint8Array(100);
      const signature = await observedSubtle.sign({ name: "Ed25519" }, pair.privateKey, data);
      expect(await observedSubtle.verify({ name: "Ed25519" }, pair.publicKey, signature, data)).toBe(true);
      await observedSubtle.digest("SHA-256", data);
      expect(seen).toEqual([]);
      // Past the in-place limit, and an algorithm it does not hash: WebCrypto's thread pool, observed.
      await observedSubtle.digest("SHA-256", new Uint8Array(SYNC_DIGEST_LIMIT + 1));
      await observedSubtle.digest("SHA-384", data);
      expect(seen).toEqual(["observed", "observed"]);
    } finally {
      stop();
    }
  });
});

describe("the core's digesters with the Node provider installed (POST-5, serve hashing a body as it arrives: decision 0017)", () => {
  const bodies = vectors.bodies as Record<string, { hex: string; "sha-256"?: string; "sha-512"?: string }>;

  it("POST-5: incrementalDigester gives sha-256 and sha-512 that hold nothing, equal to WebCrypto's digest of the whole for any body split anywhere", async () => {
    restore = useCryptoProvider(provider);
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 20_000 }),
        fc.array(fc.nat({ max: 20_000 }), { maxLength: 8 }),
        fc.constantFrom<DigestAlgorithm>("sha-256", "sha-512"),
        async (bytes, cuts, algorithm) => {
          const digester = incrementalDigester(algorithm);
          if (digester === undefined) throw new Error(`the Node provider hashes ${algorithm} in pieces`);
          const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
          let from = 0;
          for (const to of [...points, bytes.length]) {
            digester.update(bytes.subarray(from, to));
            from = to;
          }
          expect(await digester.finish()).toEqual(new Uint8Array(await web.digest(algorithm.toUpperCase(), bytes)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("POST-5, RFC 9530 §2: createDigester's sha-256 and sha-512 give the published values of every body of the fixture", async () => {
    restore = useCryptoProvider(provider);
    for (const algorithm of ["sha-256", "sha-512"] as const) {
      for (const [name, entry] of Object.entries(bodies)) {
        const bytes = Buffer.from(entry.hex, "hex");
        const digester = createDigester(algorithm);
        for (let i = 0; i < bytes.length; i += 7) digester.update(bytes.subarray(i, i + 7));
        const digest = Buffer.from(await digester.finish()).toString("base64");
        if (entry[algorithm] !== undefined) expect(digest, `${algorithm} of ${name}`).toBe(entry[algorithm]);
        expect(digest).toBe(Buffer.from(await web.digest(algorithm.toUpperCase(), bytes)).toString("base64"));
      }
    }
  });
});

describe("determinism with the Node provider installed", () => {
  it("the determinism scenario gives the fixture's trace hash (the one Chromium reaches with WebCrypto)", async () => {
    restore = useCryptoProvider(provider);
    const outcome = await runScenarioText(SCENARIO, { file: "determinism.yaml", mailscope: "determinism-test" });
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
    expect(await traceHash(outcome.run.trace)).toBe(fixture.hash);
  });

  it("every scenario of the library gives the same trace hash with and without it", async () => {
    const files = await findScenarioFiles(["scenarios"]);
    expect(files.length).toBeGreaterThan(40);
    const differing: string[] = [];
    for (const file of files) {
      const load = await loadScenarioFile(file);
      if (!load.ok) throw new Error(`${file} does not load`);
      const hashes: string[] = [];
      for (const withProvider of [false, true]) {
        restore = withProvider ? useCryptoProvider(provider) : undefined;
        try {
          const run = await runLoadedScenario(load.loaded, { mailscope: "provider-test" });
          hashes.push(await traceHash(run.trace));
        } finally {
          restore?.();
          restore = undefined;
        }
      }
      if (hashes[0] !== hashes[1]) differing.push(file);
    }
    expect(differing).toEqual([]);
  }, 120_000);
});
