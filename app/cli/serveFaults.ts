/**
 * `mailscope serve --faults faults.yaml [--clock-scale 60] [--explain]`: the
 * scenario's fault language played on real traffic in front of serve's
 * receiver (`app/sim/liveFaults.ts`), and, under each request of the log,
 * which fault acted and what the spec expects of the sender next
 * (`app/sender/expectations.ts`). Loaded only when one of the options is
 * given: a plain `serve` does not pay for the simulator's network module.
 */
import type { ReceiverHandler } from "../receiver/receiver.ts";
import { createSenderWatch, type WatchedRequest } from "../sender/expectations.ts";
import {
  createLiveFaultLayer,
  parseLiveFaults,
  signingDomainOf,
  type AppliedFaults,
  type LiveFaults,
} from "../sim/liveFaults.ts";
import { createRandom } from "../sim/random.ts";
import { formatFileError } from "../sim/yamlPosition.ts";
import type { Clock } from "../ports.ts";
import { readBoundedText, readErrorReason } from "../node/boundedRead.ts";

/** Bad input of the faults file: every problem as `file:line:column: field: message`. */
export class FaultsFileError extends Error {}

/** The faults file, checked. @throws FaultsFileError naming the file, line, column and field of each problem. */
export async function readFaultsFile(file: string): Promise<LiveFaults> {
  let text: string;
  try {
    text = await readBoundedText(file, "configurations");
  } catch (error) {
    throw new FaultsFileError(`${file}:1:1: (file): cannot be read: ${readErrorReason(error)}`);
  }
  const parsed = parseLiveFaults(text, file);
  if (!parsed.ok) throw new FaultsFileError(parsed.errors.map(formatFileError).join("\n"));
  return parsed.faults;
}

/** What {@link explainedHandler} needs. */
export interface ExplainOptions {
  /** The faults to play; none: the receiver as it is, only explained. */
  readonly faults?: LiveFaults;
  readonly clockScale: number;
  readonly clock: Pick<Clock, "now" | "setTimeout">;
  readonly startMs: number;
  readonly problemBase: string;
  readonly servedDomains: readonly string[];
}

/** The log's notes of one request, waiting for its log line (matched by method, target and key). */
export interface RequestNotes {
  /** The lines to print under the request's log line, and forgets them. */
  take(method: string, target: string, idempotencyKey: string | undefined): string[];
}

/**
 * `receiver` with the faults in front, and the notes the log prints under
 * each request: the faults that acted, how the sender kept to what the spec
 * expected, and what it expects next.
 */
export function explainedHandler(
  receiver: ReceiverHandler,
  options: ExplainOptions,
): { readonly handler: (request: Request) => Promise<Response>; readonly notes: RequestNotes } {
  const applied = new WeakMap<Request, AppliedFaults>();
  const layered =
    options.faults === undefined
      ? receiver
      : createLiveFaultLayer(receiver, {
          faults: options.faults,
          clock: options.clock,
          startMs: options.startMs,
          clockScale: options.clockScale,
          random: createRandom("mailscope serve --faults"),
          problemBase: options.problemBase,
          servedDomains: options.servedDomains,
          onApplied: (request, what) => applied.set(request, what),
        });
  const watch = createSenderWatch({ clockScale: options.clockScale, problemBase: options.problemBase });
  const waiting = new Map<string, string[][]>();
  const keyOf = (method: string, target: string, idempotencyKey: string | undefined): string =>
    `${method} ${target} ${idempotencyKey ?? ""}`;

  const handler = async (request: Request): Promise<Response> => {
    const atMs = options.clock.now();
    const response = await layered(request);
    const what = applied.get(request);
    const url = new URL(request.url);
    const type = response.headers.get("content-type") ?? "";
    const slow = what?.network.some((f) => f.kind === "slow-body") === true;
    const json =
      response.type !== "error" && !slow && /json/i.test(type)
        ? ((await response
            .clone()
            .json()
            .catch(() => undefined)) as unknown)
        : undefined;
    const key = request.headers.get("idempotency-key") ?? undefined;
    const signingDomain = signingDomainOf(request);
    const watched: WatchedRequest = {
      atMs,
      method: request.method,
      path: url.pathname,
      ...(signingDomain !== undefined && { signingDomain }),
      ...(key !== undefined && { idempotencyKey: key }),
      answer:
        what?.dropped !== undefined
          ? { kind: "none", failure: what.dropped }
          : {
              kind: "response",
              status: response.status,
              retryAfter: response.headers.get("retry-after"),
              ...(json !== undefined && { json }),
            },
    };
    const lines = [
      ...(what?.network ?? []).map(
        (f) =>
          `fault ${f.label}: ${f.kind} (request ${f.count} in its scope)${what?.dropped !== undefined && f.kind !== "latency" && f.kind !== "slow-body" ? `: the connection was closed without an answer (the sender sees ${what.dropped})` : ""}`,
      ),
      ...(what?.recipients ?? []).map((f) => `fault ${f.label}: ${f.kind} for ${f.mailbox} (${f.count} so far for it)`),
      ...watch.observe(watched),
    ];
    const id = keyOf(request.method, `${url.pathname}${url.search}`, key);
    waiting.set(id, [...(waiting.get(id) ?? []), lines]);
    return response;
  };
  return {
    handler,
    notes: {
      take(method, target, idempotencyKey) {
        const id = keyOf(method, target, idempotencyKey);
        const queue = waiting.get(id);
        const first = queue?.shift();
        if (queue !== undefined && queue.length === 0) waiting.delete(id);
        return first ?? [];
      },
    },
  };
}

/** The banner's line about the faults and the clock scale. */
export function describeFaults(file: string | undefined, faults: LiveFaults | undefined, clockScale: number): string {
  const count = faults === undefined ? 0 : faults.network.length + faults.recipients.length;
  return `  faults:      ${file === undefined ? "none" : `${count} from ${file}`}; the spec's clock ×${clockScale}; each request's log line is followed by what the spec expects of the sender next`;
}
