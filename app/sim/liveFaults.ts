/**
 * The scenario's fault language on real traffic: what `mailscope serve
 * --faults faults.yaml` puts in front of its receiver, so that an implementer
 * can point their own sender at it and watch it retry, fall back and bounce
 * (docs/serve-and-lint.md "Faults on real traffic").
 *
 * A faults file holds `network` faults — the kinds of a scenario's
 * `faults.network` (app/sim/network.ts), with the same fields — plus
 * `unsupported-version`, and `recipients` faults: per-recipient deferrals and
 * rejections and failures after acceptance (with their DSN when serve has an
 * outbound side). Each fault may have `id`, `probability`, a time window
 * (`from`, `until`: offsets from serve's start on the spec's clock, so a
 * `--clock-scale` of 60 makes `until: 2h` two minutes) and a request window
 * (`requests: 3`, `1-3`, `4-`: the Nth requests in its scope, counted from 1).
 *
 * Played on a real connection, a fault that gives no answer closes the
 * connection once the request head has arrived (a real server cannot refuse a
 * TCP connection, nor fail a TLS handshake, per request): the sender sees a
 * connection closed without an answer, a temporary, fallback-eligible failure
 * as the scenario's kind is (ERR-21). `timeout` holds the request that long
 * first; `latency` waits and goes on; `slow-body` trickles the answer.
 * The handler signals a closed connection with `Response.error()`, fetch's
 * network error, which the HTTPS server turns into a destroyed socket.
 *
 * Pure core code: the clock, the random draws and the receiver come as ports.
 */
import * as z from "zod";
import type { Clock } from "../ports.ts";
import type { ReceiverHandler, RecipientFaultAnswer, RecipientFaults } from "../receiver/receiver.ts";
import { STATUS_PATTERN } from "../protocol/dsn.ts";
import type { FailAfterAcceptanceRule } from "../receiver/config.ts";
import { faultScopeShape, matchGlob, parseDurationMs, sampleLatencyMs } from "./faultScope.ts";
import { CAPABILITIES_PATH, faultAnswer, networkFaultSchema, requestScope, type NetworkFault } from "./network.ts";
import type { SeededRandom } from "./random.ts";
import { parseYamlWith, type FileError } from "./yamlPosition.ts";

/** `requests: 3`, `"1-3"`, `"4-"`: which of the requests in a fault's scope it acts on, from 1. */
const requestWindow = z
  .union([
    z.int().min(1),
    z.string().regex(/^\s*[1-9][0-9]*\s*(-\s*([1-9][0-9]*)?\s*)?$/, {
      message: "a request count (3), a range (1-3) or an open range (4-)",
    }),
  ])
  .meta({
    description: "The requests in the fault's scope it acts on: 3, 1-3, 4-; counted from 1 since serve started.",
  });

const liveScope = { requests: requestWindow.optional() };

/** `unsupported-version`: a 404 `unsupported_version` problem with `versions` (ERR-15), as a receiver not serving v1 gives. */
const unsupportedVersionSchema = z.strictObject({
  kind: z.literal("unsupported-version"),
  ...requestScope,
  ...liveScope,
  versions: z
    .array(z.string().regex(/^v[1-9][0-9]*$/))
    .min(1)
    .default(["v2"]),
  problemBase: z.url().optional(),
});

/** The network faults of a faults file: the scenario's kinds with a request window, and `unsupported-version`. */
export const liveNetworkFaultSchema = z.discriminatedUnion("kind", [
  ...networkFaultSchema.options.map((option) => option.extend(liveScope)),
  unsupportedVersionSchema,
] as unknown as [typeof unsupportedVersionSchema]);

const recipientScope = {
  ...faultScopeShape,
  ...liveScope,
  /** The mailbox (a glob: `*@b.example`). */
  mailbox: z.string().min(1),
};

/** The per-recipient faults of a faults file. */
export const liveRecipientFaultSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("deferred"),
    ...recipientScope,
    problem: z.enum(["temporary_failure", "mailbox_full", "rate_limited"]).default("temporary_failure"),
    retryAfterS: z.int().min(0).max(31_536_000).optional(),
  }),
  z.strictObject({
    kind: z.literal("rejected"),
    ...recipientScope,
    problem: z.enum(["recipient_not_found", "policy_rejected"]).default("policy_rejected"),
  }),
  z.strictObject({
    kind: z.literal("fail-after-acceptance"),
    ...recipientScope,
    status: z.string().regex(STATUS_PATTERN, "an RFC 3463 status code such as 5.2.1"),
    diagnostic: z
      .string()
      .min(1)
      .refine((text) => !/[\r\n]/.test(text), "one line"),
    delayMs: z.int().min(0).max(31_536_000_000).default(0),
  }),
]);

/** A faults file: `network` and `recipients` faults. */
export const liveFaultsSchema = z.strictObject({
  network: z.array(liveNetworkFaultSchema).default([]),
  recipients: z.array(liveRecipientFaultSchema).default([]),
});

/** A network fault of a faults file (the union above, typed by hand: zod cannot spread a union's options typed). */
export type LiveNetworkFault =
  (NetworkFault & { readonly requests?: number | string | undefined }) | z.output<typeof unsupportedVersionSchema>;
export type LiveRecipientFault = z.output<typeof liveRecipientFaultSchema>;
export type LiveFaults = Omit<z.output<typeof liveFaultsSchema>, "network"> & {
  readonly network: readonly LiveNetworkFault[];
};

/** Reads a faults file; every problem with its line, column and field (`network[2].kind`). Never throws. */
export function parseLiveFaults(
  text: string,
  file: string,
): { readonly ok: true; readonly faults: LiveFaults } | { readonly ok: false; readonly errors: readonly FileError[] } {
  const parsed = parseYamlWith(text, file, liveFaultsSchema, {
    empty: "the file is empty; a faults file is a mapping with network and recipients",
    notMapping: "a faults file is a mapping with network and recipients",
  });
  return parsed.ok ? { ok: true, faults: parsed.value as LiveFaults } : parsed;
}

/** A fault's label in the log: its `id`, else where it is in the file, `network[0]`, `recipients[2]`. */
function labelOf(list: string, index: number, fault: { readonly id?: string | undefined }): string {
  return fault.id ?? `${list}[${index}]`;
}

/** The first and last request a window takes (`last` infinite when open). */
function parseRequests(value: number | string | undefined): { first: number; last: number } {
  if (value === undefined) return { first: 1, last: Number.POSITIVE_INFINITY };
  if (typeof value === "number") return { first: value, last: value };
  const [a, b] = value.split("-").map((x) => x.trim());
  const first = Number(a);
  return { first, last: b === undefined ? first : b === "" ? Number.POSITIVE_INFINITY : Number(b) };
}

/** A time offset of the faults file on the real clock: durations on the spec's clock are divided by the scale. */
function realTimeMs(offset: number | string | undefined, startMs: number, scale: number, open: number): number {
  if (offset === undefined) return open;
  if (typeof offset === "number") return startMs + offset / scale;
  const duration = parseDurationMs(offset);
  return duration !== undefined ? startMs + duration / scale : Date.parse(offset);
}

interface Compiled<F> {
  readonly spec: F;
  readonly label: string;
  readonly fromMs: number;
  readonly untilMs: number;
  readonly requests: { readonly first: number; readonly last: number };
  readonly chance: SeededRandom;
  /** Requests in its scope and time window so far. */
  count: number;
}

/** What the layer did to one request, for serve's log and the sender's expectations. */
export interface AppliedFaults {
  /** The network fault that decided the answer (or delayed it), with the count that made it act. */
  readonly network: readonly { readonly label: string; readonly kind: string; readonly count: number }[];
  /** Per-recipient faults that stood in for a recipient's result. */
  readonly recipients: readonly {
    readonly label: string;
    readonly kind: string;
    readonly mailbox: string;
    readonly count: number;
  }[];
  /** The connection was closed without an answer, and how the sender sees that. */
  readonly dropped?: "connection-refused" | "connection-reset" | "tls" | "timeout";
}

/** What {@link createLiveFaultLayer} needs. */
export interface LiveFaultLayerOptions {
  readonly faults: LiveFaults;
  readonly clock: Pick<Clock, "now" | "setTimeout">;
  /** When serve started: the time windows count from it. */
  readonly startMs: number;
  /** Spec time per real time (`--clock-scale`): 60 makes a minute of the faults file's windows a second. */
  readonly clockScale: number;
  /** Each fault draws from a stream forked from it by its label. */
  readonly random: SeededRandom;
  /** The receiver's `{problem_base}`, for the problems faults answer with. */
  readonly problemBase: string;
  /** The domains the receiver serves (a partition's other side). */
  readonly servedDomains: readonly string[];
  /** Called once per request with what the layer did, as the answer leaves. */
  readonly onApplied?: (request: Request, applied: AppliedFaults, response: Response) => void;
}

/** The signing domain of a signed request (the keyid's domain, G4), else undefined. */
export function signingDomainOf(request: Request): string | undefined {
  const input = request.headers.get("signature-input");
  const keyid = input === null ? undefined : /;\s*keyid="([^"]*)"/.exec(input)?.[1];
  const at = keyid?.indexOf("._svckey.") ?? -1;
  return keyid === undefined || at < 0 ? undefined : keyid.slice(at + "._svckey.".length).toLowerCase();
}

/**
 * The receiver behind the faults: a handler that plays them on each request
 * before (or instead of, or after) handing it to `receiver`.
 */
export function createLiveFaultLayer(receiver: ReceiverHandler, options: LiveFaultLayerOptions): ReceiverHandler {
  const { clock, startMs } = options;
  const scale = options.clockScale;
  const compile = <
    F extends {
      readonly id?: string | undefined;
      readonly kind: string;
      readonly from?: number | string | undefined;
      readonly until?: number | string | undefined;
      readonly requests?: number | string | undefined;
    },
  >(
    list: string,
    faults: readonly F[],
  ): Compiled<F>[] =>
    faults.map((spec, index) => {
      const label = labelOf(list, index, spec);
      return {
        spec,
        label,
        fromMs: realTimeMs(spec.from, startMs, scale, Number.NEGATIVE_INFINITY),
        untilMs: realTimeMs(spec.until, startMs, scale, Number.POSITIVE_INFINITY),
        requests: parseRequests(spec.requests),
        chance: options.random.fork(`fault:${label}`),
        count: 0,
      };
    });
  const network = compile("network", options.faults.network);
  const recipients = compile("recipients", options.faults.recipients);
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => clock.setTimeout(() => resolve(), ms));
  const base = (explicit: string | undefined): string => (explicit ?? options.problemBase).replace(/\/+$/, "");

  /** Whether a fault in scope acts now: its window, then its count, then its probability. Counts the request. */
  function acts<F extends { readonly probability?: number | undefined }>(fault: Compiled<F>, nowMs: number): boolean {
    if (nowMs < fault.fromMs || nowMs >= fault.untilMs) return false;
    fault.count += 1;
    if (fault.count < fault.requests.first || fault.count > fault.requests.last) return false;
    return fault.spec.probability === undefined || fault.chance.chance(fault.spec.probability);
  }

  function inScope(spec: LiveNetworkFault, url: URL, method: string, source: string | undefined): boolean {
    if (spec.kind === "partition") {
      const [a, b] = spec.between.map((d) => d.toLowerCase());
      const served = (d: string): boolean => options.servedDomains.includes(d);
      return source !== undefined && ((source === a && served(b ?? "")) || (source === b && served(a ?? "")));
    }
    const capabilitiesKind = spec.kind === "capabilities-invalid" || spec.kind === "capabilities-unfetchable";
    const path = spec.path ?? (capabilitiesKind ? CAPABILITIES_PATH : undefined);
    const wanted = spec.method ?? (capabilitiesKind ? "GET" : undefined);
    if (spec.host !== undefined && !matchGlob(spec.host, url.hostname)) return false;
    if (path !== undefined && !matchGlob(path, url.pathname)) return false;
    if (wanted !== undefined && wanted.toUpperCase() !== method) return false;
    if (spec.source !== undefined && spec.source.toLowerCase() !== source) return false;
    return true;
  }

  /** The per-recipient faults of one request. */
  function recipientFaultsFor(nowMs: number, applied: AppliedFaults["recipients"][number][]): RecipientFaults {
    const find = (mailbox: string, kinds: readonly string[]): Compiled<LiveRecipientFault> | undefined =>
      recipients.find((f) => kinds.includes(f.spec.kind) && matchGlob(f.spec.mailbox, mailbox) && acts(f, nowMs));
    return {
      answer(mailbox): RecipientFaultAnswer | undefined {
        const fault = find(mailbox, ["deferred", "rejected"]);
        const spec = fault?.spec;
        if (fault === undefined || spec === undefined || spec.kind === "fail-after-acceptance") return undefined;
        applied.push({ label: fault.label, kind: spec.kind, mailbox, count: fault.count });
        return {
          status: spec.kind,
          problem: spec.problem,
          detail: `fault ${fault.label} (mailscope serve --faults): ${spec.kind} for the ${ordinal(fault.count)} time`,
          ...(spec.kind === "deferred" && spec.retryAfterS !== undefined && { retryAfterS: spec.retryAfterS }),
        };
      },
      failAfterAcceptance(mailbox): FailAfterAcceptanceRule | undefined {
        const fault = find(mailbox, ["fail-after-acceptance"]);
        const spec = fault?.spec;
        if (fault === undefined || spec?.kind !== "fail-after-acceptance") return undefined;
        applied.push({ label: fault.label, kind: spec.kind, mailbox, count: fault.count });
        return { mailbox, status: spec.status, diagnostic: spec.diagnostic, delayMs: spec.delayMs };
      },
    };
  }

  return async (request, context) => {
    const nowMs = clock.now();
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const source = signingDomainOf(request);
    const appliedNetwork: { label: string; kind: string; count: number }[] = [];
    const appliedRecipients: AppliedFaults["recipients"][number][] = [];
    let dropped: AppliedFaults["dropped"];
    let slow: { chunkBytes: number; intervalMs: number } | undefined;
    let resetAfter = false;
    const done = (response: Response): Response => {
      options.onApplied?.(
        request,
        { network: appliedNetwork, recipients: appliedRecipients, ...(dropped !== undefined && { dropped }) },
        response,
      );
      return response;
    };
    const drop = (how: NonNullable<AppliedFaults["dropped"]>): Response => {
      dropped = how;
      return done(Response.error());
    };

    for (const fault of network) {
      const spec = fault.spec;
      if (!inScope(spec, url, method, source) || !acts(fault, clock.now())) continue;
      appliedNetwork.push({ label: fault.label, kind: spec.kind, count: fault.count });
      switch (spec.kind) {
        case "latency": {
          const ms = sampleLatencyMs(spec.latency, fault.chance);
          if (ms > 0) await sleep(ms);
          continue;
        }
        case "connection-refused":
          return drop("connection-refused");
        case "tls-failure":
          return drop("tls");
        case "connection-reset":
          if (spec.phase === "response") {
            resetAfter = true;
            continue;
          }
          return drop("connection-reset");
        case "timeout":
          await sleep(spec.afterMs);
          return drop("timeout");
        case "partition":
          if (spec.failure === "timeout") await sleep(spec.afterMs);
          return drop(spec.failure === "timeout" ? "timeout" : "connection-refused");
        case "slow-body":
          slow = { chunkBytes: spec.chunkBytes, intervalMs: spec.intervalMs };
          continue;
        case "unsupported-version":
          return done(
            new Response(
              JSON.stringify({
                type: `${base(spec.problemBase)}/unsupported_version`,
                title: "Unsupported version",
                status: 404,
                detail: `fault ${fault.label} (mailscope serve --faults): served here: ${spec.versions.join(", ")}`,
                versions: spec.versions,
              }),
              { status: 404, headers: { "content-type": "application/problem+json" } },
            ),
          );
        default: {
          const answer = faultAnswer(spec as NetworkFault, base("problemBase" in spec ? spec.problemBase : undefined));
          if (answer !== undefined) return done(answer);
        }
      }
    }

    const response = await receiver(request, {
      ...context,
      recipientFaults: recipientFaultsFor(nowMs, appliedRecipients),
    });
    if (resetAfter) {
      // The receiver handled it (and stored what it accepted); the answer is lost on the way.
      await response.arrayBuffer().catch(() => undefined);
      return drop("connection-reset");
    }
    if (slow === undefined) return done(response);
    const body = new Uint8Array(await response.arrayBuffer());
    const { chunkBytes, intervalMs } = slow;
    let at = 0;
    return done(
      new Response(
        new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (at > 0) await sleep(intervalMs);
            controller.enqueue(body.slice(at, at + chunkBytes));
            at += chunkBytes;
            if (at >= body.length) controller.close();
          },
        }),
        { status: response.status, statusText: response.statusText, headers: response.headers },
      ),
    );
  };
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${n % 10 > 3 ? "th" : suffix}`;
}
