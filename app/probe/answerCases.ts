/**
 * The cases judged over every answer of the run, once the rest are done:
 * every 4xx and 5xx is a problem document (problem-media-type), its type
 * under one `{problem_base}` and ending in an identifier of the Errors table
 * (problem-type), `versions` only in unsupported_version problems
 * (problem-versions), and a 429 or 503 says when to come back (retry-after).
 */
import { PROBLEM_IDENTIFIERS, parseRetryAfter } from "../protocol/errors.ts";
import type { ProblemSeen, Sent } from "./answers.ts";
import type { ProbeContext, ResponseSeen } from "./context.ts";
import { record, skip } from "./verdicts.ts";

/** Responses as the exchanges a verdict rests on. */
function asSent(list: readonly ResponseSeen[]): Sent[] {
  return list.map((r) => ({
    answer: { kind: "failure", failure: "", message: "" },
    exchanges: [r.exchangeId],
    evidence: r.evidence,
  }));
}

/** Every case judged over the run's answers. */
export function answerCases(ctx: ProbeContext): void {
  const failing = ctx.responses.filter((r) => r.answer.status >= 400);
  if (failing.length === 0)
    skip(ctx, ["problem-media-type", "problem-type", "problem-versions"], "no 4xx or 5xx answer in this run");
  else problemCases(ctx, failing);
  retryAfterCase(ctx);
}

/** problem-media-type, problem-type and problem-versions, over the run's 4xx and 5xx. */
function problemCases(ctx: ProbeContext, failing: readonly ResponseSeen[]): void {
  const notProblem = failing.filter((r) => r.answer.mediaType !== "application/problem+json");
  record(
    ctx,
    "problem-media-type",
    notProblem.length === 0
      ? { result: "PASS", actual: `${failing.length} answers, each application/problem+json` }
      : {
          result: "FAIL",
          actual: notProblem
            .slice(0, 3)
            .map((r) => `${r.exchangeId} ${r.answer.status} ${r.answer.mediaType || "(no Content-Type)"}`)
            .join("; "),
        },
    asSent(notProblem.length === 0 ? failing : notProblem),
  );
  const problems = failing.filter((r) => r.answer.problem !== undefined);
  const bases = problems.map((r) => {
    const p = r.answer.problem as ProblemSeen;
    return { r, base: p.type.slice(0, p.type.length - p.identifier.length - 1), p };
  });
  const base = ctx.options.problemBase?.replace(/\/+$/, "") ?? bases[0]?.base;
  const wrong = [
    ...failing
      .filter((r) => r.answer.problem === undefined)
      .map((r) => ({ r, why: "no type (not a problem document)" })),
    ...bases.flatMap(({ r, base: b, p }) =>
      !URL.canParse(p.type)
        ? [{ r, why: `type ${JSON.stringify(p.type)} is not an absolute URI` }]
        : !(PROBLEM_IDENTIFIERS as readonly string[]).includes(p.identifier)
          ? [{ r, why: `type ${p.type} ends in no identifier of the Errors table` }]
          : b !== base
            ? [{ r, why: `type ${p.type} is not under ${base ?? "?"}` }]
            : [],
    ),
  ];
  record(
    ctx,
    "problem-type",
    wrong.length === 0
      ? { result: "PASS", actual: `${problems.length} problems under ${base ?? "?"}` }
      : {
          result: "FAIL",
          actual: wrong
            .slice(0, 3)
            .map((w) => `${w.r.exchangeId}: ${w.why}`)
            .join("; "),
        },
    asSent(wrong.length === 0 ? problems : wrong.map((w) => w.r)),
  );
  const stray = problems.filter(
    (r) => r.answer.problem?.hasVersions === true && r.answer.problem.identifier !== "unsupported_version",
  );
  record(
    ctx,
    "problem-versions",
    stray.length === 0
      ? { result: "PASS", actual: `versions only in unsupported_version problems (${problems.length} problems)` }
      : {
          result: "FAIL",
          actual: stray
            .slice(0, 3)
            .map((r) => `${r.exchangeId} ${r.answer.problem?.identifier ?? ""} has versions`)
            .join("; "),
        },
    asSent(stray.length === 0 ? problems : stray),
  );
}

/** retry-after: every 429 and 503 of the run carries a Retry-After the probe can read as a delay. */
function retryAfterCase(ctx: ProbeContext): void {
  const waits = ctx.responses.filter((r) => r.answer.status === 429 || r.answer.status === 503);
  if (waits.length === 0) {
    skip(ctx, ["retry-after"], "no 429 or 503 answer in this run (the probe does not flood a receiver to provoke one)");
    return;
  }
  const none = waits.filter(
    (r) => parseRetryAfter(r.answer.headers.get("retry-after"), ctx.ports.clock.now()) === undefined,
  );
  record(
    ctx,
    "retry-after",
    none.length === 0
      ? {
          result: "PASS",
          actual: waits
            .map((r) => `${r.exchangeId} ${r.answer.status} Retry-After: ${r.answer.headers.get("retry-after") ?? ""}`)
            .join("; "),
        }
      : {
          result: "FAIL",
          actual: none
            .map(
              (r) =>
                `${r.exchangeId} ${r.answer.status} ${r.answer.headers.has("retry-after") ? `Retry-After: ${r.answer.headers.get("retry-after") ?? ""} (not a delay)` : "without Retry-After"}`,
            )
            .join("; "),
        },
    asSent(none.length === 0 ? waits : none),
  );
}
