import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatRawHttpProblems, parseRawHttpRequest, type RawHttpParse, type RawHttpRequest } from "./rawHttp.ts";

const vectors = JSON.parse(
  readFileSync(new URL("../protocol/fixtures/rfc9421-vectors.json", import.meta.url), "utf8"),
) as {
  messages: { "test-request": { headers: [string, string][]; body: string } };
};
const testRequest = vectors.messages["test-request"];
const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The RFC 9421 B.2 test request, joined with `eol`. */
function b2(eol: string): string {
  return [
    "POST /foo?param=Value&Pet=dog HTTP/1.1",
    ...testRequest.headers.map(([n, v]) => `${n}: ${v}`),
    "",
    testRequest.body,
  ].join(eol);
}

function ok(result: RawHttpParse): RawHttpRequest {
  if (!result.ok) throw new Error(`parse failed: ${JSON.stringify(result.errors)}`);
  return result.value;
}

function errors(result: RawHttpParse): { line: number; message: string }[] {
  if (result.ok) throw new Error("expected errors");
  return [...result.errors];
}

describe("parseRawHttpRequest", () => {
  it("AUTH-1: reads RFC 9421's B.2 test request: request line, field lines in order, Content-Length body", async () => {
    const parsed = ok(parseRawHttpRequest(encode(b2("\r\n"))));
    expect(parsed.method).toBe("POST");
    expect(parsed.target).toBe("/foo?param=Value&Pet=dog");
    expect(parsed.url).toBe("https://example.com/foo?param=Value&Pet=dog");
    expect(parsed.headers).toEqual(testRequest.headers);
    expect(new TextDecoder().decode(parsed.body)).toBe('{"hello": "world"}');
    expect(parsed.bodyLine).toBe(8);
    expect(parsed.warnings).toEqual([]);
    expect(parsed.view).toEqual({ method: "POST", url: parsed.url, headers: testRequest.headers });
    expect(parsed.request.method).toBe("POST");
    expect(parsed.request.headers.get("content-length")).toBe("18");
    expect(await parsed.request.text()).toBe('{"hello": "world"}');
  });

  it("AUTH-1: bare LF line ends are read too, with a warning", () => {
    const parsed = ok(parseRawHttpRequest(encode(b2("\n"))));
    expect(parsed.headers).toEqual(testRequest.headers);
    expect(parsed.body.length).toBe(18);
    expect(parsed.warnings.map((w) => w.message)).toEqual([expect.stringContaining("bare LF")]);
  });

  it("AUTH-1: a newline after the Content-Length body is not part of the body", () => {
    const parsed = ok(parseRawHttpRequest(encode(`${b2("\r\n")}\n`)));
    expect(parsed.body.length).toBe(18);
    expect(parsed.warnings).toEqual([
      { line: 8, message: expect.stringContaining("newline after the body is ignored") },
    ]);
  });

  it("POST-4: obs-fold continuation lines are unfolded with one space", () => {
    const text =
      'POST /v1/messages HTTP/1.1\r\nHost: mx.b.example\r\nSignature-Input: sig1=("@method"\r\n  "@target-uri");created=1\r\nContent-Length: 0\r\n\r\n';
    const parsed = ok(parseRawHttpRequest(encode(text)));
    expect(parsed.headers).toContainEqual(["Signature-Input", 'sig1=("@method" "@target-uri");created=1']);
    expect(parsed.warnings).toEqual([{ line: 4, message: expect.stringContaining("obs-fold") }]);
  });

  it("LIM-13: a chunked body is decoded, extensions and trailers included", async () => {
    const text =
      "POST /v1/messages HTTP/1.1\r\nHost: mx.b.example\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n";
    const parsed = ok(parseRawHttpRequest(encode(text)));
    expect(new TextDecoder().decode(parsed.body)).toBe("hello, world");
    expect(parsed.trailers).toEqual([["X-Trailer", "t"]]);
    expect(await parsed.request.text()).toBe("hello, world");
  });

  it("POST-1: empty lines before the request line are skipped; an absolute-form target is kept", () => {
    const parsed = ok(
      parseRawHttpRequest(
        encode("\r\n\r\nGET https://mx.b.example/v1/capabilities HTTP/1.1\r\nHost: mx.b.example\r\n\r\n"),
      ),
    );
    expect(parsed.url).toBe("https://mx.b.example/v1/capabilities");
    expect(parsed.body.length).toBe(0);
  });

  it("POST-1: without Host the target URI is unknown, unless a default authority is given", () => {
    const text = encode("GET /v1/capabilities HTTP/1.1\r\nAccept: */*\r\n\r\n");
    expect(errors(parseRawHttpRequest(text))).toEqual([{ line: 1, message: expect.stringContaining("no Host field") }]);
    expect(ok(parseRawHttpRequest(text, { defaultAuthority: "mx.b.example:8443" })).url).toBe(
      "https://mx.b.example:8443/v1/capabilities",
    );
  });

  it("ERR-12: a body shorter than Content-Length is an error at the Content-Length line", () => {
    const text = b2("\r\n").replace("Content-Length: 18", "Content-Length: 50");
    expect(errors(parseRawHttpRequest(encode(text)))).toEqual([
      { line: 6, message: "Content-Length is 50 but only 18 bytes follow the header section (line 8 on)" },
    ]);
  });

  it("POST-13: malformed lines are errors with their line numbers, all of them", () => {
    const text =
      "POST /v1/messages HTTP/1.1\r\nHost: mx.b.example\r\nno colon here\r\nBad Name: x\r\nContent-Length : 3\r\nContent-Length: 1, 2\r\n\r\nabc";
    expect(errors(parseRawHttpRequest(encode(text)))).toEqual([
      { line: 3, message: expect.stringContaining("not a header field") },
      { line: 4, message: expect.stringContaining("is not a token") },
      { line: 5, message: expect.stringContaining("whitespace between the field name") },
      { line: 6, message: "Content-Length has different values: 1, 2" },
    ]);
  });

  it("POST-13: a missing request line, an empty file and an unterminated head are errors", () => {
    expect(errors(parseRawHttpRequest(encode("")))).toEqual([{ line: 1, message: expect.stringContaining("empty") }]);
    expect(errors(parseRawHttpRequest(encode("hello\r\n")))[0]).toEqual({
      line: 1,
      message: expect.stringContaining("not a request line"),
    });
    expect(errors(parseRawHttpRequest(encode("GET / HTTP/1.1\r\nHost: a\r\n")))).toEqual([
      { line: 2, message: "the header section does not end with an empty line" },
    ]);
  });

  it("LIM-13: a truncated chunked body is an error at the chunk", () => {
    const text = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nff\r\nshort\r\n";
    expect(errors(parseRawHttpRequest(encode(text)))).toEqual([
      { line: 6, message: "a chunk of 255 bytes, but only 7 bytes are left" },
    ]);
  });

  it("POST-1: bytes after the head of a request without length are not a body", () => {
    const parsed = ok(parseRawHttpRequest(encode("GET /v1/capabilities HTTP/1.1\r\nHost: a\r\n\r\nstray")));
    expect(parsed.body.length).toBe(0);
    expect(parsed.warnings).toEqual([
      { line: 4, message: expect.stringContaining("5 bytes after the header section are ignored") },
    ]);
  });

  it("formatRawHttpProblems names the file and line", () => {
    expect(formatRawHttpProblems("req.http", [{ line: 3, message: "bad" }])).toEqual(["req.http:3: bad"]);
  });
});
