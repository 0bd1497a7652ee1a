/// <reference types="vite/client" />
import type { AnyStateNode, AnyTransitionDefinition } from "xstate";
import { describe, expect, it } from "vitest";
import { runScenarioText } from "../sim/runScenario.ts";
import { deliveryMachine as machine } from "./deliveryMachine.ts";
import { deliveryMachineGraph, machineGraph, transitionsMatching } from "./machineGraph.ts";

const graph = deliveryMachineGraph();

/** Every state node of the machine, root first, by walking `states` (independently of the graph's own walk). */
function stateNodes(node: AnyStateNode = machine.root): AnyStateNode[] {
  return [node, ...(Object.values(node.states) as AnyStateNode[]).flatMap((child) => stateNodes(child))];
}

const pathOf = (node: AnyStateNode): string => node.path.join(".");

describe("deliveryMachineGraph: the graph is the machine", () => {
  it("has every state node of the machine, with its parent, initial child and finality", () => {
    const nodes = stateNodes().filter((n) => n.path.length > 0);
    expect(graph.states.map((s) => s.id)).toEqual(nodes.map(pathOf));
    for (const node of nodes) {
      const state = graph.states.find((s) => s.id === pathOf(node));
      expect(state?.type).toBe(node.type);
      expect(state?.final).toBe(node.type === "final");
      expect(state?.parent).toBe(
        node.parent !== undefined && node.parent.path.length > 0 ? pathOf(node.parent) : undefined,
      );
      expect(state?.initial).toBe(
        node.type === "compound" ? pathOf(node.initial.target[0] as AnyStateNode) : undefined,
      );
      expect(state?.children).toEqual((Object.values(node.states) as AnyStateNode[]).map(pathOf));
    }
    expect(graph.machine).toBe("delivery");
    expect(graph.initial).toBe("attemptingOverService");
    expect(graph.states.find((s) => s.id === "attemptingOverService")?.initial).toBe(
      "attemptingOverService.discovering",
    );
    expect(graph.states.filter((s) => s.final).map((s) => s.id)).toEqual(["handedToSmtp", "finished", "bounced"]);
  });

  it("has every transition of every state node, `always` and `after` included, with its guard and meta", () => {
    const defined: { t: AnyTransitionDefinition; always: boolean }[] = stateNodes().flatMap((node) => [
      ...[...node.transitions.values()].flat().map((t) => ({ t, always: false })),
      ...(node.always ?? []).map((t) => ({ t, always: true })),
    ]);
    expect(graph.transitions).toHaveLength(defined.length);
    for (const { t, always } of defined) {
      // A guard is named by a string, or by `{ type, params }` when it reads the done event's output (endpointFound).
      const guard = typeof t.guard === "string" ? t.guard : (t.guard as { type?: string } | undefined)?.type;
      const found = graph.transitions.filter(
        (g) =>
          g.source === pathOf(t.source) &&
          JSON.stringify(g.targets) === JSON.stringify((t.target ?? []).map(pathOf)) &&
          g.event === (always ? undefined : t.eventType) &&
          g.guard === guard &&
          JSON.stringify(g.meta) === JSON.stringify(t.meta),
      );
      expect(found, `${pathOf(t.source)} ${String(t.eventType)} ${guard ?? ""}`).toHaveLength(
        // The two `handedOver` transitions of handingToSmtp differ by event only; senderFault likewise.
        1,
      );
      expect(found[0]?.actions).toEqual(
        t.actions.map((a) => (typeof a === "string" ? a : (a as { type: string }).type)),
      );
    }
  });

  it("keeps judging's eventless transitions, in the order of precedence, each naming its row of the table", () => {
    const judging = graph.transitions.filter((t) => t.source === "attemptingOverService.judging");
    expect(judging.every((t) => t.trigger === "always" && t.event === undefined && t.label === "always")).toBe(true);
    expect(judging.map((t) => [t.order, t.meta?.name, t.guard, t.meta?.row])).toEqual([
      [0, "handOffNoCommonVersion", "noCommonVersion", 3],
      [1, "deliverByPlainSmtp", "noServiceWhileSmtpAllowed", undefined],
      [2, "finishAllAccepted", "everyRecipientAccepted", undefined],
      [3, "finishNothingPending", "nothingPending", 8],
      [4, "giveUpAfterAttempt", "fiveDaysElapsed", 6],
      [5, "retryDeferredRecipients", "onlyDeferredPending", 5],
      [6, "fallBackToSmtpAfterWindow", "fallbackEligibleAfterWindow", 2],
      [7, "retryWithinFallbackWindow", "fallbackEligibleWithinWindow", 1],
      [8, "retrySmtpRuledOut", "fallbackEligibleButSmtpRuledOut", undefined],
      [9, "retryNotFallbackEligible", undefined, 4],
    ]);
    // XState's own JSON leaves them out: the reason this module walks the state nodes.
    expect(JSON.stringify(machine.toJSON())).not.toContain("handOffNoCommonVersion");
  });

  it("names the table's rows 1–6 and 8 (row 7 is the receiver's DSN, not the sender's machine)", () => {
    const rows = new Set(graph.transitions.flatMap((t) => (t.meta?.row === undefined ? [] : [t.meta.row])));
    expect([...rows].sort()).toEqual([1, 2, 3, 4, 5, 6, 8]);
    for (const t of graph.transitions) {
      expect(t.meta?.name, t.id).toMatch(/^[a-z][A-Za-z]+$/);
      expect(t.meta?.rules.length, t.id).toBeGreaterThan(0);
    }
  });

  it("gives delayed transitions their delay, and done/error transitions their actor", () => {
    const retry = graph.transitions.filter((t) => t.source === "retryScheduled");
    expect(retry.map((t) => [t.label, t.delay, t.order, t.targets, t.meta?.name])).toEqual([
      ["after giveUpDelay", "giveUpDelay", 0, ["bounced"], "giveUpWhileRetrying"],
      ["after retryDelay", "retryDelay", 0, ["attemptingOverService"], "retryDeferredAsNewDelivery"],
      ["after retryDelay", "retryDelay", 1, ["attemptingOverService"], "retrySameDelivery"],
    ]);
    expect(retry.every((t) => t.trigger === "after" && t.event?.startsWith("xstate.after.") === true)).toBe(true);
    const discovering = graph.transitions.filter((t) => t.source === "attemptingOverService.discovering");
    expect(discovering.map((t) => [t.label, t.guard, t.order, t.meta?.name])).toEqual([
      ["done: discover", "endpointFound", 0, "postToEndpoint"],
      ["done: discover", undefined, 1, "discoveryEnded"],
      ["error: discover", undefined, 0, "senderFault"],
    ]);
    expect(new Set(graph.transitions.map((t) => t.id)).size).toBe(graph.transitions.length);
  });

  it("describes states: tags, entry actions without XState's timers, invoked actors", () => {
    const byId = new Map(graph.states.map((s) => [s.id, s]));
    expect(byId.get("retryScheduled")?.entry).toEqual(["traceTimerSet"]);
    expect(byId.get("retryScheduled")?.exit).toEqual([]);
    expect(byId.get("attemptingOverService")?.tags).toEqual(["busy"]);
    expect(byId.get("attemptingOverService.posting")?.invoke).toEqual(["post"]);
    expect(byId.get("bounced")?.entry).toEqual([
      "bouncePending",
      "traceBounce",
      "traceNewOutcomes",
      "reportNewFailures",
    ]);
  });

  it("is plain JSON: structuredClone and a JSON round trip give it back unchanged", () => {
    expect(structuredClone(graph)).toStrictEqual(graph);
    expect(JSON.parse(JSON.stringify(graph))).toStrictEqual(graph);
    expect(deliveryMachineGraph()).toStrictEqual(graph);
  });

  it("refuses meta that is not plain data", async () => {
    const { setup } = await import("xstate");
    const bad = setup({}).createMachine({
      initial: "a",
      states: { a: { on: { GO: { target: "b", meta: { at: new Date(0) } } } }, b: {} },
    });
    expect(() => machineGraph(bad)).toThrow(/a#0\.meta\.at is not plain JSON data/);
  });
});

describe("transitionsMatching", () => {
  it("accepts a state path or a path inside the target, and any event for an eventless transition", () => {
    const judged = {
      from: "attemptingOverService.judging",
      to: "retryScheduled",
      event: "xstate.done.actor.0.delivery.attemptingOverService.posting",
      transition: "retryNotFallbackEligible",
    };
    expect(transitionsMatching(graph, judged).map((t) => t.meta?.name)).toEqual(["retryNotFallbackEligible"]);
    const retry = {
      from: "retryScheduled",
      to: "attemptingOverService.discovering",
      event: "xstate.after.retryDelay.delivery.retryScheduled",
    };
    expect(transitionsMatching(graph, retry).map((t) => t.meta?.name)).toEqual([
      "retryDeferredAsNewDelivery",
      "retrySameDelivery",
    ]);
    expect(transitionsMatching(graph, { ...retry, to: "attemptingOverService" })).toHaveLength(2);
    expect(transitionsMatching(graph, { ...retry, to: "attemptingOverServiceX" })).toEqual([]);
    expect(transitionsMatching(graph, { ...retry, to: "finished" })).toEqual([]);
    expect(transitionsMatching(graph, { ...retry, event: "xstate.after.giveUpDelay.delivery.retryScheduled" })).toEqual(
      [],
    );
  });
});

/** The library, read by Vite at build time: the core's tests may not import node:fs. */
const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });
const scenarioFiles = Object.keys(library)
  .map((path) => path.replace(/^.*\//, ""))
  .sort();

describe("every transition the library's scenarios take is an edge of the graph", () => {
  const taken = new Map<string, number>();
  it("finds the library", () => {
    expect(scenarioFiles.length).toBeGreaterThan(40);
  });
  it.each(scenarioFiles)("%s", { timeout: 120_000 }, async (name) => {
    // No scenario of the library names an .eml file; one that did would fail to load here, and say so.
    const text = library[`../../scenarios/${name}`] ?? "";
    const outcome = await runScenarioText(text, { file: `scenarios/${name}` });
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("; "));
    const recorded = outcome.run.trace.events.filter((e) => e.name === "machine.transition");
    expect(recorded.length).toBeGreaterThan(0);
    for (const e of recorded) {
      const d = e.data ?? {};
      const transition = {
        from: String(d["from"]),
        to: String(d["to"]),
        event: String(d["event"]),
        ...(typeof d["transition"] === "string" && { transition: d["transition"] }),
      };
      const edges = transitionsMatching(graph, transition);
      expect(edges.length, `${name}: seq ${e.seq} ${JSON.stringify(transition)}`).toBeGreaterThan(0);
      for (const edge of edges) taken.set(edge.id, (taken.get(edge.id) ?? 0) + 1);
    }
  });

  it("and the library takes every transition but a few that need a fault of the sender's own ports or a close race", () => {
    if (taken.size === 0) return; // run alone (-t): nothing to compare
    const mayStayUntaken = new Set([
      // A discover or post port that throws: a bug of the sender, not a network condition.
      "senderFault",
      // The SMTP relay port rejecting (the simulated relay answers, accepted or not).
      "handedOver",
      // An attempt that ends at or after the give-up time: giveUpWhileRetrying's timer usually fires first.
      "giveUpAfterAttempt",
    ]);
    const untaken = graph.transitions.filter((t) => !taken.has(t.id));
    expect(untaken.filter((t) => !mayStayUntaken.has(t.meta?.name ?? "")).map((t) => t.id)).toEqual([]);
  });
});
