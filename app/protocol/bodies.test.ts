import { describe, expect, it } from "vitest";
import { bodyBytesOf, bodySha256FieldOf, requestWithBody, responseWithBody } from "./bodies.ts";

const URL_ = "https://mx.b.example/v1/messages";

describe("bodies at hand: a message the core made from bytes gives those bytes (POST-5, POST-9: the body byte for byte)", () => {
  it("a request made from bytes: the very bytes, while its stream gives the same ones", async () => {
    const bytes = new TextEncoder().encode("--b\r\nhello\r\n--b--\r\n");
    const request = requestWithBody(URL_, { method: "POST", headers: { "content-type": "x/y" } }, bytes);
    expect(bodyBytesOf(request)).toBe(bytes);
    // The Request keeps its own copy for its stream: a reader that streams it gets the same bytes.
    expect(new Uint8Array(await request.clone().arrayBuffer())).toEqual(bytes);
    expect(request.headers.get("content-type")).toBe("x/y");
  });

  it("POST-5: the SHA-256 its maker computed of the bytes is kept with them, and let go once the body is read", async () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const field = "sha-256=:A5BYxvLAy0ksUzsKTRTvd8wPeKvMztUofYShogEc+4E=:";
    const request = requestWithBody(URL_, { method: "POST" }, bytes, field);
    expect(bodySha256FieldOf(request)).toBe(field);
    expect(bodySha256FieldOf(requestWithBody(URL_, { method: "POST" }, bytes))).toBeUndefined();
    await request.arrayBuffer();
    expect(bodySha256FieldOf(request)).toBeUndefined();
  });

  it("once the stream was read, the body is no longer at hand (as fetch says it is used)", async () => {
    const request = requestWithBody(URL_, { method: "POST" }, new Uint8Array([1, 2, 3]));
    await request.arrayBuffer();
    expect(request.bodyUsed).toBe(true);
    expect(bodyBytesOf(request)).toBeUndefined();
  });

  it("no bytes, a null body: an empty body at hand, for a request and a response", () => {
    const get = requestWithBody(URL_, { method: "GET" }, new Uint8Array(0));
    expect(get.body).toBeNull();
    expect(bodyBytesOf(get)).toEqual(new Uint8Array(0));
    const head = responseWithBody(null, { status: 200 });
    expect(head.body).toBeNull();
    expect(bodyBytesOf(head)).toEqual(new Uint8Array(0));
    expect(responseWithBody(new Uint8Array(0), { status: 200 }).body).toBeNull();
  });

  it("a response made from bytes keeps its status and headers; its text is the bytes'", async () => {
    const bytes = new TextEncoder().encode('{"results":[]}');
    const response = responseWithBody(bytes, { status: 200, headers: [["content-type", "application/json"]] });
    expect(bodyBytesOf(response)).toBe(bytes);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.clone().text()).toBe('{"results":[]}');
  });

  it("a message made anywhere else has no bytes at hand: its body must be read (an empty one excepted)", () => {
    expect(bodyBytesOf(new Request(URL_, { method: "POST", body: "x" }))).toBeUndefined();
    expect(bodyBytesOf(new Response("x"))).toBeUndefined();
    expect(bodyBytesOf(new Request(URL_))).toEqual(new Uint8Array(0));
    expect(bodyBytesOf(new Response(null, { status: 204 }))).toEqual(new Uint8Array(0));
  });

  it("a reader of the stream gets a copy: changing what it read changes neither the bytes nor a later read", async () => {
    const bytes = new TextEncoder().encode('{"results":[]}');
    const response = responseWithBody(bytes, { status: 200 });
    const read = new Uint8Array(await response.clone().arrayBuffer());
    read.fill(0);
    expect(new TextDecoder().decode(bytes)).toBe('{"results":[]}');
    expect(await response.text()).toBe('{"results":[]}');
    const request = requestWithBody(URL_, { method: "POST" }, bytes);
    const chunk = (await request.body!.getReader().read()).value!;
    expect(chunk).not.toBe(bytes);
    expect(chunk).toEqual(bytes);
  });
});
