/**
 * What came back to the probe, and what it reads in it: an answer (a
 * response or the failure that stood for one), the problem document it
 * carries, a DeliveryResult's entries, and an answer held against the one a
 * case expects. Pure functions of the answer; nothing here sends or records.
 */
import { parseMailbox } from "../protocol/mailbox.ts";
import type { ProbeResult } from "./probe.ts";

/** A problem document as the probe read it. */
export interface ProblemSeen {
  readonly type: string;
  /** The last segment of the type. */
  readonly identifier: string;
  readonly detail?: string;
  readonly hasVersions: boolean;
  readonly versions?: unknown;
}

/** What came back to a request: a response, or why none came. */
export type Answer =
  | {
      readonly kind: "response";
      readonly status: number;
      readonly headers: Headers;
      readonly body: Uint8Array;
      readonly mediaType: string;
      readonly json: unknown;
      readonly problem?: ProblemSeen;
      /** Request body bytes the probe had sent when the answer was read (a streamed body). */
      readonly sentBytes?: number;
    }
  | { readonly kind: "failure"; readonly failure: string; readonly message: string };

/** An answer that is a response. */
export type Answered = Extract<Answer, { kind: "response" }>;

/** A request sent (and maybe sent again), with what came back last and the exchanges it rests on. */
export interface Sent {
  readonly answer: Answer;
  readonly exchanges: readonly string[];
  readonly evidence: readonly number[];
}

/** A case's result, with what was seen and why. */
export interface Judged {
  readonly result: ProbeResult;
  readonly actual: string;
  readonly why?: string;
}

export const decoder = new TextDecoder("utf-8", { fatal: false });

export function mediaTypeOf(headers: Headers): string {
  return (headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

export function problemOf(json: unknown): ProblemSeen | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const record = json as Record<string, unknown>;
  const type = record["type"];
  if (typeof type !== "string") return undefined;
  const detail = record["detail"];
  return {
    type,
    identifier: type.replace(/^.*\//, ""),
    ...(typeof detail === "string" && { detail }),
    hasVersions: Object.hasOwn(record, "versions"),
    ...(Object.hasOwn(record, "versions") && { versions: record["versions"] }),
  };
}

export function clip(text: string, max = 160): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** An answer in a few words: `401 invalid_signature: “created is 3600 s in the past”` (the detail as the receiver wrote it), or why none came. */
export function answerText(answer: Answer): string {
  if (answer.kind === "failure") return `no answer (${answer.failure}): ${clip(answer.message)}`;
  const results = answer.status === 200 ? (answer.json as { results?: unknown } | undefined)?.results : undefined;
  if (Array.isArray(results)) return `200 ${clip(resultsText(results))}`;
  const what =
    answer.problem !== undefined
      ? ` ${answer.problem.identifier}${answer.problem.detail !== undefined ? `: “${clip(answer.problem.detail, 120)}”` : ""}`
      : answer.mediaType !== ""
        ? ` ${answer.mediaType}`
        : "";
  return `${answer.status}${what}`;
}

/** An answer a gap allows besides the one expected, with the note a pass carries. */
export interface Alternative {
  readonly status: number;
  readonly identifier: string;
  readonly note: string;
}

/** `expected` against what came: PASS, PASS with the note of an alternative a gap allows, or FAIL with why. */
export function expectProblem(
  answer: Answer,
  status: number,
  identifier: string,
  alternatives: readonly Alternative[] = [],
): Judged {
  const actual = answerText(answer);
  if (answer.kind === "failure") return { result: "FAIL", actual, why: `no answer; expected ${status} ${identifier}` };
  if (answer.status === status && answer.problem?.identifier === identifier) return { result: "PASS", actual };
  const alternative = alternatives.find(
    (a) => a.status === answer.status && a.identifier === answer.problem?.identifier,
  );
  if (alternative !== undefined) return { result: "PASS", actual, why: alternative.note };
  if (answer.status >= 200 && answer.status < 300) {
    const list = (answer.json as Record<string, unknown> | undefined)?.["results"];
    const stored = Array.isArray(list)
      ? list
          .filter((e) => typeof e === "object" && e !== null && (e as Record<string, unknown>)["status"] === "accepted")
          .map((e) => String((e as Record<string, unknown>)["recipient"]))
      : [];
    return {
      result: "FAIL",
      actual,
      why: `accepted a request it must refuse${stored.length > 0 ? ` (stored for ${stored.join(", ")})` : ""}; expected ${status} ${identifier}`,
    };
  }
  if (answer.status === status)
    return {
      result: "FAIL",
      actual,
      why: `the status is right, but ${answer.problem === undefined ? "there is no problem document" : `the problem is ${answer.problem.identifier}`}; expected ${identifier}`,
    };
  return { result: "FAIL", actual, why: `expected ${status} ${identifier}` };
}

/** The problems of one DeliveryResult entry (RCP-2, RCP-4, RCP-5). */
export function entryProblems(entry: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  const status = entry["status"];
  if (typeof entry["recipient"] !== "string" || !parseMailbox(entry["recipient"]).ok)
    out.push("recipient is not a mailbox");
  if (status !== "accepted" && status !== "rejected" && status !== "deferred")
    out.push(`status ${JSON.stringify(status)}`);
  if (status !== "accepted" && problemOf(entry["problem"]) === undefined) out.push("no problem with a type");
  const after = entry["retry_after"];
  if (after !== undefined && !(Number.isInteger(after) && (after as number) >= 0))
    out.push(`retry_after ${JSON.stringify(after)}`);
  return out;
}

/** `bob@b.example accepted, nobody@b.example rejected (recipient_not_found)`. */
export function resultsText(results: unknown): string {
  if (!Array.isArray(results)) return "(no results)";
  return results
    .map((e) => {
      const r = typeof e === "object" && e !== null ? (e as Record<string, unknown>) : {};
      const problem = problemOf(r["problem"]);
      return `${String(r["recipient"])} ${String(r["status"])}${problem !== undefined ? ` (${problem.identifier})` : ""}`;
    })
    .join(", ");
}

/** A recipient as the Mailbox rules write it, to compare two (anything else as it is). */
export function normalized(address: unknown): string {
  if (typeof address !== "string") return String(address);
  const parsed = parseMailbox(address);
  return parsed.ok ? parsed.value.address : address;
}
