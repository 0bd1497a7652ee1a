import { describe, expect, it } from "vitest";
import { activeStates, actorChart, chartAt, deliveryActors, deliveryGraph } from "./statechart.ts";
import { layoutStatechart } from "./statechartLayout.ts";
import { statechartSvg } from "./statechartSvg.ts";
import { scenarioTrace } from "./testing.ts";

describe("the statechart as SVG (export the statechart as SVG and PNG)", () => {
  it("STATE-3: draws every state and transition of the layout, the active state and the last transition marked", async () => {
    const trace = await scenarioTrace("receiver-down-past-fallback-window");
    const graph = deliveryGraph();
    const layout = await layoutStatechart(graph);
    const actor = deliveryActors(trace.events)[0];
    if (actor === undefined) throw new Error("no delivery");
    const chart = actorChart(trace.events, actor, trace.startedAtMs, graph);
    const at = chartAt(chart, trace.events.at(-1)?.timeMs ?? 0);
    const { svg, width, height } = statechartSvg(layout, {
      active: activeStates(at.state),
      counts: at.counts,
      last: at.last?.transitionId,
      title: `Delivery machine · ${actor}`,
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(width).toBeGreaterThan(layout.width);
    expect(height).toBeGreaterThan(layout.height);
    for (const s of layout.states.filter((s) => !s.marker)) expect(svg).toContain(`data-state-id="${s.id}"`);
    for (const e of layout.edges) expect(svg).toContain(`data-transition-id="${e.id}"`);
    // The delivery ended in SMTP after the fallback window: that state is active, and the transition into it the last.
    expect(svg).toMatch(/data-state-id="[^"]*" data-active="true"/);
    expect(svg).toContain('data-last="true"');
    expect(svg).toContain("fallBackToSmtpAfterWindow");
    expect(svg).toMatch(/fired ×1/);
    // Well-formed enough to parse: every opened group is closed, no stray markup from labels.
    expect(svg.match(/<g[ >]/g)?.length).toBe(svg.match(/<\/g>/g)?.length);
    expect(svg).not.toMatch(/<(?!\/?(svg|rect|text|g|path|circle|defs|marker)[ >/])/);
  });
});
