import { describe, expect, it } from "vitest";
import { buildTimeline } from "./timeline.ts";
import { drawnMarks, itemsByLane, laneItems } from "./timelineDrawn.ts";
import { timeScale } from "./timelineScale.ts";
import { DARK_TIMELINE_PALETTE, LIGHT_TIMELINE_PALETTE, timelineSvg } from "./timelineSvg.ts";
import { markShapes, shapeSvg } from "./timelineMarks.ts";
import { scenarioTrace } from "./testing.ts";

const labels = new Map([
  ["m0@a.example", "m0"],
  ["m1@a.example", "m1"],
]);

describe("the timeline as SVG (export the timeline as SVG and PNG)", async () => {
  const t = await scenarioTrace("teach-mixed-recipient-results");
  const tl = buildTimeline(t.events, t.startedAtMs, labels);
  const scale = timeScale("linear", t.startedAtMs, tl.endMs, 870, t.startedAtMs);
  const m1 = tl.lanes.find((l) => l.label === "m1 → b.example")!;

  it("draws every lane, the sub-lanes of the unfolded ones only, and each lane's drawn marks", () => {
    const { svg, width, height } = timelineSvg(tl, {
      scale,
      startMs: t.startedAtMs,
      unfolded: new Set([m1.id]),
      title: "Delivery timeline",
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/ data-lane="/g)?.length).toBe(tl.lanes.length);
    expect(svg.match(/ data-recipient="/g)?.length).toBe(m1.recipientLanes.length);
    expect(width).toBe(Math.ceil(16 + 230 + 870 + 8));
    expect(height).toBe(16 + 28 + 22 + tl.lanes.length * 56 + m1.recipientLanes.length * 24);
    const items = itemsByLane(tl);
    const attempts = tl.lanes
      .map((l) => drawnMarks(laneItems(items, l.id).marks, scale, new Set([l.id])))
      .flat()
      .filter((d) => d.mark.kind === "attempt").length;
    expect(svg.match(/data-kind="attempt"/g)?.length).toBe(attempts);
    expect(svg).toMatch(/deferred ×\d+ \(mailbox_full\)/);
    expect(svg).toContain("m1 → b.example");
    expect(svg).toContain("nobody@b.example");
    // Well-formed enough: every group closed, no stray markup from the labels.
    expect(svg.match(/<g[ >]/g)?.length).toBe(svg.match(/<\/g>/g)?.length);
    expect(svg).not.toMatch(/<(?!\/?(svg|rect|text|tspan|g|path|circle|line|title)[ >/])/);
  });

  it("folded, a lane draws no sub-lanes; a window cut short draws only what is in it", () => {
    const few = timeScale("linear", t.startedAtMs, t.startedAtMs + 30 * 60_000, 870, t.startedAtMs);
    const { svg } = timelineSvg(tl, { scale: few, startMs: t.startedAtMs, unfolded: new Set() });
    expect(svg).not.toContain("data-recipient=");
    expect(svg).not.toContain('data-kind="bounce"');
    expect(svg.match(/ data-lane="/g)?.length).toBe(tl.lanes.length);
  });

  it("draws each mark from the shapes the view draws (timelineMarks.ts), and `SMTP ruled out` over the arcs on a backing", () => {
    const { svg } = timelineSvg(tl, { scale, startMs: t.startedAtMs, unfolded: new Set() });
    for (const kind of ["bounce", "dsn", "receiver", "ruled-out"] as const)
      expect(svg).toContain(
        markShapes(kind)
          .map((s) => shapeSvg(s, LIGHT_TIMELINE_PALETTE))
          .join(""),
      );
    // An attempt's dot as the view draws it: its size fits the room to its lane's next attempt.
    const deferred = drawnMarks(laneItems(itemsByLane(tl), m1.id).marks, scale, new Set([m1.id])).find(
      (d) => d.mark.outcome === "deferred",
    );
    expect(deferred).toBeDefined();
    expect(svg).toContain(
      markShapes("attempt", "deferred", { room: deferred?.room })
        .map((s) => shapeSvg(s, LIGHT_TIMELINE_PALETTE))
        .join(""),
    );
    // m1's `SMTP ruled out` (ERR-23: its first answer had per-recipient results) sits where the retries' arcs
    // run: on the lane's surface colour. (It takes the place `stored` had beside bob's mailbox there.)
    const m1Svg = svg.slice(svg.indexOf(`data-lane="${m1.id}"`));
    expect(m1Svg).toMatch(/<rect [^>]*data-shape="label-backing"\/><text [^>]*>SMTP ruled out<\/text>/);
  });

  it("labels on a halo of the lane's background, written over the playhead and the give-up line; backings in the lane's background", () => {
    for (const palette of [LIGHT_TIMELINE_PALETTE, DARK_TIMELINE_PALETTE]) {
      // The image's lanes are on its background: that is the halos' and backings' colour.
      expect(palette.lane).toBe(palette.bg);
      const { svg } = timelineSvg(tl, {
        scale,
        startMs: t.startedAtMs,
        unfolded: new Set([m1.id]),
        playheadMs: tl.endMs,
        palette,
      });
      const texts = svg.match(/<text [^>]*data-label-for="[^"]*"[^>]*>/g) ?? [];
      expect(texts.length).toBeGreaterThan(20);
      for (const x of texts) {
        expect(x).toContain(`stroke="${palette.lane}"`);
        expect(x).toContain('paint-order="stroke"');
      }
      expect(svg).toMatch(
        new RegExp(`<rect [^>]*fill="${palette.lane}" fill-opacity="0.9" data-shape="label-backing"/>`),
      );
      // In each lane, the playhead comes before (under) the give-up line and every label.
      for (const lane of svg.split("<g data-lane=").slice(1)) {
        const at = lane.indexOf("data-playhead");
        expect(at).toBeGreaterThan(0);
        const firstLabel = lane.search(/data-label-for=|data-kind="give-up"/);
        if (firstLabel >= 0) expect(at).toBeLessThan(firstLabel);
      }
    }
  });

  it("the give-up line only on lanes it applies to; where SMTP was ruled out, with its words", () => {
    const { svg } = timelineSvg(tl, { scale, startMs: t.startedAtMs, unfolded: new Set() });
    const laneSvg = (id: string) => {
      const from = svg.indexOf(`<g data-lane="${id}"`);
      const to = svg.indexOf("<g data-lane=", from + 1);
      return svg.slice(from, to < 0 ? undefined : to);
    };
    const m0 = tl.lanes.find((l) => l.messageId === "m0@a.example")!;
    // m0 was accepted by its first POST: it never reached the give-up (STATE-7), nor had a window to fall back in.
    expect(laneSvg(m0.id)).not.toContain('data-kind="give-up"');
    expect(laneSvg(m0.id)).not.toContain('data-band="fallback-window"');
    // m1 bounced at the give-up; its first answer ruled SMTP out (ERR-23).
    expect(laneSvg(m1.id)).toContain('data-kind="give-up"');
    expect(laneSvg(m1.id)).not.toContain('data-band="fallback-window"');
    expect(laneSvg(m1.id)).toMatch(
      /data-kind="ruled-out"[^>]*><title>SMTP ruled out at attempt 1: per-recipient results/,
    );
  });

  it("in the dark theme's colours: the background, the text and the lines", () => {
    const { svg } = timelineSvg(tl, {
      scale,
      startMs: t.startedAtMs,
      unfolded: new Set([m1.id]),
      palette: DARK_TIMELINE_PALETTE,
    });
    expect(svg).toContain(`<rect width="100%" height="100%" fill="${DARK_TIMELINE_PALETTE.bg}"`);
    expect(svg).toContain(`fill="${DARK_TIMELINE_PALETTE.fg}"`);
    expect(svg).not.toContain('fill="#1d2330"');
    expect(svg).not.toContain('fill="#f6f7f9"');
  });
});
