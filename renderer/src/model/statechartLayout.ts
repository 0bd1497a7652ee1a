/**
 * The delivery machine's drawing, laid out by ELK (layered, with nested
 * states): every state of the graph as a box (a compound state holding its
 * children, a final state marked), an initial marker per level, and every
 * transition as a routed edge labelled with its name, its row of SPEC.md's
 * table and what fires it. Built from the graph alone, so the drawing follows
 * the machine's definition; ELK is deterministic, so the same graph gives the
 * same drawing on every run.
 *
 * Uses elkjs's bundled build, which runs in the page (no worker, no eval:
 * the page's CSP allows neither) and in Node for the tests; it is loaded
 * when first needed, in a chunk of its own (it is large). The delivery
 * machine's layout is saved, so the app only runs ELK for a changed machine.
 */
import type { ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api.js";
import { sha256 } from "../../../app/protocol/sha256.ts";
import saved from "./deliveryMachineLayout.json" with { type: "json" };
import type { DeliveryGraph, DeliveryGraphTransition } from "./statechart.ts";

export interface Point {
  readonly x: number;
  readonly y: number;
}

/** A state's box, in absolute coordinates. */
export interface LaidState {
  readonly id: string;
  /** The name shown: the state's key (`judging`). */
  readonly label: string;
  readonly parent?: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly compound: boolean;
  readonly final: boolean;
  /** The initial marker of a level (the root's, or a compound state's): drawn as a dot. */
  readonly marker: boolean;
}

/** A transition's edge, in absolute coordinates. */
export interface LaidEdge {
  /** The graph transition's id (`attemptingOverService.judging#5`), or `<target>#initial` for an initial marker's. */
  readonly id: string;
  readonly source: string;
  readonly target: string;
  /** Absent for an initial marker's edge. */
  readonly transition?: DeliveryGraphTransition;
  /** The line of the edge: start, bends, end. */
  readonly points: readonly Point[];
  /** Where its label goes (absent for an initial marker's edge). */
  readonly label?: { readonly x: number; readonly y: number; readonly width: number; readonly height: number };
  /** The label's lines: `fallBackToSmtpAfterWindow`, `row 2`, `if fallbackEligibleAfterWindow`. */
  readonly lines: readonly string[];
}

export interface StatechartLayout {
  readonly width: number;
  readonly height: number;
  readonly states: readonly LaidState[];
  readonly edges: readonly LaidEdge[];
}

const CHAR_PX = 7.6;
const SMALL_CHAR_PX = 6.4;
const LINE_PX = 14;
/** Room kept on each label's second line for the fire count the view adds (` · fired ×126`). */
const COUNT_PX = 84;
const STATE_HEIGHT = 40;
const MARKER = 14;
const MARKER_SUFFIX = ".(initial)";

/**
 * The label's lines of a transition: its name, its row of the table (empty
 * for none; the view adds the fire count there), then what fires it —
 * `if <guard>` / `otherwise` for judging's eventless transitions (tried in
 * order), `after retryDelay, if <guard>`, `done: discover`.
 */
export function edgeLines(t: DeliveryGraphTransition): string[] {
  const name = t.meta?.name ?? t.label;
  const row = t.meta?.row;
  const when =
    t.trigger === "always"
      ? t.guard !== undefined
        ? `if ${t.guard}`
        : "otherwise"
      : `${t.label}${t.guard !== undefined ? `, if ${t.guard}` : ""}`;
  return [name, row !== undefined ? `row ${row}` : "", when];
}

/** The label's width: the name in bold, the row with room for the count, the trigger in smaller type. */
const widthOf = (lines: readonly string[]): number =>
  Math.ceil(
    Math.max(
      (lines[0] ?? "").length * CHAR_PX,
      (lines[1] ?? "").length * SMALL_CHAR_PX + COUNT_PX,
      (lines[2] ?? "").length * SMALL_CHAR_PX,
    ),
  );

/** ELK's input for `graph`: the nested states, initial markers and labelled transitions. */
export function elkInputOf(graph: DeliveryGraph): ElkNode {
  const byId = new Map<string, ElkNode>();
  const root: ElkNode = {
    id: "(root)",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.hierarchyHandling": "INCLUDE_CHILDREN",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.layered.spacing.nodeNodeBetweenLayers": "36",
      "elk.spacing.nodeNode": "28",
      "elk.spacing.edgeEdge": "14",
      "elk.spacing.edgeLabel": "4",
      "elk.layered.spacing.edgeNodeBetweenLayers": "18",
      "elk.layered.nodePlacement.strategy": "NETWORK_SIMPLEX",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
      "elk.randomSeed": "1",
    },
    children: [],
    edges: [],
  };
  byId.set("", root);
  const marker = (level: string, initial: string): void => {
    const container = byId.get(level);
    if (container === undefined) return;
    const id = `${level === "" ? "" : `${level}`}${MARKER_SUFFIX}`;
    container.children?.unshift({ id, width: MARKER, height: MARKER });
    (root.edges ??= []).push({ id: `${initial}#initial`, sources: [id], targets: [initial] });
  };
  for (const s of graph.states) {
    const compound = s.children.length > 0;
    const node: ElkNode = compound
      ? {
          id: s.id,
          children: [],
          layoutOptions: { "elk.padding": "[top=34,left=16,bottom=16,right=16]" },
        }
      : { id: s.id, width: Math.max(120, Math.ceil(s.key.length * 9) + 32), height: STATE_HEIGHT };
    byId.set(s.id, node);
    byId.get(s.parent ?? "")?.children?.push(node);
  }
  marker("", graph.initial);
  for (const s of graph.states) if (s.initial !== undefined) marker(s.id, s.initial);
  for (const t of graph.transitions) {
    const target = t.targets[0];
    if (target === undefined) continue;
    const lines = edgeLines(t);
    (root.edges ??= []).push({
      id: t.id,
      sources: [t.source],
      targets: [target],
      labels: [{ id: `${t.id}(label)`, text: lines.join("\n"), width: widthOf(lines), height: LINE_PX * 3 }],
    });
  }

  return root;
}

/** ELK's layout of `input` (async: ELK's API is; elkjs's bundled build, loaded when first needed). */
export async function runElk(input: ElkNode): Promise<ElkNode> {
  // Typed as the bundler sees it: under Node's own resolution (the gen script) the CommonJS default differs.
  const { default: ELK } = (await import("elkjs/lib/elk.bundled.js")) as unknown as {
    default: new () => { layout(graph: ElkNode): Promise<ElkNode> };
  };
  return new ELK().layout(structuredClone(input));
}

/** The hex SHA-256 of ELK's input: what a saved layout was computed from. */
export function elkInputHash(input: ElkNode): string {
  return [...sha256(new TextEncoder().encode(JSON.stringify(input)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** Lays the graph out with ELK (async: ELK's API is). */
export async function layoutStatechart(graph: DeliveryGraph): Promise<StatechartLayout> {
  return layoutFromElk(graph, await runElk(elkInputOf(graph)));
}

/** The drawing of `graph` from ELK's output `laid` for it: absolute positions, edges with their transitions. */
export function layoutFromElk(graph: DeliveryGraph, laid: ElkNode): StatechartLayout {
  const transitions = new Map<string, DeliveryGraphTransition>(graph.transitions.map((t) => [t.id, t]));
  // ELK gives each node relative to its parent, and each edge relative to its container.
  const origin = new Map<string, Point>([["(root)", { x: 0, y: 0 }]]);
  const states: LaidState[] = [];
  const walk = (node: ElkNode, at: Point, parent: string | undefined): void => {
    for (const child of node.children ?? []) {
      const abs = { x: at.x + (child.x ?? 0), y: at.y + (child.y ?? 0) };
      origin.set(child.id, abs);
      const isMarker = child.id.endsWith(MARKER_SUFFIX);
      const s = graph.states.find((g) => g.id === child.id);
      states.push({
        id: child.id,
        label: s?.key ?? "",
        ...(parent !== undefined && { parent }),
        x: abs.x,
        y: abs.y,
        width: child.width ?? 0,
        height: child.height ?? 0,
        compound: (child.children?.length ?? 0) > 0,
        final: s?.final ?? false,
        marker: isMarker,
      });
      walk(child, abs, child.id);
    }
  };
  walk(laid, { x: 0, y: 0 }, undefined);

  const edges: LaidEdge[] = [];
  const collect = (node: ElkNode): void => {
    for (const e of (node.edges ?? []) as (ElkExtendedEdge & { container?: string })[]) {
      const o = origin.get(e.container ?? "(root)") ?? { x: 0, y: 0 };
      const shift = (p: Point): Point => ({ x: p.x + o.x, y: p.y + o.y });
      const points = (e.sections ?? []).flatMap((sec) => [
        shift(sec.startPoint),
        ...(sec.bendPoints ?? []).map(shift),
        shift(sec.endPoint),
      ]);
      const t = transitions.get(e.id);
      const label = e.labels?.[0];
      edges.push({
        id: e.id,
        source: e.sources[0] ?? "",
        target: e.targets[0] ?? "",
        ...(t !== undefined && { transition: t }),
        points,
        ...(t !== undefined &&
          label !== undefined && {
            label: {
              x: o.x + (label.x ?? 0),
              y: o.y + (label.y ?? 0),
              width: label.width ?? 0,
              height: label.height ?? 0,
            },
          }),
        lines: t === undefined ? [] : edgeLines(t),
      });
    }
    for (const child of node.children ?? []) collect(child);
  };
  collect(laid);
  return { width: laid.width ?? 0, height: laid.height ?? 0, states, edges };
}

let cached: { graph: DeliveryGraph; layout: Promise<StatechartLayout> } | undefined;

/**
 * The layout of `graph`, computed once per graph. The delivery machine's is saved
 * (`deliveryMachineLayout.json`, written by `node scripts/gen-statechart-layout.ts`: ELK's output and the hash of the input it came from), so the app does
 * not run ELK on the page's thread (~0.4 s) while a run's first views draw; another graph, or a changed
 * machine, is laid out by ELK. A test checks the saved layout is ELK's for the machine as it is.
 */
export function statechartLayout(graph: DeliveryGraph): Promise<StatechartLayout> {
  if (cached?.graph !== graph) {
    const input = elkInputOf(graph);
    cached = {
      graph,
      layout:
        elkInputHash(input) === saved.inputSha256
          ? Promise.resolve(layoutFromElk(graph, saved.laid as ElkNode))
          : runElk(input).then((laid) => layoutFromElk(graph, laid)),
    };
  }
  return cached.layout;
}
