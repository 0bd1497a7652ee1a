import { useMemo, useRef, useState, type KeyboardEvent } from "react";
import { flushSync } from "react-dom";
import { composeSvg } from "../imageExport.ts";
import { ImageExportButtons } from "../ImageExportButtons.tsx";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { messagesOf, sequenceMermaid, sequenceOf, type SequenceRow } from "../../../../app/trace/sequence.ts";
import { formatOffset } from "../../model/time.ts";
import { useWidth } from "../../hooks/useWidth.ts";
import "./sequence.css";

const ROW = 30;
const HEAD = 34;
const TIME_W = 96;
const VIEW_H = 460;
/** The select's value for the time range. */
const RANGE = "\u0000range";

export interface SequenceViewProps {
  readonly events: readonly RecordedEvent[];
  readonly startMs: number;
  readonly labels: ReadonlyMap<string, string>;
  /** The message of the selected delivery, if any. */
  readonly messageId: string | undefined;
  readonly onMessage: (messageId: string) => void;
  /** A time range to show instead (the timeline's window): every message's exchanges in it. */
  readonly range?: readonly [number, number] | undefined;
  readonly onRange?: (range: readonly [number, number] | undefined) => void;
  readonly exchangeId: string | undefined;
  readonly onExchange: (exchangeId: string) => void;
  readonly onSave: (name: string, contents: string, type: string) => void;
}

/** The sequence diagram of one message: participants across, virtual time down, quiet spans compressed. */
export function SequenceView({
  events,
  startMs,
  labels,
  messageId,
  onMessage,
  range,
  onRange,
  exchangeId,
  onExchange,
  onSave,
}: SequenceViewProps) {
  const name = (id: string) => labels.get(id) ?? id;
  const messages = useMemo(() => messagesOf(events), [events]);
  const shown = messageId && messages.includes(messageId) ? messageId : messages[0];
  const from = range?.[0];
  const to = range?.[1];
  const diagram = useMemo(
    () =>
      from !== undefined && to !== undefined
        ? sequenceOf(events, { fromMs: from, toMs: to }, startMs, 60_000, labels)
        : shown
          ? sequenceOf(events, shown, startMs)
          : { participants: [], rows: [] },
    [events, shown, startMs, from, to, labels],
  );
  const [mermaidOpen, setMermaidOpen] = useState(false);
  // The Mermaid text is made when it is shown or exported (a range can hold a big run's every exchange).
  const mermaid = useMemo(
    () => (mermaidOpen ? sequenceMermaid(diagram, startMs) : ""),
    [mermaidOpen, diagram, startMs],
  );
  const rangeText =
    from !== undefined && to !== undefined
      ? `${formatOffset(from, startMs).replace(/\.\d+$/, "")} – ${formatOffset(to, startMs).replace(/\.\d+$/, "")}`
      : undefined;
  const fileName = rangeText
    ? `sequence ${rangeText.replace(/[ :+–]+/g, "-").replace(/^-|-$/g, "")}`
    : name(shown ?? "sequence");
  const [boxRef, width] = useWidth(900);
  const [scrollTop, setScrollTop] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  const n = Math.max(1, diagram.participants.length);
  const colW = Math.max(140, (width - TIME_W - 16) / n);
  const cx = (i: number) => TIME_W + colW * (i + 0.5);
  const svgW = TIME_W + colW * n;
  // While an image is made every row is drawn, not only those scrolled into view.
  const [allRows, setAllRows] = useState(false);
  const first = allRows ? 0 : Math.max(0, Math.floor(scrollTop / ROW) - 4);
  const last = allRows ? diagram.rows.length : Math.min(diagram.rows.length, Math.ceil((scrollTop + VIEW_H) / ROW) + 4);

  return (
    <section aria-labelledby="sequence-heading" className="panel sequence-panel" ref={boxRef}>
      <div className="timeline-head">
        <h3 id="sequence-heading">Sequence diagram</h3>
        <label>
          Message{" "}
          <select
            value={rangeText ? RANGE : (shown ?? "")}
            onChange={(e) => (e.target.value === RANGE ? undefined : onMessage(e.target.value))}
          >
            {rangeText && <option value={RANGE}>time range {rangeText}</option>}
            {messages.map((m) => (
              <option key={m} value={m}>
                {name(m)}
              </option>
            ))}
          </select>
        </label>
        {rangeText && onRange && (
          <button onClick={() => onRange(undefined)} title="Back to one message">
            Clear range
          </button>
        )}
        <button
          onClick={() => onSave(`${fileName}.mmd`, `${sequenceMermaid(diagram, startMs)}\n`, "text/plain")}
          disabled={diagram.rows.length === 0}
        >
          Export Mermaid
        </button>
        <ImageExportButtons
          view="sequence"
          label="the sequence diagram"
          detail={rangeText ?? name(shown ?? "")}
          disabled={diagram.rows.length === 0}
          image={(panel) => {
            flushSync(() => setAllRows(true));
            try {
              return composeSvg(panel, {
                view: "sequence",
                svgs: "svg.sequence-head, svg.sequence-svg",
                stack: true,
                title: `Sequence diagram · ${rangeText ?? name(shown ?? "")}`,
              });
            } finally {
              setAllRows(false);
            }
          }}
        />
        <span className="muted" data-testid="sequence-count">
          {diagram.rows.length} rows{rangeText ? ` in ${rangeText}` : ""}
        </span>
      </div>
      {diagram.rows.length === 0 ? (
        <p className="muted">
          {rangeText
            ? `Nothing went over the wire in ${rangeText}.`
            : "Nothing went over the wire for this message yet."}
        </p>
      ) : (
        <>
          <svg width={svgW} height={HEAD} className="sequence-head" aria-hidden="true">
            {diagram.participants.map((p, i) => (
              <g key={p} transform={`translate(${cx(i)},0)`}>
                <rect x={-colW / 2 + 8} y={2} width={colW - 16} height={HEAD - 6} rx={4} className="participant" />
                <text y={HEAD / 2 + 4} textAnchor="middle" className="participant-name">
                  {p}
                </text>
              </g>
            ))}
          </svg>
          <div
            className="sequence-scroll"
            ref={scroller}
            style={{ maxHeight: VIEW_H }}
            onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
          >
            <svg
              width={svgW}
              height={diagram.rows.length * ROW + 8}
              className="sequence-svg"
              role="group"
              aria-label={rangeText ? `Sequence of ${rangeText}` : `Sequence of ${name(shown ?? "")}`}
              xmlns="http://www.w3.org/2000/svg"
            >
              {diagram.participants.map((p, i) => (
                <line key={p} x1={cx(i)} x2={cx(i)} y1={0} y2={diagram.rows.length * ROW + 8} className="lifeline" />
              ))}
              {diagram.rows.slice(first, last).map((r, k) => (
                <Row
                  key={`${r.seq}-${r.kind}-${first + k}`}
                  row={r}
                  y={(first + k) * ROW}
                  cx={cx}
                  svgW={svgW}
                  time={
                    first + k === 0 || diagram.rows[first + k - 1]?.timeMs !== r.timeMs
                      ? formatOffset(r.timeMs, startMs)
                      : ""
                  }
                  selected={r.exchangeId !== undefined && r.exchangeId === exchangeId}
                  onExchange={onExchange}
                />
              ))}
            </svg>
          </div>
          <details className="mermaid-text" onToggle={(e) => setMermaidOpen(e.currentTarget.open)}>
            <summary>Mermaid text</summary>
            <pre tabIndex={0} data-testid="sequence-mermaid">
              {mermaid}
            </pre>
          </details>
        </>
      )}
    </section>
  );
}

interface RowProps {
  readonly row: SequenceRow;
  readonly y: number;
  readonly cx: (i: number) => number;
  readonly svgW: number;
  readonly time: string;
  readonly selected: boolean;
  readonly onExchange: (exchangeId: string) => void;
}

function Row({ row: r, y, cx, svgW, time, selected, onExchange }: RowProps) {
  const mid = y + ROW / 2 + 6;
  const text = `${r.label}${r.results.length ? ` — ${r.results.join(", ")}` : ""}`;
  const clickable = r.exchangeId !== undefined;
  const common = {
    role: r.exchangeId !== undefined ? "button" : "img",
    "data-kind": r.kind,
    "data-seq": r.seq,
    ...(r.exchangeId !== undefined && { "data-exchange": r.exchangeId }),
    // The visible time and label, in that order and nothing between them, so the name holds the text one sees
    // (axe's label-content-name-mismatch, which a row with its time shown failed).
    "aria-label": time ? `${time} ${text}` : `same time, ${text}`,
    className: `seq-row ${r.kind}${r.broken ? " broken" : ""}${selected ? " selected" : ""}${clickable ? " clickable" : ""}`,
    ...(clickable && {
      tabIndex: 0,
      onClick: () => onExchange(r.exchangeId ?? ""),
      onKeyDown: (e: KeyboardEvent) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          onExchange(r.exchangeId ?? "");
        }
      },
    }),
  };
  // Hover: the exchange in words (a native tooltip), and where a click takes it.
  const hover = (
    <title>{`${time || "same time"}: ${text}${clickable ? ` — ${r.exchangeId}, click to inspect` : ""}`}</title>
  );
  const timeText = (
    <text x={4} y={mid + 4} className="seq-time">
      {/* A space after the time (collapsed when drawn) keeps it apart from the label in the row's text. */}
      {time ? `${time} ` : ""}
    </text>
  );
  if (r.kind === "gap")
    return (
      <g {...common}>
        <rect x={0} y={y + 4} width={svgW} height={ROW - 4} className="gap-band" />
        <text x={svgW / 2} y={mid + 2} textAnchor="middle" className="seq-label gap-label">
          {r.label}
        </text>
      </g>
    );
  if (r.from === r.to) {
    // A note starts at its lifeline, or ends there when it would run past the right edge.
    const w = Math.max(60, text.length * 6.4 + 12);
    const left = cx(r.from) + w > svgW - 4 ? Math.max(TIME_W, cx(r.from) - w + 4) : cx(r.from) - 4;
    return (
      <g {...common}>
        {hover}
        {timeText}
        <rect x={left} y={y + 6} width={w} height={ROW - 8} rx={3} className="note" />
        <text x={left + 8} y={mid + 2} className="seq-label">
          {text}
        </text>
      </g>
    );
  }
  const x1 = cx(r.from);
  const x2 = cx(r.to);
  const dir = x2 > x1 ? 1 : -1;
  const end = r.broken ? x1 + (x2 - x1) * 0.7 : x2 - dir * 2;
  const dashed = r.kind === "response" || r.kind === "dns-answer" || r.kind === "failure";
  return (
    <g {...common}>
      {hover}
      {timeText}
      <line x1={x1} x2={end} y1={mid} y2={mid} className={`arrow${dashed ? " dashed" : ""}`} />
      {r.broken ? (
        <path
          d={`M${end - 5},${mid - 5} L${end + 5},${mid + 5} M${end + 5},${mid - 5} L${end - 5},${mid + 5}`}
          className="break"
        />
      ) : (
        <path d={`M${end},${mid} l${-dir * 7},-4 l0,8 z`} className="head" />
      )}
      <text x={Math.min(x1, x2) + 8} y={mid - 5} className="seq-label">
        {text}
      </text>
    </g>
  );
}
