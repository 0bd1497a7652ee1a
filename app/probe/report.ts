/**
 * A probe run written out: the terminal's table, the JSON report (which
 * carries the trace, so the app opens it as it opens the trace), JUnit for CI
 * and a Markdown report for a bug tracker. Every line is read off the
 * verdicts; nothing here judges.
 */
import { maxOf } from "../protocol/lists.ts";
import { readEvent } from "../trace/eventReader.ts";
import { xmlText } from "../trace/xmlText.ts";
import type { Trace } from "../trace/schema.ts";
import type { ProbePlan, ProbeRun, ProbeSummary, ProbeVerdict } from "./probe.ts";

/** The `format` of a probe's JSON report. */
export const PROBE_REPORT_FORMAT = "mailscope-probe";
/** Its version. */
export const PROBE_REPORT_VERSION = 1;

/** The JSON report: `{ cases: [ { rule, grade, expected, actual, result } ] }` and what frames them. */
export interface ProbeReportJson {
  readonly format: typeof PROBE_REPORT_FORMAT;
  readonly version: typeof PROBE_REPORT_VERSION;
  readonly mailscope: string;
  readonly target: string;
  readonly origin?: string;
  readonly domain?: string;
  readonly startedAt: string;
  readonly plan: ProbePlan;
  readonly summary: ProbeSummary;
  readonly exitCode: 0 | 1;
  readonly cases: readonly ProbeVerdict[];
  /** Every exchange, in Mailscope's trace format (docs/trace-format.md). */
  readonly trace: Trace;
}

/** The report of a run, as `--json` prints it. */
export function reportJson(run: ProbeRun): ProbeReportJson {
  return {
    format: PROBE_REPORT_FORMAT,
    version: PROBE_REPORT_VERSION,
    mailscope: run.trace.mailscope,
    target: run.target,
    ...(run.origin !== undefined && { origin: run.origin }),
    ...(run.domain !== undefined && { domain: run.domain }),
    startedAt: new Date(run.trace.startedAtMs).toISOString(),
    plan: run.plan,
    summary: run.summary,
    exitCode: run.exitCode,
    cases: run.verdicts,
    trace: run.trace,
  };
}

/** Whether a parsed JSON value is a probe's report (its format says so). */
export function isProbeReport(value: unknown): value is ProbeReportJson {
  return typeof value === "object" && value !== null && (value as { format?: unknown }).format === PROBE_REPORT_FORMAT;
}

/** What the probe is about to do, in the words the CLI prints before the first request. */
export function planLines(plan: ProbePlan, target: string): string[] {
  const mailboxes = plan.mailboxes.length > 0 ? plan.mailboxes.join(", ") : "nobody (no --mailbox)";
  return [
    `mailscope probe ${target}: ${plan.cases} cases, at most ${plan.requests} requests (${plan.requestsPerSecond}/s at most) and ${plan.handshakes} TLS handshakes`,
    `  messages: ${plan.messages} stored by a receiver that follows the spec, at most ${plan.messagesAtMost} if it takes every request it must refuse; only for ${mailboxes}`,
  ];
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

function clip(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/**
 * The terminal's table: one row per case (result, case, rule, grade, expected, actual), under a failed case its
 * actual in full when the column cut it, and a why under each that has one.
 */
export function tableLines(run: ProbeRun, width = 160): string[] {
  const idW = maxOf(
    run.verdicts.map((v) => v.id.length),
    4,
  );
  const ruleW = maxOf(
    run.verdicts.map((v) => v.rule.length),
    4,
  );
  const fixed = 6 + idW + 1 + ruleW + 1 + 7;
  const textW = Math.max(20, Math.floor((width - fixed - 2) / 2));
  const out = [
    `${pad("", 6)}${pad("case", idW + 1)}${pad("rule", ruleW + 1)}${pad("grade", 7)}${pad("expected", textW + 2)}actual`,
  ];
  for (const v of run.verdicts) {
    out.push(
      `${pad(v.result, 6)}${pad(v.id, idW + 1)}${pad(v.rule, ruleW + 1)}${pad(v.grade, 7)}${pad(clip(v.expected, textW), textW + 2)}${clip(v.actual, textW)}`,
    );
    const indent = " ".repeat(6 + idW + 1);
    // A failed case's answer in full when the column cut it: it is what the implementer needs to read.
    if (v.result === "FAIL" && v.actual.length > textW) out.push(`${indent}actual: ${v.actual}`);
    if (v.why !== undefined) out.push(`${indent}${v.result === "PASS" ? "note" : "why"}: ${v.why}`);
  }
  out.push("", summaryLine(run));
  return out;
}

/** `55 cases: 50 PASS, 1 FAIL, 4 SKIP (MUST 40/1/2, SHOULD 3/0/0, MAY 1/0/0)`. */
export function summaryLine(run: ProbeRun): string {
  const s = run.summary;
  const grades = (["MUST", "SHOULD", "MAY"] as const)
    .map((g) => `${g} ${s.byGrade[g].pass}/${s.byGrade[g].fail}/${s.byGrade[g].skip}`)
    .join(", ");
  const cases = (n: number) => `${n} MUST case${n === 1 ? "" : "s"}`;
  const verdict =
    run.exitCode === 0
      ? s.byGrade.MUST.skip > 0
        ? `no MUST case failed; ${cases(s.byGrade.MUST.skip)} not run (see why)`
        : "every MUST case passed"
      : `${cases(s.byGrade.MUST.fail)} failed`;
  return `${run.verdicts.length} case${run.verdicts.length === 1 ? "" : "s"}: ${s.pass} PASS, ${s.fail} FAIL, ${s.skip} SKIP (pass/fail/skip by grade: ${grades}); ${verdict}`;
}

/** JUnit XML: one suite for the receiver, a test case per probe case named after its rule; SKIP as skipped. */
export function junitXml(run: ProbeRun): string {
  const name = `mailscope probe ${run.origin ?? run.target}`;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlText(name)}" tests="${run.verdicts.length}" failures="${run.summary.fail}" skipped="${run.summary.skip}">`,
    `  <testsuite name="${xmlText(name)}" tests="${run.verdicts.length}" failures="${run.summary.fail}" skipped="${run.summary.skip}">`,
  ];
  for (const v of run.verdicts) {
    const head = `    <testcase classname="${xmlText(`${v.rule} ${v.grade}`)}" name="${xmlText(`${v.id}: ${v.title}`)}"`;
    const detail = `expected: ${v.expected}\nactual: ${v.actual}${v.why !== undefined ? `\nwhy: ${v.why}` : ""}\nexchanges: ${v.exchanges.join(", ") || "none"}`;
    if (v.result === "PASS") out.push(`${head}/>`);
    else if (v.result === "SKIP")
      out.push(`${head}>`, `      <skipped message="${xmlText(v.why ?? "skipped")}"/>`, "    </testcase>");
    else
      out.push(
        `${head}>`,
        `      <failure message="${xmlText(`${v.actual}${v.why !== undefined ? ` (${v.why})` : ""}`)}">${xmlText(detail)}</failure>`,
        "    </testcase>",
      );
  }
  out.push("  </testsuite>", "</testsuites>", "");
  return out.join("\n");
}

/** A cell of a Markdown table: pipes escaped, one line. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();
}

/** The Markdown report: the target and plan, the summary by grade, every case, then the failed ones in full. */
export function markdownReport(run: ProbeRun): string {
  const s = run.summary;
  const lines = [
    `# mailscope probe: ${run.origin ?? run.target}`,
    "",
    `Probed ${run.origin ?? run.target}${run.domain !== undefined ? ` (recipient domain ${run.domain})` : ""} on ${new Date(run.trace.startedAtMs).toISOString()} with Mailscope ${run.trace.mailscope}.`,
    "",
    ...planLines(run.plan, run.target).map((l) => `> ${l.trim()}`),
    "",
    "| grade | PASS | FAIL | SKIP |",
    "| --- | --- | --- | --- |",
    ...(["MUST", "SHOULD", "MAY"] as const).map(
      (g) => `| ${g} | ${s.byGrade[g].pass} | ${s.byGrade[g].fail} | ${s.byGrade[g].skip} |`,
    ),
    "",
    `**${summaryLine(run)}**`,
    "",
    "| result | case | rule | grade | expected | actual | why | exchanges |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...run.verdicts.map(
      (v) =>
        `| ${v.result} | ${cell(v.id)} | ${v.rules.map(cell).join(", ")} | ${v.grade} | ${cell(v.expected)} | ${cell(v.actual)} | ${cell(v.why ?? "")} | ${v.exchanges.join(", ")} |`,
    ),
  ];
  const failed = run.verdicts.filter((v) => v.result === "FAIL");
  if (failed.length > 0) {
    lines.push("", "## Failed cases");
    for (const v of failed) {
      lines.push(
        "",
        `### ${v.id} (${v.rule}, ${v.grade})`,
        "",
        v.title,
        "",
        `- expected: ${v.expected}`,
        `- actual: ${v.actual}`,
      );
      if (v.why !== undefined) lines.push(`- why: ${v.why}`);
      for (const x of v.exchanges) lines.push(`- ${exchangeLine(run.trace, x)}`);
    }
  }
  lines.push(
    "",
    "The rules are in Mailscope's rules catalogue (`mailscope rules <ID>`, docs/rules.md). Open the JSON report or the trace in Mailscope to see each case's exchanges in the sequence diagram and the inspector.",
    "",
  );
  return lines.join("\n");
}

/** `x3: POST https://…/v1/messages → 401` from the trace's events. */
function exchangeLine(trace: Trace, exchangeId: string): string {
  let request = "";
  let answer = "no answer recorded";
  for (const e of trace.events) {
    const event = readEvent(e);
    if (event === undefined || !("exchangeId" in event.data) || event.data.exchangeId !== exchangeId) continue;
    if (event.name === "http.request") request = `${String(event.data.method)} ${String(event.data.url)}`;
    if (event.name === "http.response") answer = String(event.data.status);
    if (event.name === "http.failure") answer = `no answer (${String(event.data.kind)})`;
  }
  return `${exchangeId}: ${request} → ${answer}`;
}
