/**
 * The delivery cases: the valid delivery to every `--mailbox` and
 * `--absent` (deliver, POST-11), its DeliveryResult read entry by entry
 * (results-count, results-order, result-fields, recipient-not-found), its
 * replay and a conflicting reuse of its key (POST-12, POST-13), a delivery
 * with no recipient accepted (all-rejected) and an envelope with an unknown
 * member (ENV-9).
 */
import {
  answerText,
  clip,
  decoder,
  entryProblems,
  expectProblem,
  normalized,
  problemOf,
  resultsText,
  type Answered,
  type Sent,
} from "./answers.ts";
import { idsOfSteps, runs } from "./context.ts";
import {
  bodyOf,
  delivery,
  freshKey,
  message,
  post,
  type BodyShape,
  type DeliverySpec,
  type Delivering,
} from "./deliveries.ts";
import { send } from "./exchange.ts";
import { POST_STEPS } from "./plan.ts";
import { record, skip } from "./verdicts.ts";

/** The valid delivery as sent: to whom, its spec and body, and what came back. */
interface Delivered {
  readonly to: readonly string[];
  readonly key: string;
  readonly spec: DeliverySpec;
  readonly shape: BodyShape;
  readonly sent: Sent;
}

/**
 * The delivery cases, the valid delivery first; whether the POST cases after them can tell anything (not when
 * the receiver refuses the probe's correctly signed delivery: then they are skipped).
 */
export async function deliveryCases(p: Delivering, keyInDns: string | undefined): Promise<boolean> {
  const { ctx } = p;
  // The valid delivery: every --mailbox, then --absent, so that order and a rejection show.
  const to = [...ctx.options.mailboxes, ...(ctx.absentOne !== undefined ? [ctx.absentOne] : [])];
  const key = freshKey(ctx, "deliver");
  const spec: DeliverySpec = { caseId: "deliver", to, key, message: message(p, "deliver", to) };
  const shape = bodyOf(p, spec);
  const sent = await post(
    p,
    spec,
    ["deliver", "results-count", "results-order", "result-fields", "recipient-not-found"],
    shape,
  );
  const delivered: Delivered = { to, key, spec, shape, sent };
  const d = sent.answer;
  if (d.kind === "response" && d.status === 401) {
    keyRefused(p, delivered, keyInDns);
    return false;
  }
  const results =
    d.kind === "response" && d.status === 200 && typeof d.json === "object" && d.json !== null
      ? (d.json as Record<string, unknown>)["results"]
      : undefined;
  record(
    ctx,
    "deliver",
    d.kind === "response" && d.status === 200 && d.mediaType === "application/json" && Array.isArray(results)
      ? { result: "PASS", actual: `200 ${resultsText(results)}` }
      : {
          result: "FAIL",
          actual:
            d.kind === "response"
              ? `${answerText(d)}${d.status === 200 ? `, ${d.mediaType || "no Content-Type"}` : ""}`
              : answerText(d),
        },
    [sent],
  );
  if (!Array.isArray(results))
    skip(
      ctx,
      ["results-count", "results-order", "result-fields", "recipient-not-found"],
      `no DeliveryResult to read (deliver: ${answerText(d)})`,
    );
  else resultCases(p, delivered, results);
  const answered200 = d.kind === "response" && d.status === 200;
  if (runs(ctx, "replay")) await replayCase(p, delivered, answered200);
  if (runs(ctx, "idempotency-conflict")) await conflictCase(p, delivered, answered200);
  if (runs(ctx, "all-rejected") && ctx.absentOne !== undefined) await allRejectedCase(p, ctx.absentOne);
  if (runs(ctx, "unknown-envelope-fields")) await unknownFieldsCase(p);
  return true;
}

/** deliver failed with a 401: the probe's key is not trusted; why it may be, and every POST case skipped. */
function keyRefused(p: Delivering, delivered: Delivered, keyInDns: string | undefined): void {
  const { ctx, signer } = p;
  const d = delivered.sent.answer as Answered;
  const skew = clockSkewS(d.headers.get("date"), ctx.ports.clock.now());
  const hints = [
    keyInDns,
    `publish ${signer.keyid}. IN TXT "${signer.keyRecord}" or add it to the receiver's keyRecords (mailscope keygen prints both)`,
    skew !== undefined && Math.abs(skew) > 60
      ? `the receiver's clock (its Date header) is ${skew} s ${skew > 0 ? "ahead of" : "behind"} the probe's, so a tolerance on created (G3) may refuse the signature`
      : undefined,
  ].filter((x): x is string => x !== undefined);
  record(
    ctx,
    "deliver",
    {
      result: "FAIL",
      actual: answerText(d),
      why: `a correctly signed delivery was refused: the receiver does not trust keyid ${signer.keyid}, or verifies signatures wrongly. ${hints.join("; ")}`,
    },
    [delivered.sent],
  );
  skip(
    ctx,
    idsOfSteps(ctx, POST_STEPS),
    `the receiver refuses the probe's correctly signed delivery (deliver: ${answerText(d)}), so past the signature nothing can be told, and a 401 would prove nothing: fix the key first`,
  );
}

/** results-count, results-order, result-fields and recipient-not-found, on the valid delivery's results. */
function resultCases(p: Delivering, delivered: Delivered, results: readonly unknown[]): void {
  const { ctx } = p;
  const sent = [delivered.sent];
  const entries = results.map((r) => (typeof r === "object" && r !== null ? (r as Record<string, unknown>) : {}));
  const addresses = entries.map((e) => normalized(e["recipient"]));
  const wanted = delivered.to.map((t) => normalized(t));
  const counted = wanted.map((w) => addresses.filter((a) => a === w).length);
  const strangers = addresses.filter((a) => !wanted.includes(a));
  record(
    ctx,
    "results-count",
    counted.every((n) => n === 1) && strangers.length === 0
      ? { result: "PASS", actual: `${results.length} entries for ${wanted.length} recipients` }
      : {
          result: "FAIL",
          actual: `${results.length} entries for ${wanted.length} recipients${wanted
            .map((w, i) => (counted[i] === 1 ? "" : `; ${w} ${counted[i] === 0 ? "missing" : `${counted[i]} times`}`))
            .join("")}${strangers.length > 0 ? `; not in to: ${strangers.join(", ")}` : ""}`,
        },
    sent,
  );
  const order = addresses.map((a) => wanted.indexOf(a)).filter((i) => i >= 0);
  const inOrder = order.every((v, i) => i === 0 || v > (order[i - 1] ?? -1) || v === order[i - 1]);
  record(
    ctx,
    "results-order",
    wanted.length < 2
      ? { result: "SKIP", actual: "one recipient", why: "needs two recipients: give two --mailbox, or --absent" }
      : inOrder
        ? { result: "PASS", actual: `in the order of to: ${addresses.join(", ")}` }
        : { result: "FAIL", actual: `results: ${addresses.join(", ")}; to: ${wanted.join(", ")}` },
    sent,
  );
  const bad = entries.flatMap((e, i) => entryProblems(e).map((pr) => `entry ${i} (${String(e["recipient"])}): ${pr}`));
  record(
    ctx,
    "result-fields",
    bad.length === 0
      ? { result: "PASS", actual: resultsText(results) }
      : { result: "FAIL", actual: bad.slice(0, 3).join("; ") },
    sent,
  );
  const absentOne = ctx.absentOne;
  if (absentOne === undefined) return;
  const entry = entries.find((e) => normalized(e["recipient"]) === normalized(absentOne));
  const problem = problemOf(entry?.["problem"]);
  record(
    ctx,
    "recipient-not-found",
    entry === undefined
      ? { result: "SKIP", actual: `no entry for ${absentOne}`, why: "results-count says why" }
      : entry["status"] === "rejected" && problem?.identifier === "recipient_not_found"
        ? { result: "PASS", actual: `${absentOne}: rejected (recipient_not_found)` }
        : {
            result: "FAIL",
            actual: `${absentOne}: ${String(entry["status"])}${problem !== undefined ? ` (${problem.identifier})` : ""}`,
            why: entry["status"] === "accepted" ? "--absent must name a recipient that does not exist" : undefined,
          },
    sent,
  );
}

/** replay: the valid delivery sent again with its key is answered with the same bytes (POST-12). */
async function replayCase(p: Delivering, delivered: Delivered, answered200: boolean): Promise<void> {
  const { ctx } = p;
  const d = delivered.sent.answer;
  if (!answered200 || d.kind !== "response") {
    skip(ctx, ["replay"], `the delivery it repeats was not answered 200 (deliver: ${answerText(d)})`);
    return;
  }
  const again = await post(p, { ...delivered.spec, key: delivered.key }, ["replay"], delivered.shape);
  const r = again.answer;
  const same =
    r.kind === "response" &&
    r.status === d.status &&
    (r.headers.get("content-type") ?? "") === (d.headers.get("content-type") ?? "") &&
    sameBytes(r.body, d.body);
  record(
    ctx,
    "replay",
    same
      ? { result: "PASS", actual: `${r.kind === "response" ? r.status : ""}, the same ${d.body.length} bytes` }
      : {
          result: "FAIL",
          actual:
            r.kind !== "response"
              ? answerText(r)
              : r.status !== d.status
                ? `${answerText(r)}, first ${d.status}`
                : `${r.status} with ${sameBytes(r.body, d.body) ? "another Content-Type" : `another body (${r.body.length} bytes, first ${d.body.length}): ${clip(decoder.decode(r.body), 100)}`}`,
        },
    [delivered.sent, again],
  );
}

/** idempotency-conflict: the valid delivery's key with another body is answered 409 (POST-13). */
async function conflictCase(p: Delivering, delivered: Delivered, answered200: boolean): Promise<void> {
  const { ctx } = p;
  if (!answered200) {
    skip(
      ctx,
      ["idempotency-conflict"],
      `the delivery whose key it reuses was not answered 200 (deliver: ${answerText(delivered.sent.answer)})`,
    );
    return;
  }
  const other = message(
    p,
    "idempotency-conflict",
    delivered.to,
    ", the same Idempotency-Key as deliver with another body",
  );
  // Not retried: the same key with another body is not idempotent.
  const sent = await send(
    ctx,
    ["idempotency-conflict"],
    () => {
      const spec = { ...delivered.spec, caseId: "idempotency-conflict", message: other };
      return delivery(p, spec, delivered.key, bodyOf(p, spec));
    },
    false,
  );
  record(ctx, "idempotency-conflict", expectProblem(sent.answer, 409, "idempotency_conflict"), [delivered.sent, sent]);
}

/** all-rejected: a delivery whose only recipient does not exist is answered 200, its result rejected. */
async function allRejectedCase(p: Delivering, absentOne: string): Promise<void> {
  const sent = await post(p, { caseId: "all-rejected", to: [absentOne] });
  const a = sent.answer;
  const list =
    a.kind === "response" && a.status === 200
      ? (a.json as Record<string, unknown> | undefined)?.["results"]
      : undefined;
  record(
    p.ctx,
    "all-rejected",
    Array.isArray(list)
      ? { result: "PASS", actual: `200 ${resultsText(list)}` }
      : {
          result: "FAIL",
          actual: answerText(a),
          why: "a request that is itself acceptable is answered 200, whatever becomes of its recipients",
        },
    [sent],
  );
}

/** unknown-envelope-fields: an envelope with a member the spec does not define is delivered (ENV-9). */
async function unknownFieldsCase(p: Delivering): Promise<void> {
  const sent = await post(p, {
    caseId: "unknown-envelope-fields",
    envelope: { from: p.from, to: [p.mailbox0], x_mailscope_probe: { note: "an unknown member: ignore it (ENV-9)" } },
  });
  const a = sent.answer;
  record(
    p.ctx,
    "unknown-envelope-fields",
    a.kind === "response" && a.status === 200
      ? {
          result: "PASS",
          actual: `200 ${resultsText((a.json as Record<string, unknown> | undefined)?.["results"])}`,
        }
      : { result: "FAIL", actual: answerText(a) },
    [sent],
  );
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Seconds the receiver's Date header is ahead of `nowMs` (negative: behind); undefined without a date. */
function clockSkewS(date: string | null, nowMs: number): number | undefined {
  if (date === null) return undefined;
  const ms = Date.parse(date);
  return Number.isFinite(ms) ? Math.round((ms - nowMs) / 1000) : undefined;
}
