/**
 * Running a sweep (note 0066): every point of the plan (app/sim/sweepPlan.ts)
 * under every seed, each a full run with its invariants, through a
 * {@link RunPool} — the simulation workers' one-shot runs (app/sim/worker.ts
 * `handleWorkerRequest`, the same engine as `mailscope run`), in worker
 * threads in Node and Web Workers in the app, one run at a time per worker.
 *
 * From the runs it makes each point's distributions per recipient — the share
 * of each outcome, and the least, median, 90th percentile and greatest outcome
 * time, attempts and POSTs — and the boundaries: between two neighbouring
 * values of an axis (the others held) where a recipient's outcome changes
 * (with seeds, its most frequent outcome). On request a boundary is refined:
 * bisected between its two values down to a resolution, each step a run of
 * every seed.
 *
 * Pure: `mailscope sweep` and the app's Sweep view both use it.
 */
import { formatOffset } from "../trace/offset.ts";
import type { RunOutcome, WorkerReply, WorkerRequest } from "./worker.ts";
import {
  axisValue,
  pointScenarios,
  type AxisKind,
  type PointScenario,
  type SweepAxis,
  type SweepPlan,
  type SweepPoint,
  type SweepValue,
} from "./sweepPlan.ts";

/** Where the runs go: a pool of simulation workers, each running one request at a time. */
export interface RunPool {
  /** How many runs may go at once (the most workers it may have). */
  readonly size: number;
  /** How many workers ran at least one request so far (a pool starts workers only when the work is worth them). */
  readonly used: number;
  /** Runs one request (app/sim/worker.ts's one-shot `run`); never rejects for what the run does. */
  run(request: WorkerRequest): Promise<WorkerReply>;
  /** Ends the workers. */
  close(): void;
}

/** One run of a point. */
export type PointRun =
  | {
      readonly ok: true;
      readonly seed?: number | string;
      readonly hash: string;
      readonly passed: boolean;
      /** The invariants that failed (their ids): a run that breaks the spec. */
      readonly invariantsFailed: readonly string[];
      /** The scenario's expectations that failed: a sweep moves the outcomes they describe, so these are reported only. */
      readonly expectationsFailed: readonly string[];
      readonly events: number;
      readonly outcomes: readonly RunOutcome[];
    }
  | {
      readonly ok: false;
      readonly seed?: number | string;
      /** The point's scenario does not validate (file:line:column lines), or the run failed. */
      readonly error: string;
    };

/** Least, median, 90th percentile and greatest of some numbers (nearest rank), and how many. */
export interface Distribution {
  readonly n: number;
  readonly min: number;
  readonly median: number;
  readonly p90: number;
  readonly max: number;
}

/** A recipient at a point, over its runs. */
export interface RecipientSummary {
  readonly message: string;
  readonly recipient: string;
  /** Runs that ended in each outcome (`error`: the run did not happen); in {@link OUTCOME_ORDER}. */
  readonly counts: Readonly<Record<string, number>>;
  /** The most frequent outcome (ties go to the earlier in {@link OUTCOME_ORDER}). */
  readonly mode: string;
  /** When the outcome came, ms after the start, over the runs that reached one. */
  readonly time?: Distribution;
  readonly attempts?: Distribution;
  readonly posts?: Distribution;
  /** The outcome as `mailscope run` words it, when every run gave the same (`smtp (fallback)`). */
  readonly outcomeText?: string;
  /** The rule that decided it, when every run gave the same. */
  readonly rule?: string;
}

/** A point with its runs. */
export interface PointResult {
  readonly point: SweepPoint;
  readonly runs: readonly PointRun[];
  readonly recipients: readonly RecipientSummary[];
}

/** Where a recipient's outcome changes between two neighbouring values of an axis. */
export interface Boundary {
  /** The axis the two points differ on. */
  readonly axis: number;
  readonly from: SweepValue;
  readonly to: SweepValue;
  /** The points on each side. */
  readonly fromPoint: number;
  readonly toPoint: number;
  readonly message: string;
  readonly recipient: string;
  /** The most frequent outcome on each side. */
  readonly before: string;
  readonly after: string;
  /** `boundary between 2h30m and 3h: smtp → accepted`. */
  readonly text: string;
  /** Bisected further on request. */
  readonly refined?: RefinedBoundary;
}

/** A boundary located more finely: the two closest values found, each side's values and runs. */
export interface RefinedBoundary {
  readonly from: SweepValue;
  readonly to: SweepValue;
  /** The values on each side, every axis (the boundary's axis at `from` and `to`). */
  readonly fromValues: readonly SweepValue[];
  readonly toValues: readonly SweepValue[];
  readonly before: string;
  readonly after: string;
  /** Runs the bisection made. */
  readonly runs: number;
  /** The resolution it stopped at, as the axis writes values. */
  readonly resolution: string;
  readonly text: string;
}

/** A finished sweep. */
export interface SweepResult {
  readonly plan: SweepPlan;
  readonly points: readonly PointResult[];
  readonly boundaries: readonly Boundary[];
  /** Runs made, refinements included. */
  readonly runs: number;
  /** Every run happened and held every invariant. */
  readonly passed: boolean;
  /** Why a `refine` did not apply to some boundaries (axes of another kind), if so. */
  readonly refineNotes: readonly string[];
}

/** The order outcomes are listed and ties broken in. */
export const OUTCOME_ORDER: readonly string[] = ["accepted", "rejected", "smtp", "bounced", "pending", "error"];

/** What {@link runSweep} is given besides the plan. */
export interface RunSweepOptions {
  /** The scenario's text and file name (for errors and the traces). */
  readonly text: string;
  readonly file: string;
  readonly pool: RunPool;
  /** Settings of every point before its own (`--set`). */
  readonly settings?: readonly (readonly [string, string])[];
  readonly mailscope?: string;
  /** Called after each run with the runs done and the runs planned so far (refinements add to it). */
  readonly onRun?: (done: number, planned: number) => void;
  /** Called with each point's result as its last run ends (the app draws the charts as they come). */
  readonly onPoint?: (result: PointResult) => void;
  /** Bisect each boundary on an axis of this kind down to `resolution` (ms for durations and times). */
  readonly refine?: { readonly resolution: number; readonly kind: "duration" | "number" };
  readonly signal?: AbortSignal;
}

/** Runs every point of `plan` under every seed, then finds (and, on request, refines) the boundaries. */
export async function runSweep(plan: SweepPlan, options: RunSweepOptions): Promise<SweepResult> {
  const scenarioOf = pointScenarios(options.text);
  const seeds = plan.seeds ?? [undefined];
  let planned = plan.points.length * seeds.length;
  let done = 0;
  let nextId = 0;
  // Points in hand at once: twice the workers, so that none waits for work, and each point's text
  // (a YAML document written out) is made when a worker is about to need it — spread over the
  // sweep, not all at its start in one long task of the calling thread (the app's page, say).
  const limit = Math.max(1, options.pool.size * 2);
  let active = 0;
  const waiting: (() => void)[] = [];
  const acquire = async (): Promise<void> => {
    if (active < limit) {
      active++;
      return;
    }
    // A slot is handed over by release, still counted as active.
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next !== undefined) next();
    else active--;
  };
  const runPoint = async (values: readonly SweepValue[]): Promise<PointRun[]> => {
    await acquire();
    try {
      const scenario = scenarioOf(plan.axes, values);
      return await Promise.all(
        seeds.map(async (seed) => {
          const run = await runOne(scenario, seed, nextId++, options);
          done++;
          options.onRun?.(done, planned);
          return run;
        }),
      );
    } finally {
      release();
    }
  };
  const points = await Promise.all(
    plan.points.map(async (point) => {
      const runs = await runPoint(point.values);
      const result: PointResult = { point, runs, recipients: summarize(runs) };
      options.onPoint?.(result);
      return result;
    }),
  );
  let boundaries = findBoundaries(plan, points);
  const refineNotes: string[] = [];
  let refinedRuns = 0;
  const refine = options.refine;
  if (refine !== undefined && !(options.signal?.aborted ?? false)) {
    const fits = (kind: AxisKind): boolean =>
      refine.kind === "duration" ? kind === "duration" || kind === "time" : kind === "integer" || kind === "number";
    const skipped = [
      ...new Set(boundaries.filter((b) => !fits(plan.axes[b.axis]?.kind ?? "choice")).map((b) => b.axis)),
    ];
    for (const a of skipped) {
      const axis = plan.axes[a] as SweepAxis;
      refineNotes.push(
        `${axis.path}: not refined (${axis.kind === "choice" ? "its values are named readings" : `--refine gives a ${refine.kind}, and its values are ${axis.kind === "integer" || axis.kind === "number" ? "numbers" : "durations"}`})`,
      );
    }
    // One run of a value per point, however many boundaries ask for it.
    const cache = new Map<string, Promise<PointRun[]>>();
    const cachedRun = (values: readonly SweepValue[]): Promise<PointRun[]> => {
      const key = values.map((v) => v.text).join("\u0000");
      let runs = cache.get(key);
      if (runs === undefined) {
        planned += seeds.length;
        refinedRuns += seeds.length;
        runs = runPoint(values);
        cache.set(key, runs);
      }
      return runs;
    };
    boundaries = await Promise.all(
      boundaries.map(async (b) =>
        fits(plan.axes[b.axis]?.kind ?? "choice") ? refineBoundary(plan, points, b, refine.resolution, cachedRun) : b,
      ),
    );
  }
  const all = [...points.flatMap((p) => p.runs)];
  return {
    plan,
    points,
    boundaries,
    runs: plan.points.length * seeds.length + refinedRuns,
    passed: all.every((r) => r.ok && r.invariantsFailed.length === 0),
    refineNotes,
  };
}

async function runOne(
  scenario: PointScenario,
  seed: number | string | undefined,
  id: number,
  options: RunSweepOptions,
): Promise<PointRun> {
  if (options.signal?.aborted === true) return { ok: false, ...(seed !== undefined && { seed }), error: "cancelled" };
  const reply = await options.pool.run({
    type: "run",
    id,
    text: scenario.text,
    file: options.file,
    ...(seed !== undefined && { seed }),
    readings: [...(options.settings ?? []), ...scenario.settings],
    ...(options.mailscope !== undefined && { mailscope: options.mailscope }),
    wantOutcomes: true,
  });
  const s = seed !== undefined ? { seed } : {};
  if (reply.type === "invalid") return { ok: false, ...s, error: reply.errors.join("\n") };
  if (reply.type === "error") return { ok: false, ...s, error: reply.message };
  return {
    ok: true,
    ...s,
    hash: reply.hash,
    passed: reply.passed,
    invariantsFailed: reply.invariants.filter((c) => !c.passed).map((c) => c.id),
    expectationsFailed: reply.expectations.filter((c) => !c.passed).map((c) => c.id),
    events: reply.events,
    outcomes: reply.outcomes ?? [],
  };
}

/** Nearest-rank quantiles of `values` (not empty). */
export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number): number => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] as number;
  return {
    n: sorted.length,
    min: sorted[0] as number,
    median: rank(0.5),
    p90: rank(0.9),
    max: sorted[sorted.length - 1] as number,
  };
}

/** Each recipient's distributions over a point's runs, in the order the runs list them. */
export function summarize(runs: readonly PointRun[]): RecipientSummary[] {
  const keys: { message: string; recipient: string }[] = [];
  const seen = new Set<string>();
  for (const run of runs) {
    if (!run.ok) continue;
    for (const o of run.outcomes) {
      const key = `${o.message}\n${o.recipient}`;
      if (!seen.has(key)) {
        seen.add(key);
        keys.push({ message: o.message, recipient: o.recipient });
      }
    }
  }
  const errors = runs.filter((r) => !r.ok).length;
  return keys.map(({ message, recipient }) => {
    const rows = runs.flatMap((r) =>
      r.ok ? r.outcomes.filter((o) => o.message === message && o.recipient === recipient) : [],
    );
    const counts: Record<string, number> = {};
    for (const o of rows) counts[o.outcome] = (counts[o.outcome] ?? 0) + 1;
    if (errors > 0) counts["error"] = errors;
    const ordered = orderedCounts(counts);
    const times = rows.flatMap((o) => (o.atMs !== undefined ? [o.atMs] : []));
    const texts = new Set(rows.map((o) => o.outcomeText));
    const rules = new Set(rows.map((o) => o.rule ?? ""));
    return {
      message,
      recipient,
      counts: ordered,
      mode: modeOf(ordered),
      ...(times.length > 0 && { time: distribution(times) }),
      ...(rows.length > 0 && {
        attempts: distribution(rows.map((o) => o.attempts)),
        posts: distribution(rows.map((o) => o.posts)),
      }),
      ...(texts.size === 1 && errors === 0 && { outcomeText: [...texts][0] }),
      ...(rules.size === 1 && errors === 0 && [...rules][0] !== "" && { rule: [...rules][0] }),
    };
  });
}

function orderedCounts(counts: Readonly<Record<string, number>>): Record<string, number> {
  const rank = (o: string): number => (OUTCOME_ORDER.includes(o) ? OUTCOME_ORDER.indexOf(o) : OUTCOME_ORDER.length);
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1)));
}

/** The most frequent outcome of `counts` (already in {@link OUTCOME_ORDER}: the first wins a tie). */
function modeOf(counts: Readonly<Record<string, number>>): string {
  let best = "error";
  let most = -1;
  for (const [o, n] of Object.entries(counts)) {
    if (n > most) {
      best = o;
      most = n;
    }
  }
  return best;
}

/** `accepted` without seeds; `accepted (70 %)` with. */
function sideText(summary: RecipientSummary | undefined, mode: string): string {
  if (summary === undefined) return mode;
  const total = Object.values(summary.counts).reduce((a, b) => a + b, 0);
  const n = summary.counts[mode] ?? 0;
  return total > 1 ? `${mode} (${Math.round((100 * n) / total)} %)` : mode;
}

/** Every boundary of a finished grid, axis by axis, in the order of the points. */
export function findBoundaries(plan: SweepPlan, points: readonly PointResult[]): Boundary[] {
  const out: Boundary[] = [];
  const strides = plan.axes.map((_, a) => plan.axes.slice(a + 1).reduce((n, x) => n * x.values.length, 1));
  const many = new Set(points.flatMap((p) => p.recipients.map((r) => `${r.message}\n${r.recipient}`))).size > 1;
  plan.axes.forEach((axis, a) => {
    for (const p of points) {
      if ((p.point.coords[a] ?? 0) + 1 >= axis.values.length) continue;
      const q = points[p.point.index + (strides[a] ?? 1)];
      if (q === undefined) continue;
      for (const r of p.recipients) {
        const s = q.recipients.find((x) => x.message === r.message && x.recipient === r.recipient);
        if (s === undefined || r.mode === s.mode || r.mode === "error" || s.mode === "error") continue;
        out.push(
          boundary(plan, a, p.point, q.point, r.message, r.recipient, sideText(r, r.mode), sideText(s, s.mode), many, {
            before: r.mode,
            after: s.mode,
          }),
        );
      }
    }
  });
  return out;
}

function boundary(
  plan: SweepPlan,
  a: number,
  p: SweepPoint,
  q: SweepPoint,
  message: string,
  recipient: string,
  beforeText: string,
  afterText: string,
  many: boolean,
  modes: { before: string; after: string },
): Boundary {
  const from = p.values[a] as SweepValue;
  const to = q.values[a] as SweepValue;
  const held = plan.axes
    .map((x, k) => (k === a ? undefined : `${x.path} ${p.values[k]?.text ?? "?"}`))
    .filter((x) => x !== undefined);
  const where = plan.axes.length > 1 ? ` (${[plan.axes[a]?.path ?? "", ...held].join("; ")})` : "";
  const who = many ? `${message} ${recipient}: ` : "";
  return {
    axis: a,
    from,
    to,
    fromPoint: p.index,
    toPoint: q.index,
    message,
    recipient,
    before: modes.before,
    after: modes.after,
    text: `${who}boundary between ${from.text} and ${to.text}${where}: ${beforeText} → ${afterText}`,
  };
}

/**
 * Bisects `b` between its two values: the midpoint (on a grid of
 * `resolution` from the lower value) runs under every seed, and the side
 * whose most frequent outcome it shares moves to it, until the two values are
 * no more than `resolution` apart. A midpoint with a third outcome becomes
 * the upper side: the boundary found is where the lower side's outcome first
 * changes.
 */
async function refineBoundary(
  plan: SweepPlan,
  points: readonly PointResult[],
  b: Boundary,
  resolution: number,
  run: (values: readonly SweepValue[]) => Promise<PointRun[]>,
): Promise<Boundary> {
  const axis = plan.axes[b.axis] as SweepAxis;
  const base = (points[b.fromPoint] as PointResult).point.values;
  const step = axis.kind === "integer" ? Math.max(1, Math.round(resolution)) : resolution;
  let lo = b.from.number ?? 0;
  let hi = b.to.number ?? 0;
  let after = b.after;
  let runs = 0;
  const at = (n: number): SweepValue[] => base.map((v, k) => (k === b.axis ? axisValue(axis, n) : v));
  for (;;) {
    const k = Math.floor((hi - lo) / step / 2 + 1e-9);
    if (k < 1) break;
    const mid = Number((lo + k * step).toPrecision(12));
    if (mid <= lo || mid >= hi) break;
    const results = await run(at(mid));
    runs += results.length;
    const summary = summarize(results).find((r) => r.message === b.message && r.recipient === b.recipient);
    const mode = summary?.mode ?? "error";
    if (mode === b.before) lo = mid;
    else {
      hi = mid;
      after = mode;
    }
  }
  const from = axisValue(axis, lo);
  const to = axisValue(axis, hi);
  const resolutionText = axis.kind === "duration" || axis.kind === "time" ? axisValue(axis, step).text : String(step);
  return {
    ...b,
    refined: {
      from,
      to,
      fromValues: at(lo),
      toValues: at(hi),
      before: b.before,
      after,
      runs,
      resolution: resolutionText,
      text: `refined: between ${from.text} and ${to.text}: ${b.before} → ${after} (${runs} more run${runs === 1 ? "" : "s"}, to ${resolutionText})`,
    },
  };
}

/**
 * `ok`, `invariants ok · expectations not met` (the scenario's own expectations, written for its values, fail
 * under the swept one: not a violation), `FAIL retry-schedule`, `3 of 20 runs FAIL …`, `error: …`.
 */
export function checksText(p: PointResult): string {
  const errors = p.runs.filter((r) => !r.ok);
  if (errors.length > 0) {
    const first = errors[0];
    // The point's own scenario is not a file: its errors are said without the base file's name.
    const why =
      first !== undefined && !first.ok ? (first.error.split("\n")[0] ?? "").replace(/^.*?:\d+:\d+: /, "") : "";
    return `${errors.length === p.runs.length ? "" : `${errors.length} of ${p.runs.length} runs `}error: ${why}`;
  }
  const broke = p.runs.filter((r) => r.ok && r.invariantsFailed.length > 0);
  if (broke.length > 0) {
    const ids = [...new Set(broke.flatMap((r) => (r.ok ? r.invariantsFailed : [])))].join(", ");
    return `${broke.length === p.runs.length ? "" : `${broke.length} of ${p.runs.length} runs `}FAIL ${ids}`;
  }
  const unmet = p.runs.filter((r) => r.ok && r.expectationsFailed.length > 0).length;
  if (unmet === 0) return "ok";
  return `invariants ok · expectations not met${unmet === p.runs.length ? "" : ` in ${unmet} of ${p.runs.length} runs`}`;
}

// ---------------------------------------------------------------------------
// As the CLI's table and the app's Sweep view say them

/**
 * `+1:03:00`; with more runs `+1:03:00 … +1:20:00 (median +1:05:00, p90 +1:15:00)`, to the second.
 * `write` writes an offset from the start (the CLI's has days: `+5d 0:00:00`).
 */
export function timeText(
  d: Distribution | undefined,
  write: (ms: number) => string = (ms) => formatOffset(ms, 0),
): string {
  if (d === undefined) return "—";
  if (d.min === d.max) return write(d.min);
  const brief = (ms: number): string => write(Math.round(ms / 1000) * 1000);
  return `${brief(d.min)} … ${brief(d.max)} (median ${brief(d.median)}, p90 ${brief(d.p90)})`;
}

/** `7`; with more runs `7 (5–9)`: the median, then the least and the greatest. */
export function countText(d: Distribution | undefined): string {
  if (d === undefined) return "—";
  return d.min === d.max ? String(d.min) : `${d.median} (${d.min}–${d.max})`;
}

/** `smtp (fallback)`; with more runs `accepted 70 % · smtp 30 %`. */
export function outcomeText(r: RecipientSummary): string {
  const total = Object.values(r.counts).reduce((a, b) => a + b, 0);
  if (Object.keys(r.counts).length === 1 && r.outcomeText !== undefined) return r.outcomeText;
  if (total === 1) return r.mode;
  return Object.entries(r.counts)
    .map(([o, n]) => `${o} ${Math.round((100 * n) / total)} %`)
    .join(" · ");
}
