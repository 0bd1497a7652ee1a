/**
 * The timeline's lanes filtered and searched, on real traces: a delivery that went to
 * SMTP after the fallback window (STATE-2), one that bounced after five days with its DSN's lane (STATE-6,
 * STATE-7), and one message's mixed recipient results.
 */
import { describe, expect, it } from "vitest";
import { buildTimeline } from "./timeline.ts";
import { filterLanes, filterTimeline, laneFacets, laneFilterActive } from "./laneFilter.ts";
import { scenarioTrace } from "./testing.ts";

describe("filtering the timeline's lanes", async () => {
  const smtpRun = await scenarioTrace("receiver-down-past-fallback-window");
  const smtp = buildTimeline(smtpRun.events, smtpRun.startedAtMs);
  const downRun = await scenarioTrace("rate-limited-then-down");
  const down = buildTimeline(downRun.events, downRun.startedAtMs);
  const mixedRun = await scenarioTrace("teach-mixed-recipient-results");
  const mixed = buildTimeline(mixedRun.events, mixedRun.startedAtMs);

  it("no filter: the same timeline, not a copy", () => {
    expect(laneFilterActive({ text: "  " })).toBe(false);
    expect(filterTimeline(down, {})).toBe(down);
    expect(filterTimeline(down, { text: "   " })).toBe(down);
  });

  it("'went to SMTP' keeps the lanes with a hand-off (STATE-2), and their marks; others have none", () => {
    expect(laneFacets(smtp).outcomes).toContain("smtp");
    const shown = filterTimeline(smtp, { outcome: "smtp" });
    expect(shown.lanes.length).toBeGreaterThan(0);
    for (const lane of shown.lanes)
      expect(shown.marks.some((m) => m.lane === lane.id && m.kind === "handoff")).toBe(true);
    expect(shown.marks.every((m) => m.lane === undefined || shown.lanes.some((l) => l.id === m.lane))).toBe(true);
    expect(filterLanes(down, { outcome: "smtp" })).toEqual([]);
  });

  it("'bounced' keeps the bounced delivery and leaves its DSN's lane out (STATE-6, STATE-7); the axis stays the run's", () => {
    expect(down.lanes.length).toBeGreaterThan(1);
    const shown = filterTimeline(down, { outcome: "bounced" });
    expect(shown.lanes.map((l) => l.kind)).toEqual(["message"]);
    expect(shown.marks.some((m) => m.kind === "bounce")).toBe(true);
    expect(shown.connectors.every((c) => c.lane === shown.lanes[0]?.id)).toBe(true);
    expect([shown.startMs, shown.endMs]).toEqual([down.startMs, down.endMs]);
    expect(filterTimeline(down, { outcome: "accepted" }).lanes.every((l) => l.kind === "dsn")).toBe(true);
  });

  it("by domain, and by words of the label, Message-ID or a recipient, any case; all must hold", () => {
    for (const domain of laneFacets(down).domains)
      expect(filterLanes(down, { domain }).every((l) => l.domain === domain)).toBe(true);
    const dsn = filterLanes(down, { text: "DSN" });
    expect(dsn.map((l) => l.kind)).toEqual(["dsn"]);
    const recipient = mixed.lanes[0]?.recipients[0] ?? "";
    expect(recipient).not.toBe("");
    expect(filterLanes(mixed, { text: recipient.toUpperCase() }).length).toBeGreaterThan(0);
    expect(filterLanes(mixed, { text: `${recipient} no-such-word` })).toEqual([]);
    // One message's lane has recipients accepted and rejected: it is found by either.
    expect(filterLanes(mixed, { outcome: "accepted" }).length).toBeGreaterThan(0);
    expect(filterLanes(mixed, { outcome: "rejected" }).length).toBeGreaterThan(0);
  });
});
