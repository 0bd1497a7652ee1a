import { useEffect, useMemo, useState } from "react";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import {
  activeStates,
  actorChart,
  chartAt,
  chartAtRow,
  deliveryActors,
  deliveryGraph,
  rowAtTime,
  type HistoryRow,
} from "../../model/statechart.ts";
import { statechartLayout, type StatechartLayout } from "../../model/statechartLayout.ts";
import { LIGHT_PALETTE, statechartSvg, type StatechartPalette } from "../../model/statechartSvg.ts";
import { ImageExportButtons } from "../ImageExportButtons.tsx";
import { StatechartCanvas } from "./StatechartCanvas.tsx";
import { TransitionHistory } from "./TransitionHistory.tsx";
import { ContextPanel } from "./ContextPanel.tsx";
import { deliveryContext } from "../../model/deliveryContext.ts";
import { pickList } from "../../model/pickList.ts";
import "./statechart.css";

/** Deliveries up to which the picker is a plain menu; past it a search box narrows it. */
const PICKER_SEARCH_FROM = 20;

export interface StatechartViewProps {
  /** The run's events so far. */
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  readonly playheadMs: number;
  /** The delivery actor selected elsewhere (the outcomes table), if any. */
  readonly delivery: string | undefined;
  readonly onSelectDelivery: (delivery: string | undefined) => void;
  /** Marks events in the log (a history row's event). */
  readonly onEvents: (seqs: readonly number[]) => void;
  readonly onRule: (rule: string) => void;
  /**
   * A step to show, chosen elsewhere (a Why clause's machine.transition): the machine right after it, pinned as a
   * history row's click pins it. A new `nonce` shows it again.
   */
  readonly step?: { readonly seq: number; readonly nonce: number } | undefined;
}

/**
 * The delivery machine of the selected delivery: the statechart with the
 * active state at the playhead, the transition just taken, counts and the
 * transitions not taken; beside it the history of transitions and why each
 * guard chose what it chose. A history row shows the machine right after it.
 */
export function StatechartView(p: StatechartViewProps) {
  const graph = deliveryGraph();
  const [layout, setLayout] = useState<StatechartLayout | undefined>();
  const [layoutError, setLayoutError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    statechartLayout(graph).then(
      (l) => live && setLayout(l),
      (e: unknown) => live && setLayoutError(String(e)),
    );
    return () => {
      live = false;
    };
  }, [graph]);

  const actors = useMemo(() => deliveryActors(p.events), [p.events]);
  const actor = p.delivery !== undefined && actors.includes(p.delivery) ? p.delivery : actors[0];
  const [pickQuery, setPickQuery] = useState("");
  const picked = useMemo(
    () => (actors.length > PICKER_SEARCH_FROM ? pickList(actors, pickQuery, actor) : { items: actors, more: 0 }),
    [actors, pickQuery, actor],
  );
  const chart = useMemo(
    () => (actor === undefined ? undefined : actorChart(p.events, actor, p.startMs, graph)),
    [p.events, actor, p.startMs, graph],
  );
  const [pinned, setPinned] = useState<{ readonly actor: string; readonly index: number } | undefined>();
  const pin = pinned !== undefined && pinned.actor === actor ? pinned.index : undefined;
  const atPlayhead = chart === undefined ? -1 : rowAtTime(chart, p.playheadMs);
  const current = pin ?? atPlayhead;
  const at =
    chart === undefined ? undefined : pin !== undefined ? chartAtRow(chart, pin) : chartAt(chart, p.playheadMs);
  const rows = useMemo(() => chart?.history.slice(0, atPlayhead + 1) ?? [], [chart, atPlayhead]);
  const active = useMemo(() => activeStates(at?.state), [at?.state]);
  // The step shown: the pinned row's time, else the playhead's (the delivery's context at it).
  const nowMs = pin !== undefined ? (chart?.history[pin]?.timeMs ?? p.playheadMs) : p.playheadMs;
  const context = chart !== undefined && at !== undefined ? deliveryContext(chart, at, p.startMs, nowMs) : undefined;

  // A step chosen elsewhere: pinned once the chart has its row (the events may arrive a moment later), as
  // React adjusts state to a prop while rendering; later clicks and "Follow the playhead" change it as usual.
  const [shownStep, setShownStep] = useState<number | undefined>();
  if (p.step !== undefined && chart !== undefined && shownStep !== p.step.nonce) {
    const seq = p.step.seq;
    const row = chart.history.find((r) => r.seq === seq);
    if (row !== undefined) {
      setShownStep(p.step.nonce);
      setPinned({ actor: chart.actor, index: row.index });
    }
  }

  const pick = (row: HistoryRow) => {
    if (actor === undefined) return;
    setPinned({ actor, index: row.index });
    p.onEvents([row.seq]);
  };

  return (
    <section aria-labelledby="statechart-heading" className="panel statechart">
      <div className="panel-head">
        <h3 id="statechart-heading">Delivery machine</h3>
        {actors.length > 0 && (
          <span className="sc-picker">
            {/* A run of thousands of deliveries: the words typed narrow the menu. */}
            {actors.length > PICKER_SEARCH_FROM && (
              <input
                type="search"
                aria-label="Find a delivery"
                placeholder={`Find among ${actors.length} deliveries`}
                value={pickQuery}
                onChange={(e) => setPickQuery(e.target.value)}
              />
            )}
            <label>
              Delivery{" "}
              <select
                aria-label="Delivery shown in the statechart"
                value={actor ?? ""}
                onChange={(e) => {
                  setPinned(undefined);
                  p.onSelectDelivery(e.target.value || undefined);
                }}
              >
                {picked.items.map((a) => (
                  <option key={a} value={a}>
                    {a}
                  </option>
                ))}
                {picked.more > 0 && (
                  <option disabled value="">
                    {picked.more} more: type to narrow
                  </option>
                )}
              </select>
            </label>
          </span>
        )}
        <ImageExportButtons
          view="statechart"
          label="the delivery machine"
          {...(actor !== undefined && { detail: actor })}
          disabled={layout === undefined}
          image={() => {
            if (layout === undefined) throw new Error("the machine is still being laid out");
            return statechartSvg(layout, {
              active,
              counts: at?.counts ?? new Map(),
              last: at?.last?.transitionId,
              title: `Delivery machine${actor !== undefined ? ` · ${actor}` : ""}${at?.state !== undefined ? ` · ${at.state}` : ""}`,
              palette: pagePalette(),
            });
          }}
        />
      </div>
      {actor === undefined ? (
        <p className="sc-status muted" data-testid="statechart-status">
          No delivery has started yet: the machine every delivery follows, from discovering to its outcome.
        </p>
      ) : (
        <p className="sc-status" role="status" data-testid="statechart-status">
          <Headline text={context?.headline ?? ""} state={at?.state} />
          {at?.last && (
            <span className="muted">
              {" "}
              · last: <code>{at.last.name}</code>
              {at.last.row !== undefined && ` (row ${at.last.row})`} at {at.last.at}
            </span>
          )}
          {pin !== undefined ? (
            <span>
              {" "}
              · pinned to a transition of the history{" "}
              <button className="chip" onClick={() => setPinned(undefined)}>
                Follow the playhead
              </button>
            </span>
          ) : null}
        </p>
      )}
      {/* With no delivery shown (before the run), nothing goes beside the drawing: it takes the whole width. */}
      <div className={actor === undefined ? "sc-grid sc-alone" : "sc-grid"}>
        {layout ? (
          <StatechartCanvas
            layout={layout}
            active={active}
            counts={at?.counts ?? new Map()}
            last={at?.last?.transitionId}
          />
        ) : (
          <p className="muted sc-canvas">{layoutError ?? "Laying out the machine…"}</p>
        )}
        {actor !== undefined && (
          <div className="sc-side">
            {context !== undefined && <ContextPanel context={context} onEvent={(seq) => p.onEvents([seq])} />}
            <TransitionHistory
              rows={rows}
              current={current}
              pinned={pin !== undefined}
              onPick={pick}
              onRule={p.onRule}
            />
          </div>
        )}
      </div>
    </section>
  );
}

/** The headline (`bob@b.example is in retryScheduled; …`) with its state in bold. */
function Headline({ text, state }: { readonly text: string; readonly state: string | undefined }) {
  const at = state === undefined ? -1 : text.indexOf(state);
  if (state === undefined || at < 0) return <span data-testid="statechart-headline">{text}</span>;
  return (
    <span data-testid="statechart-headline">
      {text.slice(0, at)}
      <strong data-testid="active-state">{state}</strong>
      {text.slice(at + state.length)}
    </span>
  );
}

/** The page's theme colours, for the exported drawing. */
function pagePalette(): StatechartPalette {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  return {
    fg: v("--fg", LIGHT_PALETTE.fg),
    muted: v("--muted", LIGHT_PALETTE.muted),
    bg: v("--bg", LIGHT_PALETTE.bg),
    surface: v("--surface", LIGHT_PALETTE.surface),
    accent: v("--accent", LIGHT_PALETTE.accent),
    accentFg: v("--accent-fg", LIGHT_PALETTE.accentFg),
    accentSoft: v("--accent-soft", LIGHT_PALETTE.accentSoft),
  };
}
