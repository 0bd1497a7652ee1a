import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  SUPPORTED_VERSIONS,
  isUnservedVersionPath,
  negotiateVersion,
  parseVersionPath,
  versionMajor,
  versionPath,
} from "./versions.ts";
import { maxOf } from "./lists.ts";

describe("negotiateVersion", () => {
  it("VER-5: both sides serving v1 agree on v1", () => {
    expect(negotiateVersion(SUPPORTED_VERSIONS, ["v1"])).toEqual({ ok: true, version: "v1", major: 1 });
  });

  it("VER-5: the highest common major wins, compared by number (v10 above v9)", () => {
    expect(negotiateVersion(["v1", "v9", "v10"], ["v10", "v9", "v2"])).toEqual({ ok: true, version: "v10", major: 10 });
    expect(negotiateVersion(["v2", "v1"], ["v1", "v2", "v3"])).toEqual({ ok: true, version: "v2", major: 2 });
  });

  it("VER-5, ERR-26: no common major gives no-common-version", () => {
    expect(negotiateVersion(["v1"], ["v2", "v3"])).toEqual({ ok: false, outcome: "no-common-version" });
    expect(negotiateVersion(["v1"], [])).toEqual({ ok: false, outcome: "no-common-version" });
  });

  it("CAP-3, VER-5: entries off the version pattern never match (v01, v0, V1)", () => {
    expect(negotiateVersion(["v1"], ["v01", "v0", "V1", "1"])).toEqual({ ok: false, outcome: "no-common-version" });
  });

  it("VER-5: the result is common to both lists and no common version is higher (property)", () => {
    const version = fc.integer({ min: 1, max: 30 }).map((n) => `v${n}`);
    fc.assert(
      fc.property(fc.array(version, { maxLength: 6 }), fc.array(version, { maxLength: 6 }), (ours, theirs) => {
        const result = negotiateVersion(ours, theirs);
        const common = ours.filter((v) => theirs.includes(v)).map((v) => Number(v.slice(1)));
        if (common.length === 0) expect(result.ok).toBe(false);
        else expect(result).toEqual({ ok: true, version: `v${maxOf(common)}`, major: maxOf(common) });
      }),
      { seed: 9110, numRuns: 300 },
    );
  });

  it("CAP-3: versionMajor reads only ^v[1-9][0-9]*$", () => {
    expect(versionMajor("v1")).toBe(1);
    expect(versionMajor("v10")).toBe(10);
    expect(versionMajor("v0")).toBeUndefined();
    expect(versionMajor("v01")).toBeUndefined();
    expect(versionMajor("v1.1")).toBeUndefined();
  });
});

describe("version paths", () => {
  it("VER-1: the major version is the first path segment", () => {
    expect(versionPath("v1", "messages")).toBe("/v1/messages");
    expect(versionPath("v1", "capabilities")).toBe("/v1/capabilities");
    expect(parseVersionPath("/v1/messages")).toEqual({ versioned: true, segment: "v1", major: 1, rest: "/messages" });
  });

  it("VER-1, GET-10: /v2/..., /v2 and /v10/messages are under a major version", () => {
    expect(parseVersionPath("/v2/anything/else")).toEqual({
      versioned: true,
      segment: "v2",
      major: 2,
      rest: "/anything/else",
    });
    expect(parseVersionPath("/v2")).toEqual({ versioned: true, segment: "v2", major: 2, rest: "" });
    expect(parseVersionPath("/v10/messages")).toEqual({
      versioned: true,
      segment: "v10",
      major: 10,
      rest: "/messages",
    });
  });

  it("GET-10, ERR-14: /v0/x and /v01/messages are under a version-shaped segment with no major", () => {
    expect(parseVersionPath("/v0/x")).toEqual({ versioned: true, segment: "v0", major: undefined, rest: "/x" });
    expect(parseVersionPath("/v01/messages")).toEqual({
      versioned: true,
      segment: "v01",
      major: undefined,
      rest: "/messages",
    });
  });

  it("VER-1: other first segments are not version paths", () => {
    for (const path of ["/", "/messages", "/V1/messages", "/v1beta/messages", "/vx/messages", "v1/messages", ""]) {
      expect(parseVersionPath(path), path).toEqual({ versioned: false });
    }
  });

  it("GET-10, VER-7, ERR-14: only version paths outside the served list are unserved", () => {
    expect(isUnservedVersionPath("/v1/messages", ["v1"])).toBe(false);
    expect(isUnservedVersionPath("/v2/messages", ["v1"])).toBe(true);
    expect(isUnservedVersionPath("/v0/x", ["v1"])).toBe(true);
    expect(isUnservedVersionPath("/v10/messages", ["v1"])).toBe(true);
    expect(isUnservedVersionPath("/v01/messages", ["v1"])).toBe(true);
    expect(isUnservedVersionPath("/favicon.ico", ["v1"])).toBe(false);
  });
});
