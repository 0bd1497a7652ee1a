/**
 * The checks of a finished run — invariants, then expectations — as the
 * checks panel lists them: passed or failed, the detail, and the events that
 * are their evidence when the check names any.
 */
import { readableRecordedText } from "../../../app/trace/offset.ts";
import type { CheckResult } from "../../../app/trace/schema.ts";

/** One check as shown. */
export interface CheckRow {
  readonly kind: "invariant" | "expectation";
  readonly id: string;
  readonly passed: boolean;
  /** `ok` or `FAIL`, as `mailscope run` prints it. */
  readonly mark: "ok" | "FAIL";
  readonly detail: string;
  /** Seqs of the events the check points at, if it names any. */
  readonly evidence: readonly number[];
}

function evidenceOf(check: CheckResult): number[] {
  const raw = (check as CheckResult & { evidence?: unknown }).evidence;
  if (!Array.isArray(raw)) return [];
  return raw.filter((s): s is number => typeof s === "number" && Number.isInteger(s) && s >= 0);
}

/** The rows of the checks panel. */
export function checkRows(
  invariants: readonly CheckResult[] | undefined,
  expectations: readonly CheckResult[] | undefined,
): CheckRow[] {
  const row = (kind: CheckRow["kind"]) => (c: CheckResult) => ({
    kind,
    id: c.id,
    passed: c.passed,
    mark: c.passed ? ("ok" as const) : ("FAIL" as const),
    detail: readableRecordedText(c.detail ?? ""),
    evidence: evidenceOf(c),
  });
  return [...(invariants ?? []).map(row("invariant")), ...(expectations ?? []).map(row("expectation"))];
}

/** `passed: all 8 checks` or `FAILED: 1 of 8 checks failed`, as the CLI's summary line starts. */
export function checkSummary(rows: readonly CheckRow[]): { readonly passed: boolean; readonly text: string } {
  const failed = rows.filter((r) => !r.passed).length;
  return failed === 0
    ? { passed: true, text: `passed: all ${rows.length} checks` }
    : { passed: false, text: `FAILED: ${failed} of ${rows.length} checks failed` };
}
