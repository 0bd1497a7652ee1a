import { describe, expect, it } from "vitest";
import {
  DEFAULT_CAPABILITIES_MAX_AGE_S,
  MAX_CAPABILITIES_AGE_S,
  createCapabilitiesCache,
  freshnessOf,
} from "./capabilitiesCache.ts";
import { createSteppingClock } from "./testing.ts";

const capabilities = { versions: ["v1"], max_message_size: 26214400, max_recipients: 100 };
const HOUR = 3_600_000;

describe("capabilities freshness from Cache-Control (G27)", () => {
  it("GET-6, LIM-9: without Cache-Control, or without a usable max-age, the sender assumes 1 hour", () => {
    expect(DEFAULT_CAPABILITIES_MAX_AGE_S).toBe(3_600);
    for (const header of [null, "no-store", "no-cache", "public", "max-age=abc", "max-age=-5", ""]) {
      expect(freshnessOf(header)).toEqual({ maxAgeS: 3_600, rule: "GET-6" });
    }
  });

  it("GET-5, G27: max-age sets the freshness, quoted or not, the first one counting; max-age=0 means fetch every time", () => {
    expect(freshnessOf("max-age=3600")).toEqual({ maxAgeS: 3_600, rule: "G27" });
    expect(freshnessOf("public, MAX-AGE = 600")).toEqual({ maxAgeS: 600, rule: "G27" });
    expect(freshnessOf('max-age="120"')).toEqual({ maxAgeS: 120, rule: "G27" });
    expect(freshnessOf("max-age=60, max-age=7200")).toEqual({ maxAgeS: 60, rule: "G27" });
    expect(freshnessOf("no-cache, max-age=0")).toEqual({ maxAgeS: 0, rule: "G27" });
  });

  it("GET-7, LIM-10: a max-age above 24 hours is capped at 24 hours", () => {
    expect(MAX_CAPABILITIES_AGE_S).toBe(86_400);
    expect(freshnessOf("max-age=86400")).toEqual({ maxAgeS: 86_400, rule: "G27" });
    expect(freshnessOf("max-age=31536000")).toEqual({ maxAgeS: 86_400, rule: "GET-7" });
  });
});

describe("the capabilities cache, per receiving domain, on the Clock", () => {
  it("GET-6, LIM-9: a document is fresh until its max-age has passed, then never used again", () => {
    const clock = createSteppingClock();
    const cache = createCapabilitiesCache(clock);
    cache.store("b.example", {
      capabilities,
      origin: "https://mx.b.example",
      fetchedAtMs: clock.now(),
      maxAgeS: 3_600,
    });
    expect(cache.fresh("B.Example.")?.entry.origin).toBe("https://mx.b.example");
    clock.advanceTo(clock.now() + HOUR - 1);
    expect(cache.fresh("b.example")?.ageS).toBe(3_599);
    clock.advanceTo(clock.now() + 1);
    expect(cache.fresh("b.example")).toBeUndefined();
    expect(cache.fresh("c.example")).toBeUndefined();
  });

  it("GET-7, LIM-10: even an entry stored with a longer lifetime is never used past 24 hours", () => {
    const clock = createSteppingClock();
    const cache = createCapabilitiesCache(clock);
    cache.store("b.example", {
      capabilities,
      origin: "https://mx.b.example",
      fetchedAtMs: clock.now(),
      maxAgeS: 10 * 86_400,
    });
    clock.advanceTo(clock.now() + 24 * HOUR - 1_000);
    expect(cache.fresh("b.example")).toBeDefined();
    clock.advanceTo(clock.now() + 1_000);
    expect(cache.fresh("b.example")).toBeUndefined();
  });

  it("G27: a document with max-age=0 is never fresh; forget drops a document", () => {
    const clock = createSteppingClock();
    const cache = createCapabilitiesCache(clock);
    cache.store("b.example", { capabilities, origin: "https://mx.b.example", fetchedAtMs: clock.now(), maxAgeS: 0 });
    expect(cache.fresh("b.example")).toBeUndefined();
    cache.store("b.example", { capabilities, origin: "https://mx.b.example", fetchedAtMs: clock.now(), maxAgeS: 60 });
    cache.forget("b.example");
    expect(cache.fresh("b.example")).toBeUndefined();
  });
});

describe("the discovery pin (GET-8, CAP-11, CAP-13, LIM-11)", () => {
  it("GET-8: a fetch sets the pin for discovery_pin_max_age seconds; it expires then", () => {
    const clock = createSteppingClock();
    const cache = createCapabilitiesCache(clock);
    const change = cache.applyPin("b.example", { discovery_pin_max_age: 604_800 });
    expect(change).toMatchObject({ kind: "set", refreshed: false, clamped: false, advertisedS: 604_800 });
    expect(cache.validPin("b.example")).toEqual({
      setAtMs: clock.now(),
      expiresAtMs: clock.now() + 604_800_000,
      maxAgeS: 604_800,
    });
    clock.advanceTo(clock.now() + 604_800_000 - 1);
    expect(cache.validPin("b.example")).toBeDefined();
    clock.advanceTo(clock.now() + 1);
    expect(cache.validPin("b.example")).toBeUndefined();
  });

  it("GET-8: each later fetch refreshes the pin from its own time", () => {
    const clock = createSteppingClock();
    const cache = createCapabilitiesCache(clock);
    cache.applyPin("b.example", { discovery_pin_max_age: 3_600 });
    clock.advanceTo(clock.now() + 1_800_000);
    const change = cache.applyPin("b.example", { discovery_pin_max_age: 3_600 });
    expect(change).toMatchObject({ kind: "set", refreshed: true });
    expect(cache.validPin("b.example")?.expiresAtMs).toBe(clock.now() + 3_600_000);
  });

  it("CAP-11: 0 or an absent member removes the pin (and says so only when there was one)", () => {
    const clock = createSteppingClock();
    const cache = createCapabilitiesCache(clock);
    cache.applyPin("b.example", { discovery_pin_max_age: 3_600 });
    expect(cache.applyPin("b.example", { discovery_pin_max_age: 0 })).toEqual({ kind: "removed", reason: "max-age-0" });
    expect(cache.validPin("b.example")).toBeUndefined();
    expect(cache.applyPin("b.example", {})).toEqual({ kind: "none", reason: "absent" });
    cache.applyPin("b.example", { discovery_pin_max_age: 3_600 });
    expect(cache.applyPin("b.example", {})).toEqual({ kind: "removed", reason: "absent" });
  });

  it("CAP-13, LIM-11: a value above 31557600 is treated as 31557600", () => {
    const clock = createSteppingClock();
    const cache = createCapabilitiesCache(clock);
    const change = cache.applyPin("b.example", { discovery_pin_max_age: 10 * 31_557_600 });
    expect(change).toMatchObject({ kind: "set", clamped: true, advertisedS: 315_576_000 });
    expect(cache.validPin("b.example")?.maxAgeS).toBe(31_557_600);
    expect(cache.validPin("b.example")?.expiresAtMs).toBe(clock.now() + 31_557_600_000);
  });
});
