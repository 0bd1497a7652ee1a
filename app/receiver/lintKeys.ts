/**
 * Verification keys for the lint checks ({@link lintChecks}), by keyid: from
 * a JWKS (RFC 7517), from a receiver configuration's key records (G4), or
 * from a simulated world's domains. Web Crypto only (through
 * `protocol/webCrypto.ts`), no Node module.
 */
import { importPublicKeyRaw, parseKeyRecord } from "../protocol/profile.ts";
import { subtle } from "../protocol/webCrypto.ts";
import { errorMessage } from "../errorMessage.ts";

/** A set of verification keys by keyid, from a JWKS file or a receiver configuration's key records. */
export interface LintKeys {
  /** The key for a keyid, imported for the algorithm the signature names (or the JWK's `alg`), and where it came from. */
  lookup(keyid: string | undefined, alg?: string): Promise<{ key: CryptoKey; source: string } | undefined>;
}

interface JwkEntry {
  readonly index: number;
  readonly jwk: Readonly<Record<string, unknown>>;
}

/**
 * The keys of a JWKS (RFC 7517: `{ "keys": [...] }`, or one JWK, or an
 * array), looked up by `kid`. Supported: OKP Ed25519, EC P-256 and P-384,
 * RSA (RSA-PSS SHA-512 or PKCS#1 v1.5 SHA-256, by the JWK's `alg`, else the
 * signature's, else PSS), and oct (HMAC SHA-256). Only public parts are used.
 *
 * @throws Error naming the file and the key when the text is not a JWKS.
 */
export function jwksKeys(textValue: string, file: string): LintKeys {
  let json: unknown;
  try {
    json = JSON.parse(textValue);
  } catch (error) {
    throw new Error(`${file}: not JSON (${errorMessage(error)})`, { cause: error });
  }
  const list: unknown[] = Array.isArray(json)
    ? json
    : typeof json === "object" && json !== null && Array.isArray((json as { keys?: unknown }).keys)
      ? (json as { keys: unknown[] }).keys
      : typeof json === "object" && json !== null && "kty" in json
        ? [json]
        : [];
  if (list.length === 0) throw new Error(`${file}: no keys (expected {"keys": [ ...JWK ]})`);
  const entries: JwkEntry[] = list.map((jwk, index) => {
    if (typeof jwk !== "object" || jwk === null || typeof (jwk as { kty?: unknown }).kty !== "string") {
      throw new Error(`${file}: keys[${index}] is not a JWK (no "kty")`);
    }
    return { index, jwk: jwk as Record<string, unknown> };
  });
  const cache = new Map<string, Promise<CryptoKey>>();
  return {
    async lookup(keyid, alg) {
      const entry =
        entries.find((e) => e.jwk["kid"] === keyid) ??
        (entries.length === 1 && entries[0]?.jwk["kid"] === undefined ? entries[0] : undefined);
      if (entry === undefined) return undefined;
      const cacheKey = `${entry.index} ${alg ?? ""}`;
      let imported = cache.get(cacheKey);
      if (imported === undefined) {
        imported = importJwk(entry.jwk, alg).catch((error: unknown) => {
          throw new Error(
            `${file}: keys[${entry.index}]${typeof entry.jwk["kid"] === "string" ? ` (${entry.jwk["kid"]})` : ""} cannot be imported: ${errorMessage(error)}`,
            { cause: error },
          );
        });
        cache.set(cacheKey, imported);
      }
      return { key: await imported, source: `key ${String(entry.jwk["kid"] ?? `#${entry.index}`)} from ${file}` };
    },
  };
}

/** A verification key from a JWK, for the RFC 9421 algorithm `alg` when given. */
async function importJwk(jwk: Readonly<Record<string, unknown>>, alg?: string): Promise<CryptoKey> {
  const pick = (...names: string[]): JsonWebKey =>
    Object.fromEntries(names.filter((n) => jwk[n] !== undefined).map((n) => [n, jwk[n]])) as JsonWebKey;
  const jwkAlg = typeof jwk["alg"] === "string" ? jwk["alg"] : undefined;
  switch (jwk["kty"]) {
    case "OKP":
      if (jwk["crv"] !== "Ed25519") throw new Error(`OKP curve ${String(jwk["crv"])} is not supported (Ed25519 is)`);
      return subtle.importKey("jwk", pick("kty", "crv", "x"), { name: "Ed25519" }, true, ["verify"]);
    case "EC":
      if (jwk["crv"] !== "P-256" && jwk["crv"] !== "P-384")
        throw new Error(`EC curve ${String(jwk["crv"])} is not supported (P-256, P-384 are)`);
      return subtle.importKey("jwk", pick("kty", "crv", "x", "y"), { name: "ECDSA", namedCurve: jwk["crv"] }, true, [
        "verify",
      ]);
    case "RSA": {
      const pkcs1 = jwkAlg === "RS256" || (jwkAlg === undefined && alg === "rsa-v1_5-sha256");
      return subtle.importKey(
        "jwk",
        pick("kty", "n", "e"),
        pkcs1 ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } : { name: "RSA-PSS", hash: "SHA-512" },
        true,
        ["verify"],
      );
    }
    case "oct":
      return subtle.importKey("jwk", pick("kty", "k"), { name: "HMAC", hash: "SHA-256" }, true, ["verify"]);
    default:
      throw new Error(`key type ${String(jwk["kty"])} is not supported`);
  }
}

/**
 * Keys from G4 key records by keyid: a receiver configuration's `keyRecords`,
 * or the records a simulated world publishes. `where` names them in the
 * signature line (`the key record of <keyid> in <where>`).
 */
export function keyRecordKeys(records: Readonly<Record<string, string>>, where: string): LintKeys {
  return txtRecordKeys((keyid) => {
    const record = Object.hasOwn(records, keyid) ? records[keyid] : undefined;
    return record === undefined ? [] : [record];
  }, where);
}

/**
 * Keys from the TXT records at each keyid, as `lookup` finds them (a
 * simulated DNS zone at the time of a recorded request, say): the first
 * record that is a G4 key record gives the key.
 */
export function txtRecordKeys(
  lookup: (keyid: string) => readonly string[] | Promise<readonly string[]>,
  where: string,
): LintKeys {
  return {
    async lookup(keyid) {
      if (keyid === undefined) return undefined;
      for (const record of await lookup(keyid)) {
        const parsed = parseKeyRecord(record);
        if (!parsed.ok) continue;
        return {
          key: await importPublicKeyRaw(parsed.value.publicKey),
          source: `the key record of ${keyid} in ${where}`,
        };
      }
      return undefined;
    },
  };
}

/** Tries each key set in turn. */
export function combineKeys(sets: readonly LintKeys[]): LintKeys {
  return {
    async lookup(keyid, alg) {
      for (const set of sets) {
        const found = await set.lookup(keyid, alg);
        if (found !== undefined) return found;
      }
      return undefined;
    },
  };
}
