/**
 * A trace as a bug report in Markdown: a summary, each recipient's outcome
 * and why (app/trace/explain.ts), the Mermaid sequence diagram the app draws (app/trace/sequence.ts), the
 * invariant and expectation results, the scenario text, and the command
 * that reproduces the run (`mailscope run <file> --seed N --set …`).
 * GitHub, GitLab and most Markdown viewers draw the diagram.
 */
import { gapById } from "../protocol/gaps.ts";
import { evidenceText, explainOutcomes } from "./explain.ts";
import { leftOut, redactEvent, redactedEvents, redactSource } from "./exportJson.ts";
import { formatDuration, formatOffset } from "./offset.ts";
import { sequenceMermaid, sequenceOfEvents } from "./sequence.ts";
import type { CheckResult, RecordedEvent, Trace } from "./schema.ts";
import { eventsOf, type EventSequence } from "./store.ts";
import { maxOf, pushAll } from "../protocol/lists.ts";

/** Options of {@link exportMarkdown}. */
export interface ExportMarkdownOptions {
  /** The scenario file for the command, if the trace does not name one. */
  readonly file?: string;
  /** Rows of the sequence diagram (arrows and notes) before the rest is summarised. Default 150. */
  readonly maxDiagramMessages?: number;
}

/** The bug report. Private keys in the scenario text are redacted. */
export function exportMarkdown(trace: Trace, options: ExportMarkdownOptions = {}): string {
  // The events one at a time, from a recorder's store when it holds them, each pass redacting what it reads as
  // redactTrace would (decision 0225): a fleet's report holds neither all its events nor a redacted copy of them.
  const events = eventsOf(trace);
  const out: string[] = [];
  out.push(`# Mailscope run: ${inline(trace.scenario.name)}`, "");
  const checks = checkResults(trace, events);
  pushAll(out, summary(trace, events, checks)).push("");
  pushAll(out, ["## Outcomes", "", ...outcomes(trace, events), ""]);
  pushAll(out, ["## Why", "", ...why(trace, events), ""]);
  pushAll(out, ["## Exchanges", "", ...diagram(trace, events, options.maxDiagramMessages ?? 150), ""]);
  if (checks.length > 0) pushAll(out, ["## Checks", "", ...checkTable(checks), ""]);
  if (trace.scenario.source !== undefined) {
    out.push("## Scenario", "", fence(redactSource(trace.scenario.source), "yaml"), "");
  }
  out.push("## Reproduce", "", fence(reproduceCommand(trace, options.file), "sh"), "");
  return out.join("\n");
}

/** `mailscope run <file> --seed N --set G…=… --set RETRY-…=…` for the readings that differ from the defaults and the draft's numbers that depart from SPEC.md's. */
export function reproduceCommand(trace: Trace, file?: string): string {
  const scenarioFile = trace.scenario.file ?? file ?? `scenarios/${trace.scenario.name}.yaml`;
  const parts = ["mailscope", "run", shellQuote(scenarioFile), "--seed", shellQuote(String(trace.seed))];
  for (const [id, value] of Object.entries(trace.readings).sort(([a], [b]) => gapNumber(a) - gapNumber(b))) {
    const reading = compactReading(value);
    const gap = gapById(id);
    if (gap?.defaultValue !== undefined && compactReading(gap.defaultValue) === reading) continue;
    if (gap !== undefined && !gap.switchable) continue;
    parts.push("--set", shellQuote(`${id}=${reading}`));
  }
  // The draft's numbers the run departed to, by their knobs.
  for (const [name, value] of Object.entries(trace.constants ?? {}))
    parts.push("--set", shellQuote(`${name}=${value}`));
  return parts.join(" ");
}

/** The events named `name`, redacted as the report's (redactTrace's way, bodies out). */
function redactedNamed(events: Iterable<RecordedEvent>, name: string): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (const e of events) if (e.name === name) out.push(redactEvent(e, true));
  return out;
}

function summary(trace: Trace, events: EventSequence, checks: readonly CheckResult[]): string[] {
  // Names and times only (what redaction leaves as they are), counted in one pass.
  let lastMs = trace.startedAtMs;
  const counts = new Map<string, number>();
  for (const e of events) {
    lastMs = e.timeMs;
    counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
  }
  const count = (name: string): number => counts.get(name) ?? 0;
  const failures = count("http.failure");
  const lines = [
    "## Summary",
    "",
    `- **Scenario:** ${inline(trace.scenario.name)}${trace.scenario.file !== undefined ? ` (\`${trace.scenario.file}\`)` : ""}`,
    `- **Seed:** \`${String(trace.seed)}\``,
    `- **Mailscope:** ${inline(trace.mailscope)}, trace version ${trace.version}`,
    `- **Virtual time:** from ${new Date(trace.startedAtMs).toISOString()} for ${formatDuration(lastMs - trace.startedAtMs)}`,
    `- **Readings:** ${readingsLine(trace.readings)}`,
    ...(trace.constants !== undefined && Object.keys(trace.constants).length > 0
      ? [
          `- **Departs from SPEC.md:** ${Object.entries(trace.constants)
            .map(([name, value]) => `${name}=${inline(value)}`)
            .join("; ")} (the draft's own numbers changed for this run; the checks follow them)`,
        ]
      : []),
    `- **Events:** ${events.length}; messages submitted: ${count("message.submitted")}; HTTP exchanges: ${count("http.request")}` +
      ` (${failures} without an answer); DNS queries: ${count("dns.query")}; SMTP hand-offs: ${count("smtp.handoff")}`,
    `- **${leftOut("report", trace, false).replace(/^Left out: /, "Left out:** ")}`,
  ];
  if (checks.length > 0) {
    const failed = checks.filter((c) => !c.passed);
    lines.push(
      failed.length === 0
        ? `- **Checks:** all ${checks.length} passed`
        : `- **Checks:** ${failed.length} of ${checks.length} FAILED: ${failed.map((c) => `\`${c.id}\``).join(", ")}`,
    );
  }
  return lines;
}

function readingsLine(readings: Readonly<Record<string, string>>): string {
  const entries = Object.entries(readings).sort(([a], [b]) => gapNumber(a) - gapNumber(b));
  if (entries.length === 0) return "defaults";
  return entries
    .map(([id, value]) => {
      const gap = gapById(id);
      const changed = gap?.defaultValue !== undefined && compactReading(gap.defaultValue) !== compactReading(value);
      return `${id}=${inline(value)}${changed ? " (not the default)" : ""}`;
    })
    .join("; ");
}

function outcomes(trace: Trace, events: Iterable<RecordedEvent>): string[] {
  const rows = redactedNamed(events, "recipient.outcome");
  if (rows.length === 0) return ["No recipient reached a final outcome in this run."];
  return [
    "| Recipient | Message | Outcome | Rule | At |",
    "|---|---|---|---|---|",
    ...rows.map((e) => {
      const d = e.data ?? {};
      return `| ${cell(d["recipient"])} | ${cell(d["messageId"])} | ${cell(d["outcome"])} | ${cell(d["rule"])} | ${cell(formatOffset(e.timeMs, trace.startedAtMs))} |`;
    }),
  ];
}

/**
 * Why each recipient got its outcome, in the words of app/trace/explain.ts (the app's Why panel and
 * `mailscope run --explain` say the same): the headline, then each clause with the seqs of its events.
 */
function why(trace: Trace, events: Iterable<RecordedEvent>): string[] {
  const whys = explainOutcomes(redactedEvents(events, true), trace.startedAtMs);
  if (whys.length === 0) return ["No message was submitted in this run."];
  return whys.flatMap((w) => [
    `- \`${inline(w.recipient)}\` of \`${inline(w.messageId)}\`: ${inline(w.headline)}`,
    ...w.clauses.map((c, i) => `  ${i + 1}. ${inline(c.text)} (${evidenceText(c)})`),
  ]);
}

function checkResults(trace: Trace, events: Iterable<RecordedEvent>): CheckResult[] {
  const fromEvents = (name: string): CheckResult[] =>
    redactedNamed(events, name).map((e) => ({
      id: String(e.data?.["id"] ?? "?"),
      passed: e.data?.["passed"] === true,
      ...(typeof e.data?.["detail"] === "string" ? { detail: e.data["detail"] } : {}),
    }));
  return [
    ...(trace.invariants ?? fromEvents("invariant.checked")),
    ...(trace.expectations ?? fromEvents("expectation.checked")),
  ];
}

function checkTable(checks: readonly CheckResult[]): string[] {
  return [
    "| Check | Result | Detail |",
    "|---|---|---|",
    ...checks.map((c) => `| ${cell(c.id)} | ${c.passed ? "passed" : "**FAILED**"} | ${cell(c.detail ?? "")} |`),
  ];
}

// ---------------------------------------------------------------------------
// The sequence diagram

/**
 * The run's sequence diagram as the app draws it over the whole run (app/trace/sequence.ts): every sending
 * domain's sender, DNS, each receiver host and the SMTP relay, with DNS queries and answers (the receivers'
 * key lookups too), exchanges, per-recipient results, hand-offs, bounces and DSNs; at most `maxRows` rows.
 */
function diagram(trace: Trace, events: Iterable<RecordedEvent>, maxRows: number): string[] {
  const whole = sequenceOfEvents(
    redactedEvents(events, true),
    { fromMs: -Infinity, toMs: Infinity },
    trace.startedAtMs,
  );
  if (whole.rows.length === 0) return ["No HTTP exchanges, DNS lookups or hand-offs in this run."];
  const shown = whole.rows.slice(0, maxRows);
  const omitted = whole.rows.length - shown.length;
  const tail = omitted > 0 ? [`  Note over P1: ${omitted} more rows not drawn`] : [];
  return ["```mermaid", sequenceMermaid({ ...whole, rows: shown }, trace.startedAtMs), ...tail, "```"];
}

// ---------------------------------------------------------------------------
// Small helpers

function cell(value: unknown): string {
  if (value === undefined || value === null) return "";
  const s = typeof value === "string" ? value : JSON.stringify(value);
  return s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function inline(value: string): string {
  return value.replace(/[\r\n]+/g, " ");
}

function fence(body: string, language: string): string {
  const longest = maxOf(
    [...body.matchAll(/`+/g)].map((m) => m[0].length),
    2,
  );
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${language}\n${body.replace(/\n$/, "")}\n${ticks}`;
}

function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=,@+-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `jitter=on, fallback-window=2h` → `jitter=on,fallback-window=2h`, as `--set` takes it. */
function compactReading(value: string): string {
  return value.replace(/\s*,\s*/g, ",").trim();
}

function gapNumber(id: string): number {
  const n = /^G(\d+)$/.exec(id)?.[1];
  return n === undefined ? Number.MAX_SAFE_INTEGER : Number(n);
}
