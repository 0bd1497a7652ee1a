import { describe, expect, it } from "vitest";
import { checkOrder, receiverChecks } from "./checks.ts";
import type { ReceiverConfigInput } from "./config.ts";
import { lintAnswer, lintChecks, lintReceiverConfig } from "./lintChecks.ts";
import { recipientSteps } from "./recipientSteps.ts";
import { versionPathVerdict } from "./requestChecks.ts";
import { requestSteps } from "./requestSteps.ts";
import { createReceiverHarness, readProblem, TEST_PROBLEM_BASE, testReceiverConfig } from "./testing.ts";

describe("the receiver's checks written once: one step per check of checks.ts (G10)", () => {
  it("G10: the request-level steps are the R checks, written in checks.ts's order", () => {
    expect(Object.keys(requestSteps)).toEqual(checkOrder("R"));
    expect(checkOrder("R")[0]).toBe("version-path");
  });

  it("SVC-7 ERR-17 ERR-18: the per-recipient steps are the P checks, written in checks.ts's order, store last", () => {
    expect(Object.keys(recipientSteps)).toEqual(checkOrder("P"));
    expect(checkOrder("P").at(-1)).toBe("store");
  });

  it("G10: every check of checks.ts has its step, and the two levels do not overlap", () => {
    expect([...checkOrder("R"), ...checkOrder("P")].sort()).toEqual(receiverChecks.map((c) => c.id).sort());
  });
});

describe("the dry walk (lintChecks) decides version-path as the receiver's step does (VER-1, VER-7, POST-1)", () => {
  /** The receiver's answer to a delivery at `url`, and lintChecks' first failing answer for the same bytes. */
  async function both(
    url: string,
    versions: readonly string[],
  ): Promise<{ receiver: { status: number; problem: unknown }; lint: ReturnType<typeof lintAnswer> }> {
    const withVersions = (c: ReceiverConfigInput): ReceiverConfigInput => ({
      ...c,
      capabilities: { ...c.capabilities, versions: [...versions] },
    });
    const h = await createReceiverHarness(withVersions);
    const request = await h.request({ url });
    const copy = request.clone();
    const lines = await lintChecks(
      {
        method: copy.method,
        url: copy.url,
        headers: [...copy.headers],
        body: new Uint8Array(await copy.arrayBuffer()),
      },
      {
        nowS: h.clock.nowS(),
        config: lintReceiverConfig(withVersions(testReceiverConfig())),
      },
    );
    const answer = await readProblem(await h.receiver(request));
    return { receiver: { status: answer.status, problem: answer.json["type"] }, lint: lintAnswer(lines) };
  }

  it("POST-1: a POST to /v1/capabilities is 405 for both (the document is GET and HEAD)", async () => {
    const { receiver, lint } = await both("https://mx.b.example/v1/capabilities", ["v1"]);
    expect(receiver).toEqual({ status: 405, problem: `${TEST_PROBLEM_BASE}/invalid_request` });
    expect(lint).toMatchObject({ status: 405, problem: "invalid_request", check: "version-path" });
  });

  it("VER-1: a version advertised but not implemented (v2) is 404 invalid_request for both", async () => {
    const { receiver, lint } = await both("https://mx.b.example/v2/messages", ["v1", "v2"]);
    expect(receiver).toEqual({ status: 404, problem: `${TEST_PROBLEM_BASE}/invalid_request` });
    expect(lint).toMatchObject({ status: 404, problem: "invalid_request", check: "version-path" });
  });

  it("VER-7: a version not served is 404 unsupported_version for both", async () => {
    const { receiver, lint } = await both("https://mx.b.example/v3/messages", ["v1"]);
    expect(receiver).toEqual({ status: 404, problem: `${TEST_PROBLEM_BASE}/unsupported_version` });
    expect(lint).toMatchObject({ status: 404, problem: "unsupported_version", check: "version-path" });
  });
});

describe("version-path's verdict on the two paths of the protocol, by method and served versions (VER-1, VER-7, GET-10, POST-16)", () => {
  it("VER-1 POST-16: POST /v1/messages is a delivery where v1 is served, another method a 405", () => {
    expect(versionPathVerdict("POST", "/v1/messages", ["v1"])).toEqual({ kind: "delivery" });
    expect(versionPathVerdict("POST", "/v1/messages", ["v2", "v1"])).toEqual({ kind: "delivery" });
    expect(versionPathVerdict("GET", "/v1/messages", ["v1"])).toEqual({ kind: "method" });
  });

  it("VER-7: /v1/messages where v1 is not served is unsupported_version, whatever the method", () => {
    expect(versionPathVerdict("POST", "/v1/messages", ["v2"])).toEqual({ kind: "unsupported", segment: "v1" });
    expect(versionPathVerdict("GET", "/v1/messages", ["v2"])).toEqual({ kind: "unsupported", segment: "v1" });
  });

  it("GET-10: /v1/capabilities is served whatever the versions, to GET and HEAD only", () => {
    for (const versions of [["v1"], ["v2"]]) {
      expect(versionPathVerdict("GET", "/v1/capabilities", versions)).toEqual({ kind: "capabilities", allowed: true });
      expect(versionPathVerdict("HEAD", "/v1/capabilities", versions)).toEqual({ kind: "capabilities", allowed: true });
      expect(versionPathVerdict("POST", "/v1/capabilities", versions)).toEqual({
        kind: "capabilities",
        allowed: false,
      });
    }
  });

  it("VER-1: a path beside the two is read by its segments", () => {
    expect(versionPathVerdict("POST", "/v1/messages/", ["v1"])).toEqual({ kind: "no-resource", segment: "v1" });
    expect(versionPathVerdict("POST", "/v1/Messages", ["v1"])).toEqual({ kind: "no-resource", segment: "v1" });
    expect(versionPathVerdict("POST", "/messages", ["v1"])).toEqual({ kind: "unversioned" });
  });
});
