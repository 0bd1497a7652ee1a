import { describe, expect, it } from "vitest";
import vectors from "./fixtures/rfc9421-vectors.json" with { type: "json" };
import { base64ToBytes, bytesToBase64, bytesToHex } from "./base64.ts";
import {
  createSignatureBase,
  fromRequest,
  fromResponse,
  parseSignature,
  parseSignatureInput,
  serializeSignature,
  serializeSignatureInput,
  signRequest,
  signatureAlgorithmOfKey,
  signatureFields,
  signatureBaseBytes,
  verifyRequestSignature,
} from "./signature.ts";
import type { ComponentInput, HttpMessageView, SignatureAlgorithm, VerifyOptions } from "./signature.ts";

// ---------------------------------------------------------------------------
// Fixtures: the RFC 9421 Appendix B messages, keys and examples

type Header = readonly [string, string];

const testRequest: HttpMessageView = {
  method: vectors.messages["test-request"].method ?? "POST",
  // B.2 gives no scheme; https is what every request of the service uses, and no example covers it.
  url: `https://${vectors.messages["test-request"].authority}${vectors.messages["test-request"].request_target}`,
  headers: vectors.messages["test-request"].headers as unknown as Header[],
};

const testResponse: HttpMessageView = {
  status: vectors.messages["test-response"].status ?? 200,
  headers: vectors.messages["test-response"].headers as unknown as Header[],
};

type Example = (typeof vectors.examples)[number];

function example(id: string): Example {
  const found = vectors.examples.find((e) => e.id === id);
  if (found === undefined) throw new Error(`no example ${id}`);
  return found;
}

/** An HTTP/1.1 message as printed in the RFC (request line, field lines, optional body), as a view over https. */
function messageFromLines(lines: readonly string[]): HttpMessageView {
  const [requestLine = "", ...rest] = lines;
  const [method = "", target = ""] = requestLine.split(" ");
  const headers: Header[] = [];
  for (const line of rest) {
    if (line === "") break;
    const colon = line.indexOf(":");
    headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  const host = headers.find(([name]) => name.toLowerCase() === "host")?.[1] ?? "";
  return { method, url: `https://${host}${target}`, headers };
}

function withSignature(message: HttpMessageView, ex: Example): HttpMessageView {
  return {
    ...message,
    headers: [
      ...message.headers,
      ["Signature-Input", ex.signature_input_header_value],
      ["Signature", ex.signature_header_value],
    ],
  };
}

function baseOf(ex: Example): HttpMessageView {
  return ex.message === "test-response" ? testResponse : testRequest;
}

async function sha256Hex(text: string): Promise<string> {
  return bytesToHex(new Uint8Array(await crypto.subtle.digest("SHA-256", signatureBaseBytes(text))));
}

const keys = vectors.keys;

async function verificationKey(keyid: string | undefined): Promise<CryptoKey | undefined> {
  switch (keyid) {
    case "test-key-rsa-pss": {
      // WebCrypto rejects this key's PKCS#8 (it carries the RSASSA-PSS OID), so it comes from the JWK.
      const { n, e } = keys["test-key-rsa-pss"].jwk;
      return crypto.subtle.importKey("jwk", { kty: "RSA", n, e }, { name: "RSA-PSS", hash: "SHA-512" }, false, [
        "verify",
      ]);
    }
    case "test-key-ecc-p256": {
      const { x, y } = keys["test-key-ecc-p256"].jwk;
      return crypto.subtle.importKey(
        "jwk",
        { kty: "EC", crv: "P-256", x, y },
        { name: "ECDSA", namedCurve: "P-256" },
        false,
        ["verify"],
      );
    }
    case "test-key-ed25519": {
      const { x } = keys["test-key-ed25519"].jwk;
      return crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x }, "Ed25519", false, ["verify"]);
    }
    case "test-shared-secret":
      return hmacKey(["verify"]);
    default:
      return undefined;
  }
}

async function hmacKey(usages: KeyUsage[]): Promise<CryptoKey> {
  const secret = base64ToBytes(keys["test-shared-secret"].base64);
  if (secret === undefined) throw new Error("bad shared secret in the fixture");
  return crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, usages);
}

async function ed25519PrivateKey(): Promise<CryptoKey> {
  const { x, d } = keys["test-key-ed25519"].jwk;
  return crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x, d }, "Ed25519", false, ["sign"]);
}

const lookup: VerifyOptions["keyLookup"] = (keyid) => verificationKey(keyid);

const b2Examples = vectors.examples.filter((e) => e.id.startsWith("B.2."));

// ---------------------------------------------------------------------------

describe("createSignatureBase, RFC 9421 Appendix B.2", () => {
  it.each(b2Examples.map((e) => [e.id, e] as const))(
    "AUTH-1, RFC 9421 %s: the signature base is rebuilt byte for byte from the test message and the parameters",
    async (_id, ex) => {
      const input = parseSignatureInput(ex.signature_input_header_value);
      expect(input.ok).toBe(true);
      if (!input.ok) return;
      const member = input.value.get(ex.label);
      expect(member).toBeDefined();
      if (member === undefined) return;
      const built = createSignatureBase(baseOf(ex), member.components, member.params);
      expect(built.ok).toBe(true);
      if (!built.ok) return;
      expect(built.value.base).toBe(ex.signature_base);
      expect(built.value.base.split("\n")).toEqual(ex.signature_base_lines);
      expect(signatureBaseBytes(built.value.base).length).toBe(ex.signature_base_length_bytes);
      expect(await sha256Hex(built.value.base)).toBe(ex.signature_base_sha256_hex);
      expect(built.value.signatureParams).toBe(ex.signature_params);
    },
  );

  it("AUTH-1, RFC 9421 B.2.2: components written by hand give the same base as the parsed Signature-Input", () => {
    const components: ComponentInput[] = [
      "@authority",
      "content-digest",
      { name: "@query-param", params: { name: "Pet" } },
    ];
    const built = createSignatureBase(testRequest, components, {
      created: 1618884473,
      keyid: "test-key-rsa-pss",
      tag: "header-example",
    });
    expect(built.ok && built.value.base).toBe(example("B.2.2").signature_base);
  });

  it("AUTH-1, RFC 9421 B.2.1: no covered components gives only the @signature-params line", () => {
    const built = createSignatureBase(testRequest, [], {
      created: 1618884473,
      keyid: "test-key-rsa-pss",
      nonce: "b3k2pp5k7z-50gnwp.yemd",
    });
    expect(built.ok && built.value.base).toBe(example("B.2.1").signature_base);
  });

  it("AUTH-1, RFC 9421 B.3: the proxy's base covers the rewritten authority and the Client-Cert field", async () => {
    const ex = example("B.3");
    const message = messageFromLines(ex.message_lines ?? []);
    const input = parseSignatureInput(ex.signature_input_header_value);
    expect(input.ok).toBe(true);
    if (!input.ok) return;
    const member = input.value.get("ttrp");
    const built = createSignatureBase(message, member?.components ?? [], member?.params ?? {});
    expect(built.ok && built.value.base).toBe(ex.signature_base);
    expect(built.ok && (await sha256Hex(built.value.base))).toBe(ex.signature_base_sha256_hex);
  });

  it('AUTH-1, RFC 9421 B.4, §2.1: two Accept field lines combine as one value joined with ", "', () => {
    const ex = example("B.4");
    const first = ex.message_variants?.[0]?.message_lines ?? [];
    const built = createSignatureBase(messageFromLines(first), ["@method", "@path", "@authority", "accept"], {
      created: 1618884473,
      keyid: "test-key-ed25519",
    });
    expect(built.ok && built.value.base).toBe(ex.signature_base);
  });
});

describe("signatureBaseBytes", () => {
  it("AUTH-1: each character of the base is one octet, its code's low byte, ASCII or not", () => {
    for (const base of [
      "",
      '"@method": POST\n"@signature-params": ("@method");keyid="k"',
      "caf\u00e9 \u2603 \ud83d\ude00",
    ]) {
      expect([...signatureBaseBytes(base)]).toEqual(
        Array.from({ length: base.length }, (_, i) => base.charCodeAt(i) & 0xff),
      );
      expect(signatureBaseBytes(base)).toHaveLength(base.length);
    }
  });
});

describe("component values, RFC 9421 §2.1 and §2.2", () => {
  const fieldMessage: HttpMessageView = {
    method: "GET",
    url: "https://www.example.com/",
    headers: [
      ["Host", "www.example.com"],
      ["Date", "Tue, 20 Apr 2021 02:07:56 GMT"],
      ["X-OWS-Header", "   Leading and trailing whitespace.   "],
      ["X-Obs-Fold-Header", "Obsolete\r\n    line folding."],
      ["Cache-Control", "max-age=60"],
      ["Cache-Control", "   must-revalidate"],
      ["Example-Dict", " a=1,    b=2;x=1;y=2,   c=(a   b   c)"],
      ["X-Empty-Header", ""],
      ["Example-Header", "value, with, lots"],
      ["Example-Header", "of, commas"],
      ["Example-Single", "value, with, lots, of, commas"],
    ],
  };

  function lines(message: HttpMessageView, components: ComponentInput[]): string[] {
    const built = createSignatureBase(message, components, {});
    if (!built.ok) throw new Error(built.violations.map((v) => v.message).join("; "));
    return built.value.base.split("\n").slice(0, -1);
  }

  it('AUTH-1, RFC 9421 §2.1: field values are trimmed, unfolded and repeated lines joined with ", "', () => {
    expect(
      lines(fieldMessage, ["host", "date", "x-ows-header", "x-obs-fold-header", "cache-control", "example-dict"]),
    ).toEqual([
      '"host": www.example.com',
      '"date": Tue, 20 Apr 2021 02:07:56 GMT',
      '"x-ows-header": Leading and trailing whitespace.',
      '"x-obs-fold-header": Obsolete line folding.',
      '"cache-control": max-age=60, must-revalidate',
      '"example-dict": a=1,    b=2;x=1;y=2,   c=(a   b   c)',
    ]);
  });

  it("AUTH-1, RFC 9421 §2.1: an empty field is signed as the empty string after the colon and space", () => {
    expect(lines(fieldMessage, ["x-empty-header"])).toEqual(['"x-empty-header": ']);
  });

  it("AUTH-1, RFC 9421 §2.1.1: sf re-serializes a known dictionary strictly", () => {
    expect(lines(fieldMessage, [{ name: "example-dict", params: { sf: true } }])).toEqual([
      '"example-dict";sf: a=1, b=2;x=1;y=2, c=(a b c)',
    ]);
  });

  it("AUTH-1, RFC 9421 §2.1.2: key selects one dictionary member, serialized as an item or inner list", () => {
    const message: HttpMessageView = {
      ...fieldMessage,
      headers: [["Example-Dict", " a=1, b=2;x=1;y=2, c=(a   b    c), d"]],
    };
    expect(
      lines(message, [
        { name: "example-dict", params: { key: "a" } },
        { name: "example-dict", params: { key: "d" } },
        { name: "example-dict", params: { key: "b" } },
        { name: "example-dict", params: { key: "c" } },
      ]),
    ).toEqual([
      '"example-dict";key="a": 1',
      '"example-dict";key="d": ?1',
      '"example-dict";key="b": 2;x=1;y=2',
      '"example-dict";key="c": (a b c)',
    ]);
  });

  it("AUTH-1, RFC 9421 §2.1.3: bs wraps each field line as a byte sequence, so line boundaries count", () => {
    expect(lines(fieldMessage, [{ name: "example-header", params: { bs: true } }])).toEqual([
      '"example-header";bs: :dmFsdWUsIHdpdGgsIGxvdHM=:, :b2YsIGNvbW1hcw==:',
    ]);
    expect(lines(fieldMessage, [{ name: "example-single", params: { bs: true } }])).toEqual([
      '"example-single";bs: :dmFsdWUsIHdpdGgsIGxvdHMsIG9mLCBjb21tYXM=:',
    ]);
  });

  const request: HttpMessageView = {
    method: "POST",
    url: "https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman",
    headers: [["Host", "www.example.com"]],
  };

  it("AUTH-1, RFC 9421 §2.2.1–2.2.7: derived components of a request", () => {
    expect(
      lines(request, ["@method", "@target-uri", "@authority", "@scheme", "@request-target", "@path", "@query"]),
    ).toEqual([
      '"@method": POST',
      '"@target-uri": https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman',
      '"@authority": www.example.com',
      '"@scheme": https',
      '"@request-target": /path?param=value&foo=bar&baz=bat%2Dman',
      '"@path": /path',
      '"@query": ?param=value&foo=bar&baz=bat%2Dman',
    ]);
  });

  it("AUTH-1, RFC 9421 §2.2.3, §2.2.6, §2.2.7: authority lowercased without default port, empty path /, absent query ?", () => {
    const bare: HttpMessageView = { method: "GET", url: "https://WWW.Example.COM:443", headers: [] };
    expect(lines(bare, ["@authority", "@path", "@query"])).toEqual([
      '"@authority": www.example.com',
      '"@path": /',
      '"@query": ?',
    ]);
    const port: HttpMessageView = { method: "GET", url: "http://example.com:8080/x?queryString", headers: [] };
    expect(lines(port, ["@authority", "@scheme", "@query"])).toEqual([
      '"@authority": example.com:8080',
      '"@scheme": http',
      '"@query": ?queryString',
    ]);
  });

  it("AUTH-1, RFC 9421 §2.2.8: query parameters are decoded then percent-encoded again", () => {
    const q: HttpMessageView = {
      method: "GET",
      url: "https://www.example.com/path?param=value&foo=bar&baz=batman&qux=",
      headers: [],
    };
    expect(
      lines(q, [
        { name: "@query-param", params: { name: "baz" } },
        { name: "@query-param", params: { name: "qux" } },
        { name: "@query-param", params: { name: "param" } },
      ]),
    ).toEqual([
      '"@query-param";name="baz": batman',
      '"@query-param";name="qux": ',
      '"@query-param";name="param": value',
    ]);
    const encoded: HttpMessageView = {
      method: "GET",
      url: "https://example.com/parameters?var=this%20is%20a%20big%0Avalue&bar=with+plus+whitespace&fa%C3%A7ade%22%3A%20=something",
      headers: [],
    };
    expect(
      lines(encoded, [
        { name: "@query-param", params: { name: "var" } },
        { name: "@query-param", params: { name: "bar" } },
        { name: "@query-param", params: { name: "fa%C3%A7ade%22%3A%20" } },
      ]),
    ).toEqual([
      '"@query-param";name="var": this%20is%20a%20big%0Avalue',
      '"@query-param";name="bar": with%20plus%20whitespace',
      '"@query-param";name="fa%C3%A7ade%22%3A%20": something',
    ]);
  });

  it("AUTH-1, RFC 9421 §2.2.9, §2.4: @status of a response, and req components from its request", () => {
    const response: HttpMessageView = { status: 503, headers: [["Content-Type", "text/plain"]], request };
    expect(lines(response, ["@status", { name: "@method", params: { req: true } }, "content-type"])).toEqual([
      '"@status": 503',
      '"@method";req: POST',
      '"content-type": text/plain',
    ]);
  });

  it.each<[string, HttpMessageView, ComponentInput[], "AUTH-5" | "POST-4"]>([
    ["a field the message lacks", request, ["content-digest"], "AUTH-5"],
    ["a dictionary key the field lacks", fieldMessage, [{ name: "example-dict", params: { key: "zz" } }], "AUTH-5"],
    ["a query parameter the URI lacks", request, [{ name: "@query-param", params: { name: "nope" } }], "AUTH-5"],
    [
      "a repeated query parameter",
      { ...request, url: "https://a.example/?x=1&x=2" },
      [{ name: "@query-param", params: { name: "x" } }],
      "POST-4",
    ],
    ["an uppercase field name", fieldMessage, ["Host"], "POST-4"],
    ["an unknown derived component", request, ["@fragment"], "POST-4"],
    ["@signature-params as a component", request, ["@signature-params"], "POST-4"],
    ["@status on a request", request, ["@status"], "POST-4"],
    ["@method on a response without req", { status: 200, headers: [] }, ["@method"], "POST-4"],
    ["a repeated component", request, ["@method", "@method"], "POST-4"],
    [
      "parameters differing only in order",
      fieldMessage,
      [
        { name: "example-dict", params: { sf: true, req: true } },
        { name: "example-dict", params: { req: true, sf: true } },
      ],
      "POST-4",
    ],
    ["bs together with sf", fieldMessage, [{ name: "example-header", params: { bs: true, sf: true } }], "POST-4"],
    ["sf on a field of unknown type", fieldMessage, [{ name: "host", params: { sf: true } }], "POST-4"],
    ["a trailer", fieldMessage, [{ name: "host", params: { tr: true } }], "POST-4"],
    ["an unregistered component parameter", fieldMessage, [{ name: "host", params: { zz: true } }], "POST-4"],
    ["name on a field", fieldMessage, [{ name: "host", params: { name: "x" } }], "POST-4"],
    ["a target URI that is not absolute", { method: "GET", url: "/relative", headers: [] }, ["@path"], "POST-4"],
  ])(
    "AUTH-5, RFC 9421 §2, §2.5: %s makes the signature base fail with a violation",
    (_name, message, components, rule) => {
      const built = createSignatureBase(message, components, { created: 1 });
      expect(built.ok).toBe(false);
      if (!built.ok) {
        expect(built.violations.length).toBeGreaterThan(0);
        expect(built.violations[0]?.rule).toBe(rule);
        expect(built.violations[0]?.path).toBe("Signature-Input");
      }
    },
  );

  it("POST-4, RFC 9421 §2.3: created must be an integer, keyid a string", () => {
    const built = createSignatureBase(request, [], { created: 1.5, keyid: 7 as unknown as string });
    expect(built.ok).toBe(false);
    if (!built.ok)
      expect(built.violations.map((v) => v.message)).toEqual([
        expect.stringContaining("created must be a non-negative integer"),
        expect.stringContaining("keyid must be a string"),
      ]);
  });
});

describe("Signature-Input and Signature fields, RFC 9421 §4", () => {
  it.each(vectors.examples.map((e) => [e.id, e] as const))(
    "POST-4, POST-3, RFC 9421 %s: both fields parse and serialize back to the RFC's text",
    (_id, ex) => {
      const input = parseSignatureInput(ex.signature_input_header_value);
      const signature = parseSignature(ex.signature_header_value);
      expect(input.ok && signature.ok).toBe(true);
      if (!input.ok || !signature.ok) return;
      const member = input.value.get(ex.label);
      expect(member?.signatureParams).toBe(ex.signature_params);
      expect(member?.params.created).toBe(1618884473);
      expect(member?.params.keyid).toBe(ex.keyid);
      const serialized = serializeSignatureInput([
        { label: ex.label, components: member?.components ?? [], params: member?.params ?? {} },
      ]);
      expect(serialized.ok && serialized.value).toBe(ex.signature_input_header_value);
      const bytes = signature.value.get(ex.label) ?? new Uint8Array();
      expect(bytesToBase64(bytes)).toBe(ex.signature_b64);
      expect(serializeSignature(signature.value)).toBe(ex.signature_header_value);
    },
  );

  it("POST-4, RFC 9421 §4.3: several labels in one field are kept in order", () => {
    const header = [example("B.2.1"), example("B.2.6"), example("B.2.5")]
      .map((e) => e.signature_input_header_value)
      .join(", ");
    const input = parseSignatureInput(header);
    expect(input.ok && [...input.value.keys()]).toEqual(["sig-b21", "sig-b26", "sig-b25"]);
    const signatures = parseSignature(
      [example("B.2.1"), example("B.2.6")].map((e) => e.signature_header_value).join(", "),
    );
    expect(signatures.ok && signatures.value.get("sig-b26")?.length).toBe(64);
  });

  it("POST-4, RFC 9421 §2.3: unknown signature parameters are kept and re-serialized in order", () => {
    const input = parseSignatureInput('s=("@method");created=1;x-extra=?1;keyid="k"');
    expect(input.ok).toBe(true);
    if (!input.ok) return;
    expect(input.value.get("s")?.signatureParams).toBe('("@method");created=1;x-extra;keyid="k"');
    expect(input.value.get("s")?.params).toEqual({ created: 1, keyid: "k" });
  });

  it.each([
    ["not a dictionary", "sig1"],
    ["an empty field", ""],
    ["a member that is not an inner list", 'sig1="@method";created=1'],
    ["a component that is a token", "sig1=(@method);created=1"],
    ["created as a string", 'sig1=("@method");created="1618884473"'],
    ["created negative", 'sig1=("@method");created=-5'],
    ["created as a decimal", 'sig1=("@method");created=1.5'],
    ["keyid as a token", 'sig1=("@method");keyid=abc'],
    ["a component parameter that is an integer", 'sig1=("@method";x=1);created=1'],
  ])("POST-4, RFC 9421 §4.1: %s is malformed", (_name, text) => {
    const parsed = parseSignatureInput(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.violations.every((v) => v.rule === "POST-4" && v.path === "Signature-Input")).toBe(true);
  });

  it.each([
    ["a token", "sig1=abc"],
    ["an inner list", "sig1=(:AAAA:)"],
    ["base64 with a typo", "sig1=:AAA==:"],
    ["an empty field", ""],
  ])("POST-3, RFC 9421 §4.2: a Signature member that is %s is malformed", (_name, text) => {
    const parsed = parseSignature(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.violations[0]).toMatchObject({ rule: "POST-3", path: "Signature" });
  });
});

describe("verifyRequestSignature, RFC 9421 Appendix B", () => {
  const algorithms: Record<string, SignatureAlgorithm> = {
    "B.2.1": "rsa-pss-sha512",
    "B.2.2": "rsa-pss-sha512",
    "B.2.3": "rsa-pss-sha512",
    "B.2.4": "ecdsa-p256-sha256",
    "B.2.5": "hmac-sha256",
    "B.2.6": "ed25519",
  };

  it.each(b2Examples.map((e) => [e.id, e] as const))(
    "AUTH-1, AUTH-5, RFC 9421 %s: the RFC's signature verifies",
    async (_id, ex) => {
      const result = await verifyRequestSignature(withSignature(baseOf(ex), ex), { keyLookup: lookup });
      expect(result).toMatchObject({
        ok: true,
        label: ex.label,
        algorithm: algorithms[ex.id],
        base: ex.signature_base,
      });
      if (result.ok) expect(result.params.keyid).toBe(ex.keyid);
    },
  );

  it("AUTH-1, RFC 9421 B.3: the TLS-terminating proxy's ECDSA signature verifies", async () => {
    const ex = example("B.3");
    const result = await verifyRequestSignature(messageFromLines(ex.message_lines ?? []), { keyLookup: lookup });
    expect(result).toMatchObject({ ok: true, label: "ttrp", algorithm: "ecdsa-p256-sha256" });
    if (result.ok)
      expect(result.components.map((c) => c.name)).toEqual(["@path", "@query", "@method", "@authority", "client-cert"]);
  });

  it.each((example("B.4").message_variants ?? []).map((v, i) => [i + 1, v.expected_valid, v] as const))(
    "AUTH-5, RFC 9421 B.4: transformed message %i verifies: %s",
    async (_n, expected, variant) => {
      const result = await verifyRequestSignature(messageFromLines(variant.message_lines), { keyLookup: lookup });
      expect(result.ok).toBe(expected);
      if (!result.ok) expect(result.reason).toBe("bad-signature");
    },
  );

  it("AUTH-5, RFC 9421 B.2.6: the same base plus a trailing space or a trailing LF does not verify", async () => {
    const ex = example("B.2.6");
    const key = await verificationKey("test-key-ed25519");
    if (key === undefined) throw new Error("no key");
    const signature = base64ToBytes(ex.signature_b64) ?? new Uint8Array();
    const verify = (base: string) => crypto.subtle.verify("Ed25519", key, signature, signatureBaseBytes(base));
    expect(await verify(ex.signature_base)).toBe(true);
    expect(await verify(`${ex.signature_base} `)).toBe(false);
    expect(await verify(`${ex.signature_base}\n`)).toBe(false);
  });

  it("AUTH-5, RFC 9421 B.2.6: a changed covered field fails as bad-signature", async () => {
    const ex = example("B.2.6");
    const tampered = withSignature(
      { ...testRequest, headers: testRequest.headers.map(([n, v]) => [n, n === "Content-Length" ? "19" : v] as const) },
      ex,
    );
    const result = await verifyRequestSignature(tampered, { keyLookup: lookup });
    expect(result).toMatchObject({ ok: false, reason: "bad-signature", label: "sig-b26" });
    if (!result.ok) expect(result.violations[0]?.rule).toBe("AUTH-5");
  });

  it("AUTH-5, RFC 9421 §3.2: a covered field stripped from the message fails as missing-component", async () => {
    const ex = example("B.2.6");
    const stripped = withSignature({ ...testRequest, headers: testRequest.headers.filter(([n]) => n !== "Date") }, ex);
    const result = await verifyRequestSignature(stripped, { keyLookup: lookup });
    expect(result).toMatchObject({ ok: false, reason: "missing-component" });
    if (!result.ok) expect(result.violations[0]).toMatchObject({ rule: "AUTH-5", path: "Signature-Input" });
  });

  it("AUTH-5, RFC 9421 §3.2: an unknown keyid fails as unknown-key", async () => {
    const ex = example("B.2.6");
    const result = await verifyRequestSignature(withSignature(testRequest, ex), {
      keyLookup: () => Promise.resolve(undefined),
    });
    expect(result).toMatchObject({ ok: false, reason: "unknown-key", label: "sig-b26" });
  });

  it("AUTH-5, RFC 9421 §3.2 step 7: an alg parameter that disagrees with the key fails as algorithm-mismatch", async () => {
    const key = await ed25519PrivateKey();
    const signed = await signRequest(testRequest, {
      key,
      keyid: "test-key-ed25519",
      components: ["@method"],
      created: 1618884473,
    });
    const headers: Header[] = [
      ["Signature-Input", signed.signatureInput.replace(";keyid", ';alg="rsa-pss-sha512";keyid')],
      ["Signature", signed.signature],
    ];
    const result = await verifyRequestSignature({ ...testRequest, headers }, { keyLookup: lookup });
    expect(result).toMatchObject({ ok: false, reason: "algorithm-mismatch" });
  });

  it("AUTH-5, RFC 9421 §3.2 step 7: a key of an algorithm the verifier does not accept fails as algorithm-not-allowed", async () => {
    const ex = example("B.2.5");
    const result = await verifyRequestSignature(withSignature(testRequest, ex), {
      keyLookup: lookup,
      algorithms: ["ed25519"],
    });
    expect(result).toMatchObject({ ok: false, reason: "algorithm-not-allowed" });
  });

  it("AUTH-5, RFC 9421 §3.2: a key of the wrong type for the signature fails as bad-signature", async () => {
    const ex = example("B.2.6");
    const result = await verifyRequestSignature(withSignature(testRequest, ex), {
      keyLookup: () => verificationKey("test-key-ecc-p256"),
    });
    expect(result).toMatchObject({ ok: false, reason: "bad-signature" });
  });

  it("AUTH-1, RFC 9421 §3.2: no signature fields at all is no-signature; only one of them is malformed", async () => {
    expect(await verifyRequestSignature(testRequest, { keyLookup: lookup })).toMatchObject({
      ok: false,
      reason: "no-signature",
    });
    const ex = example("B.2.6");
    const onlyInput = {
      ...testRequest,
      headers: [...testRequest.headers, ["Signature-Input", ex.signature_input_header_value] as const],
    };
    const result = await verifyRequestSignature(onlyInput, { keyLookup: lookup });
    expect(result).toMatchObject({ ok: false, reason: "malformed" });
    if (!result.ok) expect(result.violations[0]).toMatchObject({ rule: "POST-3", path: "Signature" });
  });

  it("POST-4, RFC 9421 §3.2: a label that is not there fails as label-not-found", async () => {
    const result = await verifyRequestSignature(withSignature(testRequest, example("B.2.6")), {
      keyLookup: lookup,
      label: "sig1",
    });
    expect(result).toMatchObject({ ok: false, reason: "label-not-found", label: "sig1" });
  });

  it("AUTH-5, RFC 9421 §3.2 step 6: an expires in the past fails as expired when the clock is given", async () => {
    const key = await ed25519PrivateKey();
    const signed = await signRequest(testRequest, {
      key,
      keyid: "test-key-ed25519",
      components: ["@method"],
      created: 100,
      expires: 200,
    });
    const message = { ...testRequest, headers: [...signed.headers] };
    expect(await verifyRequestSignature(message, { keyLookup: lookup, nowS: 150 })).toMatchObject({ ok: true });
    expect(await verifyRequestSignature(message, { keyLookup: lookup, nowS: 201 })).toMatchObject({
      ok: false,
      reason: "expired",
    });
  });

  it("AUTH-1, RFC 9421 §4.3: with several signatures each label verifies on its own", async () => {
    const both: HttpMessageView = {
      ...testRequest,
      headers: [
        ...testRequest.headers,
        [
          "Signature-Input",
          `${example("B.2.5").signature_input_header_value}, ${example("B.2.6").signature_input_header_value}`,
        ],
        ["Signature", `${example("B.2.5").signature_header_value}, ${example("B.2.6").signature_header_value}`],
      ],
    };
    expect(await verifyRequestSignature(both, { keyLookup: lookup })).toMatchObject({ ok: true, label: "sig-b25" });
    expect(await verifyRequestSignature(both, { keyLookup: lookup, label: "sig-b26" })).toMatchObject({
      ok: true,
      label: "sig-b26",
    });
  });

  it("AUTH-1, RFC 9421 B.2.4: a fetch Response verifies through fromResponse", async () => {
    const ex = example("B.2.4");
    const response = new Response(vectors.messages["test-response"].body, {
      status: 200,
      headers: [
        ...(testResponse.headers as [string, string][]),
        ["Signature-Input", ex.signature_input_header_value],
        ["Signature", ex.signature_header_value],
      ],
    });
    expect(fromResponse(response).status).toBe(200);
    expect(await verifyRequestSignature(response, { keyLookup: lookup })).toMatchObject({
      ok: true,
      algorithm: "ecdsa-p256-sha256",
    });
  });
});

describe("signRequest", () => {
  it("AUTH-1, RFC 9421 B.2.6: signing the test request with the Ed25519 JWK gives exactly the RFC's signature", async () => {
    const ex = example("B.2.6");
    const signed = await signRequest(testRequest, {
      key: await ed25519PrivateKey(),
      keyid: "test-key-ed25519",
      label: "sig-b26",
      components: ["date", "@method", "@path", "@authority", "content-type", "content-length"],
      created: 1618884473,
    });
    expect(signed.signatureInput).toBe(ex.signature_input_header_value);
    expect(signed.signature).toBe(ex.signature_header_value);
    expect(signed.headers.get("signature")).toBe(ex.signature_header_value);
    expect(signed.headers.get("content-digest")).toBe(testRequest.headers[3]?.[1]);
  });

  it("AUTH-1, RFC 9421 B.2.6: signatureFields gives the members signRequest adds, without a Headers; a label in use is refused the same way", async () => {
    const ex = example("B.2.6");
    const options = {
      key: await ed25519PrivateKey(),
      keyid: "test-key-ed25519",
      label: "sig-b26",
      components: ["date", "@method", "@path", "@authority", "content-type", "content-length"],
      created: 1618884473,
    };
    const fields = await signatureFields(testRequest, options);
    expect(fields).toEqual({ signatureInput: ex.signature_input_header_value, signature: ex.signature_header_value });
    const signedBefore = {
      ...testRequest,
      headers: [...testRequest.headers, ["Signature-Input", ` ${fields.signatureInput}`]],
    };
    await expect(signatureFields(signedBefore as HttpMessageView, options)).rejects.toThrow(/already used/);
    await expect(signRequest(signedBefore as HttpMessageView, options)).rejects.toThrow(/already used/);
  });

  it("AUTH-1, RFC 9421 B.2.5: signing with the shared HMAC secret gives exactly the RFC's signature", async () => {
    const ex = example("B.2.5");
    const signed = await signRequest(testRequest, {
      key: await hmacKey(["sign"]),
      keyid: "test-shared-secret",
      label: "sig-b25",
      components: ["date", "@authority", "content-type"],
      created: 1618884473,
    });
    expect(signed.signature).toBe(ex.signature_header_value);
  });

  it("AUTH-1, RFC 9421 B.2.2: parameters are written created, keyid, then tag, as in the RFC", async () => {
    const pair = (await crypto.subtle.generateKey(
      { name: "RSA-PSS", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-512" },
      false,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const signed = await signRequest(testRequest, {
      key: pair.privateKey,
      keyid: "test-key-rsa-pss",
      label: "sig-b22",
      components: ["@authority", "content-digest", { name: "@query-param", params: { name: "Pet" } }],
      created: 1618884473,
      tag: "header-example",
    });
    expect(signed.signatureInput).toBe(example("B.2.2").signature_input_header_value);
    const verified = await verifyRequestSignature(
      { ...testRequest, headers: [...signed.headers] },
      {
        keyLookup: () => Promise.resolve(pair.publicKey),
      },
    );
    expect(verified).toMatchObject({ ok: true, algorithm: "rsa-pss-sha512" });
  });

  it("AUTH-1, RFC 9421 §3.1: a fetch Request signed and verified round-trips, a second label is appended", async () => {
    const pair = (await crypto.subtle.generateKey("Ed25519", false, ["sign", "verify"])) as CryptoKeyPair;
    const request = new Request("https://mx.example.net/v1/messages", {
      method: "POST",
      headers: { "Content-Type": "multipart/mixed; boundary=x", "Idempotency-Key": "abc" },
      body: "hi",
    });
    const first = await signRequest(request, {
      key: pair.privateKey,
      keyid: "k1",
      components: ["@method", "@target-uri", "content-type", "idempotency-key"],
      created: 1700000000,
    });
    const signedRequest = new Request(request, { headers: first.headers });
    const second = await signRequest(signedRequest, {
      key: pair.privateKey,
      keyid: "k2",
      label: "sig2",
      components: ["@method"],
      created: 1700000001,
    });
    const twice = new Request(signedRequest, { headers: second.headers });
    expect(twice.headers.get("signature-input")).toBe(`${first.signatureInput}, ${second.signatureInput}`);
    const keyLookup = () => Promise.resolve(pair.publicKey);
    expect(await verifyRequestSignature(twice, { keyLookup })).toMatchObject({
      ok: true,
      label: "sig1",
      params: { keyid: "k1" },
    });
    expect(await verifyRequestSignature(twice, { keyLookup, label: "sig2" })).toMatchObject({
      ok: true,
      params: { keyid: "k2" },
    });
    expect(fromRequest(twice).url).toBe("https://mx.example.net/v1/messages");
  });

  it("AUTH-5, RFC 9421 §3.1: signing what the message lacks, a taken label, or a mismatching alg throws ProtocolError", async () => {
    const key = await ed25519PrivateKey();
    await expect(
      signRequest(testRequest, { key, keyid: "k", components: ["idempotency-key"], created: 1 }),
    ).rejects.toThrow(/idempotency-key/);
    const signed = withSignature(testRequest, example("B.2.6"));
    await expect(
      signRequest(signed, { key, keyid: "k", label: "sig-b26", components: [], created: 1 }),
    ).rejects.toThrow(/already used/);
    await expect(
      signRequest(testRequest, { key, keyid: "k", components: [], created: 1, alg: "hmac-sha256" }),
    ).rejects.toThrow(/does not match/);
  });

  it("AUTH-1, RFC 9421 §3.3: the algorithm is read from the key", async () => {
    expect(signatureAlgorithmOfKey(await ed25519PrivateKey())).toBe("ed25519");
    expect(signatureAlgorithmOfKey(await hmacKey(["sign"]))).toBe("hmac-sha256");
    const ecKey = await verificationKey("test-key-ecc-p256");
    expect(ecKey && signatureAlgorithmOfKey(ecKey)).toBe("ecdsa-p256-sha256");
    const pssKey = await verificationKey("test-key-rsa-pss");
    expect(pssKey && signatureAlgorithmOfKey(pssKey)).toBe("rsa-pss-sha512");
    const { n, e } = keys["test-key-rsa"].jwk;
    const pss256 = await crypto.subtle.importKey(
      "jwk",
      { kty: "RSA", n, e },
      { name: "RSA-PSS", hash: "SHA-256" },
      false,
      ["verify"],
    );
    expect(signatureAlgorithmOfKey(pss256)).toBeUndefined();
  });
});
