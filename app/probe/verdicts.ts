/**
 * The verdicts of a run, and the run they make: a case judged is recorded
 * once (the first verdict stands) as a `probe.case` event; at the end every
 * case nothing judged is skipped as not reached, and the verdicts, their
 * counts and the trace are assembled into the {@link ProbeRun}.
 */
import type { Judged, Sent } from "./answers.ts";
import { probeCases } from "./cases.ts";
import { emit, type ProbeContext } from "./context.ts";
import type { ProbeResult, ProbeRun, ProbeSummary, ProbeVerdict } from "./probe.ts";

/**
 * Records the verdict of the case `id` (when selected and not judged yet): `judged`, resting on the exchanges
 * of `sent` and the trace events `extra`.
 */
export function record(
  ctx: ProbeContext,
  id: string,
  judged: Judged,
  sent: readonly (Sent | undefined)[] = [],
  extra: number[] = [],
): void {
  if (!ctx.selected.has(id) || ctx.verdicts.has(id)) return;
  const c = probeCases.find((x) => x.id === id);
  if (c === undefined) return;
  const exchanges = sent.flatMap((s) => s?.exchanges ?? []);
  const evidence = [...new Set([...extra, ...sent.flatMap((s) => s?.evidence ?? [])])].sort((a, b) => a - b);
  const verdict: ProbeVerdict = {
    id: c.id,
    rule: c.rule,
    rules: c.rules,
    gaps: c.gaps ?? [],
    grade: c.grade,
    title: c.title,
    expected: c.expected,
    actual: judged.actual,
    result: judged.result,
    ...(judged.why !== undefined && { why: judged.why }),
    exchanges,
    evidence,
  };
  ctx.verdicts.set(id, verdict);
  emit(ctx, "probe.case", { ...verdict });
}

/** Skips the cases `ids` not judged yet, saying why. */
export function skip(ctx: ProbeContext, ids: readonly string[], why: string): void {
  for (const id of ids) record(ctx, id, { result: "SKIP", actual: "not run", why });
}

/** Skips every case not judged yet, saying why. */
export function skipRest(ctx: ProbeContext, why: string): void {
  skip(
    ctx,
    ctx.cases.map((c) => c.id),
    why,
  );
}

/** The run: the cases nothing judged (a step cut short) skipped as not reached, the verdicts in catalogue order. */
export function finish(ctx: ProbeContext, origin: string | undefined): ProbeRun {
  skipRest(ctx, "not reached");
  const ordered = ctx.cases.flatMap((c) => {
    const v = ctx.verdicts.get(c.id);
    return v === undefined ? [] : [v];
  });
  const summary = summarize(ordered);
  return {
    target: ctx.target,
    ...(origin !== undefined && { origin }),
    ...(ctx.domain !== undefined && { domain: ctx.domain }),
    plan: ctx.plan,
    verdicts: ordered,
    summary,
    exitCode: summary.byGrade.MUST.fail > 0 ? 1 : 0,
    trace: ctx.recorder.toTrace({
      mailscope: ctx.options.mailscope,
      scenario: { name: `probe ${ctx.target}` },
      seed: 0,
      readings: {},
      startedAtMs: ctx.startedAtMs,
    }),
  };
}

function summarize(verdicts: readonly ProbeVerdict[]): ProbeSummary {
  const zero = (): { pass: number; fail: number; skip: number } => ({ pass: 0, fail: 0, skip: 0 });
  const byGrade = { MUST: zero(), SHOULD: zero(), MAY: zero() };
  for (const v of verdicts) {
    const key = v.result === "PASS" ? "pass" : v.result === "FAIL" ? "fail" : "skip";
    byGrade[v.grade][key] += 1;
  }
  const count = (r: ProbeResult): number => verdicts.filter((v) => v.result === r).length;
  return { pass: count("PASS"), fail: count("FAIL"), skip: count("SKIP"), byGrade };
}
