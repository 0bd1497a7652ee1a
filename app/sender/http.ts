/**
 * The small HTTP helpers the sender's discovery and attempts share: reading an
 * answer's body without trusting it, reading a problem document from it, and
 * naming a failure that produced no answer at all.
 */
import { TransportError } from "../ports.ts";
import { bodyBytesOf } from "../protocol/bodies.ts";
import type { Fetch } from "../ports.ts";
import type { TransportFailureKind as ErrorsFailureKind } from "../protocol/errors.ts";
import { parseJson, parseProblem } from "../protocol/resources.ts";
import type { Problem } from "../protocol/resources.ts";
import { errorMessage } from "../errorMessage.ts";

/** An HTTP exchange as the sender sees it: an answer with its whole body read, or no answer. */
export type Exchange =
  | { readonly kind: "answer"; readonly response: Response; readonly body: Uint8Array }
  | { readonly kind: "no-answer"; readonly failure: ErrorsFailureKind; readonly detail: string };

/** The errors table's failure kind for an exception from a Fetch: TLS and timeout by name, anything else a connection failure. */
export function failureKindOf(error: unknown): ErrorsFailureKind {
  if (error instanceof TransportError) {
    if (error.kind === "tls") return "tls";
    if (error.kind === "timeout") return "timeout";
  }
  return "connection";
}

function describe(error: unknown): string {
  if (error instanceof TransportError) return `${error.kind}: ${error.message}`;
  return errorMessage(error);
}

/**
 * Sends `request` and reads the whole answer. A Fetch that rejects, or a body
 * that breaks off, is "no answer" (Errors rule 3 makes both `temporary_failure`).
 */
export async function exchange(fetch: Fetch, request: Request): Promise<Exchange> {
  let response: Response;
  try {
    response = await fetch(request);
  } catch (error) {
    return { kind: "no-answer", failure: failureKindOf(error), detail: describe(error) };
  }
  try {
    const body = bodyBytesOf(response) ?? new Uint8Array(await response.arrayBuffer());
    return { kind: "answer", response, body };
  } catch (error) {
    return { kind: "no-answer", failure: "connection", detail: `the body broke off: ${describe(error)}` };
  }
}

/**
 * The problem document in an answer's body, or undefined when there is none
 * that reads as RFC 9457 (an empty body, other JSON, no JSON). The media type
 * is not insisted on: a body that is a problem is read as one.
 */
export function problemInBody(body: Uint8Array, problemBase: string): Problem | undefined {
  if (body.length === 0) return undefined;
  const json = parseJson(body, "$", "PRB-1");
  if (!json.ok) return undefined;
  const problem = parseProblem(json.value, problemBase);
  return problem.ok ? problem.value : undefined;
}

/** A problem's identifier-independent summary for the trace and for DSNs. */
export interface ProblemSummary {
  /** The problem `type` as sent, or a type the sender names for a failure without a problem document. */
  readonly type: string;
  /** The errors-table identifier it was handled as, if any. */
  readonly identifier?: string;
  readonly status?: number;
  readonly detail?: string;
}

/** `{problem_base}/<identifier>`: the type the sender names when it has no problem document of its own to cite. */
export function problemType(problemBase: string, identifier: string): string {
  return `${problemBase.replace(/\/+$/, "")}/${identifier}`;
}
