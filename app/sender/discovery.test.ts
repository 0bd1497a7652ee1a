import { describe, expect, it } from "vitest";
import { createCapabilitiesCache } from "./capabilitiesCache.ts";
import { discover, lookupSvcb } from "./discovery.ts";
import type { DiscoveryDeps } from "./discovery.ts";
import { defaultReadings } from "./readings.ts";
import type { SenderReadings } from "./readings.ts";
import {
  PROBLEM_BASE,
  capabilitiesAnswer,
  createScriptedReceiver,
  createSteppingClock,
  createTestZone,
  createTraceLog,
  problemAnswer,
  publishService,
} from "./testing.ts";

function setup(readings: Partial<SenderReadings> = {}, versions: readonly string[] = ["v1"]) {
  const clock = createSteppingClock();
  const zone = createTestZone();
  const trace = createTraceLog();
  const receiver = createScriptedReceiver("https://mx.b.example", clock);
  const cache = createCapabilitiesCache(clock);
  const deps: DiscoveryDeps = {
    resolver: zone,
    fetch: receiver.fetch,
    clock,
    cache,
    trace,
    readings: { ...defaultReadings, ...readings },
    versions,
    problemBase: PROBLEM_BASE,
    senderDomain: "a.example",
  };
  return { clock, zone, trace, receiver, cache, deps };
}

describe("the SVCB lookup at _svc.<domain> (G5)", () => {
  it("SVC-5, G5: ServiceMode records in priority order, port honoured, target . is the owner name", async () => {
    const zone = createTestZone();
    zone.setSvcb("_svc.b.example", [
      { priority: 20, target: "backup.b.example." },
      { priority: 1, target: ".", port: 8443 },
      { priority: 10, target: "mx.b.example", port: 443 },
    ]);
    const outcome = await lookupSvcb(zone, "b.example");
    expect(outcome).toEqual({
      kind: "endpoints",
      aliases: [],
      endpoints: [
        { origin: "https://_svc.b.example:8443", priority: 1, owner: "_svc.b.example" },
        { origin: "https://mx.b.example", priority: 10, owner: "_svc.b.example" },
        { origin: "https://backup.b.example", priority: 20, owner: "_svc.b.example" },
      ],
    });
    expect(zone.svcbQueries).toEqual(["_svc.b.example"]);
  });

  it("G5: AliasMode is followed (ServiceMode beside it ignored), and . in the alias target's record is that name", async () => {
    const zone = createTestZone();
    zone.setSvcb("_svc.b.example", [
      { priority: 0, target: "svc.hoster.example." },
      { priority: 1, target: "ignored.b.example" },
    ]);
    zone.setSvcb("svc.hoster.example", [{ priority: 1, target: "." }]);
    expect(await lookupSvcb(zone, "b.example")).toEqual({
      kind: "endpoints",
      aliases: ["svc.hoster.example"],
      endpoints: [{ origin: "https://svc.hoster.example", priority: 1, owner: "svc.hoster.example" }],
    });
  });

  it("G6: NXDOMAIN, NODATA, AliasMode to . and a record set with nothing usable are no record", async () => {
    const zone = createTestZone();
    expect(await lookupSvcb(zone, "none.example")).toMatchObject({ kind: "no-record", answer: "nxdomain" });
    zone.setOutcome("_svc.nodata.example", "nodata");
    expect(await lookupSvcb(zone, "nodata.example")).toMatchObject({ kind: "no-record", answer: "nodata" });
    zone.setSvcb("_svc.root.example", [{ priority: 0, target: "." }]);
    expect(await lookupSvcb(zone, "root.example")).toMatchObject({ kind: "no-record", answer: "alias-to-root" });
    zone.setSvcb("_svc.odd.example", [
      { priority: 1, target: "mx.odd.example", other: { mandatory: "ech-config-unknown" } },
    ]);
    expect(await lookupSvcb(zone, "odd.example")).toMatchObject({ kind: "no-record", answer: "no-usable-record" });
  });

  it("G8: SERVFAIL, timeout and an alias loop are DNS failures", async () => {
    const zone = createTestZone();
    zone.setOutcome("_svc.b.example", "servfail");
    expect(await lookupSvcb(zone, "b.example")).toMatchObject({ kind: "dns-failure", answer: "servfail" });
    zone.setOutcome("_svc.b.example", "timeout");
    expect(await lookupSvcb(zone, "b.example")).toMatchObject({ kind: "dns-failure", answer: "timeout" });
    zone.setSvcb("_svc.loop.example", [{ priority: 0, target: "a.loop.example" }]);
    zone.setSvcb("a.loop.example", [{ priority: 0, target: "_svc.loop.example" }]);
    expect(await lookupSvcb(zone, "loop.example")).toMatchObject({ kind: "dns-failure", answer: "alias-loop" });
    const throwing = { ...zone, svcb: () => Promise.reject(new Error("resolver down")) };
    expect(await lookupSvcb(throwing, "b.example")).toMatchObject({ kind: "dns-failure", answer: "servfail" });
  });
});

describe("discovery: record, pin, capabilities, version", () => {
  it("GET-1, GET-8, VER-5: a published domain gives its origin, its capabilities with defaults, v1, and a pin", async () => {
    const { zone, deps, trace, cache, clock } = setup();
    publishService(zone, "b.example");
    const outcome = await discover("b.example", deps);
    expect(outcome).toEqual({
      kind: "endpoint",
      endpoint: {
        origin: "https://mx.b.example",
        version: "v1",
        capabilities: { versions: ["v1"], max_message_size: 26214400, max_recipients: 100 },
      },
    });
    // The default document of the scripted receiver advertises no pin (CAP-11): nothing is pinned.
    expect(cache.validPin("b.example")).toBeUndefined();
    expect(trace.data("version.negotiated")).toEqual([{ domain: "b.example", version: "v1", rule: "VER-5" }]);
    expect(trace.named("capabilities.fetched")[0]?.timeMs).toBe(clock.now());
  });

  it("GET-2, AUTH-7: the capabilities request is an unsigned GET without a body", async () => {
    const { zone, deps } = setup();
    publishService(zone, "b.example");
    const requests: Request[] = [];
    await discover("b.example", { ...deps, fetch: (r) => (requests.push(r), Promise.resolve(capabilitiesAnswer())) });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.method).toBe("GET");
    expect(requests[0]?.url).toBe("https://mx.b.example/v1/capabilities");
    expect(requests[0]?.headers.has("signature")).toBe(false);
    expect(requests[0]?.body).toBeNull();
  });

  it("G6, SVC-11: no SVCB record and no pin is plain SMTP (no-service), not a fallback", async () => {
    const { deps, trace } = setup();
    const outcome = await discover("b.example", deps);
    expect(outcome).toMatchObject({ kind: "no-service", rule: "SVC-11", gaps: ["G6"] });
    expect(trace.data("discovery.resolved")[0]).toMatchObject({ outcome: "no-service", gap: "G6" });
  });

  it("G7 enforced, ERR-25: with a valid pin, a missing record or a DNS failure is a request-level temporary failure, fallback-eligible", async () => {
    const { zone, deps, receiver } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604800 }));
    await discover("b.example", deps);
    zone.clear("_svc.b.example");
    const missing = await discover("b.example", deps);
    expect(missing).toMatchObject({
      kind: "temporary-failure",
      reading: { fallbackEligible: true, class: "temporary", rule: "ERR-25" },
    });
    expect(missing.kind === "temporary-failure" && missing.reading.gaps).toContain("G7");
    zone.setOutcome("_svc.b.example", "servfail");
    expect(await discover("b.example", deps)).toMatchObject({ kind: "temporary-failure", reading: { rule: "ERR-25" } });
  });

  it("G7 ignored: a valid pin changes nothing: no record is plain SMTP", async () => {
    const { zone, deps, receiver, cache } = setup({ discoveryPin: "ignored" });
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604800 }));
    await discover("b.example", deps);
    expect(cache.validPin("b.example")).toBeDefined();
    zone.clear("_svc.b.example");
    expect(await discover("b.example", deps)).toMatchObject({ kind: "no-service", gaps: ["G6", "G7"] });
  });

  it("G7: an expired pin no longer protects", async () => {
    const { zone, deps, receiver, clock } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 60 }));
    await discover("b.example", deps);
    zone.clear("_svc.b.example");
    clock.advanceTo(clock.now() + 60_000);
    expect(await discover("b.example", deps)).toMatchObject({ kind: "no-service" });
  });

  it("G8 temporary-failure, ERR-21: a DNS failure without a pin is a temporary failure, fallback-eligible", async () => {
    const { zone, deps } = setup();
    zone.setOutcome("_svc.b.example", "timeout");
    const outcome = await discover("b.example", deps);
    expect(outcome).toMatchObject({ kind: "temporary-failure", reading: { fallbackEligible: true, rule: "ERR-21" } });
    expect(outcome.kind === "temporary-failure" && outcome.reading.gaps).toContain("G8");
  });

  it("G8 smtp: a DNS failure without a pin goes to SMTP at once", async () => {
    const { zone, deps } = setup({ dnsFailureWithoutPin: "smtp" });
    zone.setOutcome("_svc.b.example", "servfail");
    expect(await discover("b.example", deps)).toMatchObject({ kind: "no-service", gaps: ["G8"] });
  });

  it("GET-9, CAP-7: a document with max_message_size below 26214400 is invalid: a temporary failure, fallback-eligible", async () => {
    const { zone, deps, receiver, trace } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 1000 }));
    const outcome = await discover("b.example", deps);
    expect(outcome).toMatchObject({
      kind: "temporary-failure",
      reading: { identifier: "temporary_failure", fallbackEligible: true, rule: "GET-9" },
    });
    const invalid = trace.data("capabilities.invalid")[0];
    expect(invalid?.["rule"]).toBe("GET-9");
    expect(JSON.stringify(invalid?.["violations"])).toContain("CAP-7");
  });

  it("GET-9, CAP-3: a versions list that breaks the pattern is invalid", async () => {
    const { zone, deps, receiver } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400, versions: ["v1", "version2"] }));
    expect(await discover("b.example", deps)).toMatchObject({ kind: "temporary-failure", reading: { rule: "GET-9" } });
    receiver.capabilities(() => new Response("{not json", { status: 200 }));
    expect(await discover("b.example", deps)).toMatchObject({ kind: "temporary-failure", reading: { rule: "GET-9" } });
  });

  it("GET-9: a document that cannot be fetched (an error status, no answer) is a temporary failure", async () => {
    const { zone, deps, receiver } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => problemAnswer("temporary_failure", 503));
    expect(await discover("b.example", deps)).toMatchObject({
      kind: "temporary-failure",
      status: 503,
      reading: { fallbackEligible: true },
    });
    receiver.capabilities(() => ({ fail: "tls" }));
    expect(await discover("b.example", deps)).toMatchObject({
      kind: "temporary-failure",
      reading: { fallbackEligible: true, rule: "GET-9" },
    });
  });

  it("G46 fallback-eligible (default): a 429 to the capabilities request is an unfetchable document, fallback-eligible", async () => {
    const { zone, deps, receiver, trace } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => problemAnswer("rate_limited", 429));
    expect(await discover("b.example", deps)).toMatchObject({
      kind: "temporary-failure",
      status: 429,
      reading: { fallbackEligible: true, smtpFallback: "after the fallback window", gaps: ["G28", "G46"] },
    });
    expect(trace.data("capabilities.invalid")[0]).toMatchObject({ status: 429, G46: "fallback-eligible" });
  });

  it("G46 alive: a 4xx to the capabilities request shows the endpoint alive: temporary, never falls back; a 5xx still does", async () => {
    const { zone, deps, receiver, trace } = setup({ capabilities4xx: "alive" });
    publishService(zone, "b.example");
    receiver.capabilities(() => problemAnswer("rate_limited", 429));
    expect(await discover("b.example", deps)).toMatchObject({
      kind: "temporary-failure",
      status: 429,
      reading: { class: "temporary", retry: true, fallbackEligible: false, smtpFallback: "never" },
    });
    expect(trace.data("capabilities.invalid")[0]).toMatchObject({ G46: "alive", fallbackEligible: false });
    receiver.capabilities(() => problemAnswer("temporary_failure", 503));
    expect(await discover("b.example", deps)).toMatchObject({ reading: { fallbackEligible: true } });
  });

  it("G47 ignored (default): a capabilities 503's Retry-After sets no lower bound, and the trace says it was ignored", async () => {
    const { zone, deps, receiver, trace } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => problemAnswer("temporary_failure", 503, { retryAfter: "600" }));
    const outcome = await discover("b.example", deps);
    expect(outcome).toMatchObject({ kind: "temporary-failure", status: 503 });
    expect(outcome).not.toHaveProperty("lowerBoundMs");
    expect(trace.data("capabilities.invalid")[0]).toMatchObject({
      retryAfterS: 600,
      G47: "ignored",
      retryAfterIgnored: true,
    });
  });

  it("G47 lower-bound, RETRY-7: a capabilities 503's Retry-After is a lower bound for the next attempt", async () => {
    const { zone, deps, receiver, clock } = setup({ capabilitiesRetryAfter: "lower-bound" });
    publishService(zone, "b.example");
    receiver.capabilities(() => problemAnswer("temporary_failure", 503, { retryAfter: "600" }));
    const outcome = await discover("b.example", deps);
    expect(outcome).toMatchObject({ kind: "temporary-failure", lowerBoundMs: clock.now() + 600_000 });
  });

  it("G5: an endpoint that gives no answer passes to the next one in priority order", async () => {
    const { zone, deps, trace } = setup();
    zone.setSvcb("_svc.b.example", [
      { priority: 1, target: "down.b.example" },
      { priority: 2, target: "mx.b.example" },
    ]);
    const outcome = await discover("b.example", deps);
    expect(outcome).toMatchObject({ kind: "endpoint", endpoint: { origin: "https://mx.b.example" } });
    expect(JSON.stringify(trace.data("discovery.resolved")[0]?.["unreachable"])).toContain("down.b.example");
  });

  it("GET-6, G28: a cached document is used while fresh (no second fetch), fetched again once stale", async () => {
    const { zone, deps, receiver, clock, trace } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400 }, null));
    await discover("b.example", deps);
    clock.advanceTo(clock.now() + 3_599_000);
    await discover("b.example", deps);
    expect(receiver.capabilityFetches).toHaveLength(1);
    expect(trace.data("capabilities.cached")[0]).toMatchObject({ ageS: 3_599, maxAgeS: 3_600 });
    clock.advanceTo(clock.now() + 1_000);
    await discover("b.example", deps);
    expect(receiver.capabilityFetches).toHaveLength(2);
  });

  it("GET-7: a document advertised for a week is fetched again after 24 hours", async () => {
    const { zone, deps, receiver, clock } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400 }, "max-age=604800"));
    await discover("b.example", deps);
    clock.advanceTo(clock.now() + 86_399_000);
    await discover("b.example", deps);
    expect(receiver.capabilityFetches).toHaveLength(1);
    clock.advanceTo(clock.now() + 1_000);
    await discover("b.example", deps);
    expect(receiver.capabilityFetches).toHaveLength(2);
  });

  it("GET-8, CAP-11, CAP-13: fetches set, refresh and remove the pin, clamped at one year", async () => {
    const { zone, deps, receiver, clock, cache, trace } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 40_000_000 }, "max-age=0"),
    );
    await discover("b.example", deps);
    expect(cache.validPin("b.example")?.expiresAtMs).toBe(clock.now() + 31_557_600_000);
    expect(trace.data("pin.set")[0]).toMatchObject({
      rule: "CAP-13",
      maxAgeS: 31_557_600,
      advertisedS: 40_000_000,
      refreshed: false,
    });
    clock.advanceTo(clock.now() + 1_000);
    receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604_800 }, "max-age=0"),
    );
    await discover("b.example", deps);
    expect(trace.data("pin.set")[1]).toMatchObject({
      rule: "GET-8",
      refreshed: true,
      expiresAtMs: clock.now() + 604_800_000,
    });
    receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 0 }, "max-age=0"),
    );
    await discover("b.example", deps);
    expect(cache.validPin("b.example")).toBeUndefined();
    expect(trace.data("pin.removed")).toEqual([{ domain: "b.example", reason: "max-age-0", rule: "CAP-11" }]);
  });

  it("STATE-4, VER-5: a versions list without a version the sender speaks is no common version, even with a valid pin", async () => {
    const { zone, deps, receiver, clock } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604800 }, "max-age=0"),
    );
    await discover("b.example", deps);
    clock.advanceTo(clock.now() + 1_000);
    receiver.capabilities(() =>
      capabilitiesAnswer(
        { max_message_size: 26214400, versions: ["v2", "v3"], discovery_pin_max_age: 604800 },
        "max-age=0",
      ),
    );
    const outcome = await discover("b.example", deps);
    expect(outcome).toMatchObject({
      kind: "no-common-version",
      ours: ["v1"],
      theirs: ["v2", "v3"],
      reading: { smtpFallback: "immediately", rule: "ERR-26" },
    });
  });

  it("VER-5: the highest common major version is chosen (v10 above v9)", async () => {
    const { zone, deps, receiver } = setup({}, ["v1", "v9", "v10"]);
    publishService(zone, "b.example");
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400, versions: ["v1", "v9", "v10"] }));
    // The scripted receiver serves its document at /v1 only; v10 is what the sender would ask for.
    const outcome = await discover("b.example", {
      ...deps,
      fetch: (request) => receiver.fetch(new Request(request.url.replace("/v10/", "/v1/"), request)),
    });
    expect(outcome).toMatchObject({ kind: "endpoint", endpoint: { version: "v10" } });
  });

  it("VER-6, GET-10: a 404 unsupported_version on the capabilities path is read, not probed: no common version", async () => {
    const { zone, deps, receiver } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() => problemAnswer("unsupported_version", 404, { versions: ["v2"] }));
    expect(await discover("b.example", deps)).toMatchObject({ kind: "no-common-version", theirs: ["v2"] });
    expect(receiver.capabilityFetches).toHaveLength(1);
  });
});

describe("discovery in the trace: the actor that asked, and the step it ended at", () => {
  it("every discovery event names the delivery actor whose attempt asked, when one did", async () => {
    const { zone, deps, trace, receiver } = setup();
    publishService(zone, "b.example");
    receiver.capabilities(() =>
      capabilitiesAnswer({ max_message_size: 26214400, discovery_pin_max_age: 604800 }, "max-age=0"),
    );
    await discover("b.example", deps, "m1@a.example→b.example");
    const names = trace.events.map((e) => e.name);
    expect(names).toEqual(["discovery.resolved", "capabilities.fetched", "pin.set", "version.negotiated"]);
    for (const e of trace.events) expect(e.data?.["deliveryActor"], e.name).toBe("m1@a.example→b.example");
    await discover("b.example", deps);
    expect(trace.events.slice(names.length).every((e) => e.data?.["deliveryActor"] === undefined)).toBe(true);
  });

  it("SVC-11, GET-9, STATE-4: an attempt that ends in discovery says where: the record, the capabilities, the version", async () => {
    const { zone, deps, receiver } = setup();
    expect(await discover("b.example", deps)).toMatchObject({ kind: "no-service", stage: "discovery" });
    zone.setOutcome("_svc.b.example", "servfail");
    expect(await discover("b.example", deps)).toMatchObject({ kind: "temporary-failure", stage: "discovery" });
    publishService(zone, "b.example");
    receiver.capabilities(() => problemAnswer("temporary_failure", 503));
    expect(await discover("b.example", deps)).toMatchObject({ kind: "temporary-failure", stage: "capabilities" });
    receiver.capabilities(() => capabilitiesAnswer({ max_message_size: 26214400, versions: ["v2"] }));
    expect(await discover("b.example", deps)).toMatchObject({ kind: "no-common-version", stage: "version" });
  });
});
