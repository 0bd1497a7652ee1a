import {
  Background,
  BaseEdge,
  Controls,
  EdgeLabelRenderer,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type EdgeProps,
  type Node,
  type NodeProps,
  useReactFlow,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useEffect, useEffectEvent, useMemo, useRef, useState } from "react";
import type { LaidEdge, LaidState, StatechartLayout } from "../../model/statechartLayout.ts";
import { canvasView, FIT_PADDING, panToShow, type Box } from "../../model/statechartView.ts";

type StateData = {
  readonly state: LaidState;
  /** `leaf`: the state the actor is in; `ancestor`: a state containing it. */
  readonly active?: "leaf" | "ancestor";
};
type TransitionData = {
  readonly edge: LaidEdge;
  readonly count: number;
  readonly last: boolean;
  readonly dimmed: boolean;
};
type StateNode = Node<StateData, "state"> | Node<Record<string, never>, "frame">;
type TransitionEdge = Edge<TransitionData, "transition">;

const hidden = { opacity: 0, pointerEvents: "none" as const };

/** A state's box: its name; a compound state holds its children; a final one has a double border. */
function StateBox({ data }: NodeProps<Node<StateData, "state">>) {
  const { state, active } = data;
  const kind = state.marker ? "marker" : state.compound ? "compound" : state.final ? "final" : "atomic";
  return (
    <div
      className={`sc-state sc-${kind}${active ? ` sc-active-${active}` : ""}`}
      data-state-id={state.marker ? undefined : state.id}
      data-active={active === "leaf" ? "true" : undefined}
      title={state.marker ? "initial state" : state.id}
    >
      <Handle type="target" position={Position.Top} style={hidden} isConnectable={false} />
      {!state.marker && <span className="sc-state-name">{state.label}</span>}
      {state.final && <span className="visually-hidden"> (final)</span>}
      <Handle type="source" position={Position.Bottom} style={hidden} isConnectable={false} />
    </div>
  );
}

/** A transition along ELK's route, with its label (name · row, trigger [guard]) and its fire count. */
function TransitionLine({ id, data, markerEnd }: EdgeProps<TransitionEdge>) {
  if (data === undefined) return null;
  const { edge, count, last, dimmed } = data;
  const [first, ...rest] = edge.points;
  const path = first === undefined ? "" : `M ${first.x} ${first.y} ${rest.map((p) => `L ${p.x} ${p.y}`).join(" ")}`;
  const cls = `sc-edge${last ? " sc-last" : ""}${dimmed ? " sc-dimmed" : ""}`;
  return (
    <>
      <BaseEdge id={id} path={path} className={cls} {...(markerEnd !== undefined && { markerEnd })} />
      {edge.label && (
        <EdgeLabelRenderer>
          <div
            className={`sc-edge-label${last ? " sc-last" : ""}${dimmed ? " sc-dimmed" : ""}`}
            data-transition={edge.transition?.meta?.name}
            data-transition-id={edge.id}
            data-count={count}
            data-last={last ? "true" : undefined}
            style={{
              transform: `translate(${edge.label.x}px, ${edge.label.y}px)`,
              width: edge.label.width,
            }}
          >
            <div className="sc-edge-name">{edge.lines[0]}</div>
            <div className="sc-edge-row">
              {edge.lines[1]}
              {count > 0 && (
                <span className="sc-count">
                  {edge.lines[1] !== "" && " · "}fired ×{count}
                </span>
              )}
            </div>
            <div className="sc-edge-trigger">{edge.lines[2]}</div>
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

/** An empty box the size of the whole layout, so that fitting the view takes in the edges and labels too. */
function Frame() {
  return null;
}

const nodeTypes = { state: StateBox, frame: Frame };
const edgeTypes = { transition: TransitionLine };

const FIT = { padding: FIT_PADDING };

/**
 * Shows the drawing at its default view (statechartView.ts: fitted, or at the zoom where its words read at
 * 11 px and more, the active state in view), and again whenever the canvas changes size (the window, the
 * panel beside it). Computed here from the layout's size and the canvas's own: the library's fitView is
 * queued behind its node measurements and, on a canvas that grows just after mounting, fitted the size it
 * had first. When the active state moves out of view, the drawing is panned just enough to show it.
 */
function FitToCanvas(p: {
  readonly width: number;
  readonly height: number;
  readonly layout: StatechartLayout;
  readonly focus: Box | undefined;
}) {
  const { setViewport, getViewport, viewportInitialized } = useReactFlow();
  const focusNow = useEffectEvent(() => p.focus);
  useEffect(() => {
    if (!viewportInitialized || p.width === 0 || p.height === 0 || p.layout.width === 0) return;
    const view = canvasView(p.layout, p.width, focusNow());
    void setViewport({ x: view.x, y: view.y, zoom: view.zoom });
  }, [setViewport, viewportInitialized, p.width, p.height, p.layout]);
  const { focus, width, height } = p;
  useEffect(() => {
    if (!viewportInitialized || focus === undefined || width === 0 || height === 0) return;
    const to = panToShow(getViewport(), focus, width, height);
    if (to) void setViewport({ ...getViewport(), ...to });
  }, [setViewport, getViewport, viewportInitialized, focus, width, height]);
  return null;
}

export interface StatechartCanvasProps {
  readonly layout: StatechartLayout;
  /** The active leaf and its ancestors. */
  readonly active: readonly string[];
  /** Fires per graph transition id, so far. */
  readonly counts: ReadonlyMap<string, number>;
  /** The transition just taken. */
  readonly last: string | undefined;
}

/** The delivery machine drawn from its layout, on a pannable, zoomable canvas. */
export function StatechartCanvas({ layout, active, counts, last }: StatechartCanvasProps) {
  const nodes = useMemo((): StateNode[] => {
    const byId = new Map(layout.states.map((s) => [s.id, s]));
    const leaf = active.at(-1);
    const frame: StateNode = {
      id: "(frame)",
      type: "frame",
      position: { x: 0, y: 0 },
      data: {},
      style: { width: layout.width, height: layout.height, pointerEvents: "none" },
      draggable: false,
      selectable: false,
      focusable: false,
    };
    const states = layout.states.map((s): StateNode => {
      const parent = s.parent === undefined ? undefined : byId.get(s.parent);
      const isActive = s.id === leaf ? "leaf" : active.includes(s.id) ? "ancestor" : undefined;
      return {
        id: s.id,
        type: "state",
        position: { x: s.x - (parent?.x ?? 0), y: s.y - (parent?.y ?? 0) },
        ...(parent !== undefined && { parentId: parent.id }),
        data: { state: s, ...(isActive !== undefined && { active: isActive }) },
        style: { width: s.width, height: s.height },
        draggable: false,
        selectable: false,
        focusable: false,
        zIndex: s.compound ? 0 : 1,
      };
    });
    return [frame, ...states];
  }, [layout, active]);
  const edges = useMemo(
    (): TransitionEdge[] =>
      layout.edges.map((e) => {
        const count = counts.get(e.id) ?? 0;
        return {
          id: e.id,
          source: e.source,
          target: e.target,
          type: "transition",
          markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
          data: { edge: e, count, last: e.id === last, dimmed: e.transition !== undefined && count === 0 },
          selectable: false,
          focusable: false,
          zIndex: e.id === last ? 3 : 2,
        };
      }),
    [layout, counts, last],
  );
  // The canvas takes the drawing's proportions at its width, within bounds, so the drawing fills it.
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const [innerHeight, setInnerHeight] = useState(0);
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const observer = new ResizeObserver(() => {
      setWidth(el.clientWidth);
      setInnerHeight(el.clientHeight);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const height = canvasView(layout, width).height;
  // The active state, kept in view when the drawing is larger than the canvas; with none (before a delivery
  // starts), where every delivery starts: the machine's initial marker (the root's is laid out first).
  const leaf = active.at(-1);
  const focus = useMemo(
    () => layout.states.find((s) => s.id === leaf) ?? layout.states.find((s) => s.marker),
    [layout, leaf],
  );
  return (
    <div className="sc-canvas" ref={box} style={{ height }}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        minZoom={0.2}
        maxZoom={2}
        nodesDraggable={false}
        nodesConnectable={false}
        nodesFocusable={false}
        edgesFocusable={false}
        elementsSelectable={false}
        zoomOnScroll={false}
        preventScrolling={false}
        zoomOnDoubleClick={false}
        colorMode="system"
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={24} size={1} />
        <Controls showInteractive={false} position="top-right" fitViewOptions={FIT} />
        {/* The height this render gives the canvas (inside its 1 px border), not the last one observed: a
            canvas that grew after mounting was fitted to its old height when the observer lagged behind. */}
        <FitToCanvas width={width} height={width === 0 ? innerHeight : height - 2} layout={layout} focus={focus} />
      </ReactFlow>
    </div>
  );
}
