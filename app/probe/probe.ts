/**
 * `mailscope probe`'s engine: checks a real receiver against the spec from
 * outside, one case per receiver-side requirement (`cases.ts`), and records
 * every exchange in Mailscope's trace format, so that the app's sequence
 * diagram and inspector show what was sent and what came back.
 *
 * Pure core code over ports: the CLI hands it TLS 1.3 fetch, a TLS handshake
 * probe and DNS over the real network (`app/node/probeNetwork.ts`); a test can
 * hand it a receiver in process. Requests are built with the sender's own
 * pieces (the multipart body, Content-Digest, the profile's signature) and
 * then bent one way per case.
 *
 * Safety (docs/decisions/0043-probe-cases-and-safety.md):
 * - Mail goes only to `--mailbox` recipients (and the `--absent` one, which
 *   must not exist). A request that must be refused names `--mailbox` too, or
 *   an address nobody can have (in `.invalid`, or invalid by the Mailbox
 *   rules); `too-many-recipients` names `--absent`'s `{n}` addresses only.
 * - The plan (cases, requests, messages a receiver following the spec
 *   stores, and at most if it takes what it must refuse) is in `probe.started`,
 *   before any request; the CLI prints it first.
 * - At most `requestsPerSecond` requests start per second; each has the
 *   fetch port's timeout. An idempotent request (a GET, or a POST with a
 *   well-formed Idempotency-Key the receiver would replay) answered 429 or 503
 *   is sent once more after its Retry-After, if that is short enough; nothing
 *   else is ever sent twice.
 * - Every request has a connection of its own (the fetch port opens one per
 *   request): a body cut short, as the oversized one is once answered, never
 *   leaves a half-sent request on a connection used again.
 *
 * The run's state is one context object (`context.ts`, decision 0145); each
 * idea is a file of its own: what can run and the plan (`plan.ts`), reaching
 * the receiver (`connection.ts`: discovery, the key in DNS, TLS), sending
 * (`exchange.ts`), the answers read (`answers.ts`), the case families
 * (`capabilitiesCases.ts`, `deliveries.ts` and `deliveryCases.ts`,
 * `refusalCases.ts`, `answerCases.ts`) and the verdicts and the run they make
 * (`verdicts.ts`). This file says what a run is and walks its steps in order.
 */
import type { Clock, Fetch, Random, Resolver, TransportFailureKind } from "../ports.ts";
import type { Trace } from "../trace/schema.ts";
import { answerCases } from "./answerCases.ts";
import { capabilitiesCases, NO_CAPABILITIES, versionCases } from "./capabilitiesCases.ts";
import type { ProbeCase, ProbeGrade } from "./cases.ts";
import { createProbeContext, emit, idsOfSteps, type ProbeContext } from "./context.ts";
import { keyInDnsOf, originOf, tlsCases, tracedResolver } from "./connection.ts";
import { deliveringOf } from "./deliveries.ts";
import { deliveryCases } from "./deliveryCases.ts";
import { Silent } from "./exchange.ts";
import { missingNeed, NEED_WHY, POST_STEPS } from "./plan.ts";
import { badRequestCases, signatureCases, sizeCase } from "./refusalCases.ts";
import { finish, skip, skipRest } from "./verdicts.ts";

export { answerText } from "./answers.ts";
export { DEFAULT_RETRY_WAIT_MAX_MS } from "./context.ts";
export { MAX_SILENT } from "./exchange.ts";

/** A case's result. */
export type ProbeResult = "PASS" | "FAIL" | "SKIP";

/** One case as judged: the catalogue's entry, what came back, and the exchanges it rests on. */
export interface ProbeVerdict {
  readonly id: string;
  readonly rule: string;
  readonly rules: readonly string[];
  readonly gaps: readonly string[];
  readonly grade: ProbeGrade;
  readonly title: string;
  readonly expected: string;
  readonly actual: string;
  readonly result: ProbeResult;
  /** Why it failed or was skipped, or a note on a pass (an alternative answer a gap allows). */
  readonly why?: string;
  /** The HTTP exchanges it read (`x3`), in order. */
  readonly exchanges: readonly string[];
  /** The seqs of the trace events it rests on: requests, answers, failures, TLS handshakes. */
  readonly evidence: readonly number[];
}

/** What the probe will do, said before it does it. */
export interface ProbePlan {
  readonly cases: number;
  /** HTTP requests at most, not counting one retry of an idempotent request answered 429 or 503. */
  readonly requests: number;
  readonly handshakes: number;
  /** Messages a receiver that follows the spec stores. */
  readonly messages: number;
  /** …and at most, if it takes every request it must refuse. */
  readonly messagesAtMost: number;
  /** The only recipients a message may be stored for. */
  readonly mailboxes: readonly string[];
  readonly requestsPerSecond: number;
}

/** Who the probe signs as (`--from`, `--key`). */
export interface ProbeIdentity {
  /** The envelope `from`; its domain is the signing domain (AUTH-4). */
  readonly from: string;
  readonly keyid: string;
  readonly privateKey: CryptoKey;
  /** The TXT record that publishes the public key (G4), for the explanation of a 401. */
  readonly keyRecord: string;
}

/** What the probe is told. */
export interface ProbeOptions {
  /** As given: an origin (`https://mx.b.example:8443`) or a recipient domain (`b.example`). */
  readonly target: string;
  /** The Mailscope version, for the trace. */
  readonly mailscope: string;
  readonly identity?: ProbeIdentity;
  /** Recipients that exist and may be given the probe's messages. */
  readonly mailboxes: readonly string[];
  /** A recipient that does not exist; `{n}` in it makes as many as `too-many-recipients` needs. */
  readonly absent?: string;
  /** The `{problem_base}` every problem's type must start with; default: that of the first problem seen. */
  readonly problemBase?: string;
  /** The cases to run, in catalogue order (`selectCases`); default all. */
  readonly cases?: readonly ProbeCase[];
  /** Requests started per second at most. */
  readonly requestsPerSecond: number;
  /** The longest Retry-After the probe waits for before its one retry; longer, the case is judged on the 429/503. */
  readonly retryWaitMaxMs?: number;
  /** Ask DNS for the key record at the keyid, to explain a 401 (not under `--no-dns`). */
  readonly lookupKey?: boolean;
  /** Called with each trace event as it is recorded (progress lines). */
  readonly onEvent?: (event: Trace["events"][number]) => void;
}

/** A TLS handshake the probe made, as the TLS port reports it. */
export interface TlsHandshake {
  /** `established`: the handshake completed; `refused`: the server broke it off (a version it will not speak); `failed`: no connection. */
  readonly outcome: "established" | "refused" | "failed";
  /** `TLSv1.3` … when established. */
  readonly protocol?: string;
  readonly cipher?: string;
  /** Whether the certificate verified for the host name, with the trusted CAs. */
  readonly authorized?: boolean;
  readonly authorizationError?: string;
  /** The names the certificate holds. */
  readonly certificateNames?: readonly string[];
  readonly failure?: TransportFailureKind;
  readonly message?: string;
}

/** The ports of the probe. */
export interface ProbePorts {
  readonly clock: Pick<Clock, "now">;
  /** Waits this long (the rate, a Retry-After). */
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: Random;
  /** SVCB at `_svc.<domain>` (a domain target) and TXT at the keyid. */
  readonly resolver: Resolver;
  /** One exchange over TLS 1.3 on a connection of its own; rejects with a TransportError when no answer came. */
  readonly fetch: Fetch;
  /** A handshake with the origin offering only `version`, the certificate checked against its host name. */
  readonly tls: (origin: string, version: "TLSv1.3" | "TLSv1.2") => Promise<TlsHandshake>;
}

/** What a probe run leaves. */
export interface ProbeRun {
  readonly target: string;
  readonly origin?: string;
  readonly domain?: string;
  readonly plan: ProbePlan;
  readonly verdicts: readonly ProbeVerdict[];
  readonly summary: ProbeSummary;
  /** 0: no MUST case failed; 1: one did. */
  readonly exitCode: 0 | 1;
  readonly trace: Trace;
}

/** Counts of the results, by grade. */
export interface ProbeSummary {
  readonly pass: number;
  readonly fail: number;
  readonly skip: number;
  readonly byGrade: Readonly<Record<ProbeGrade, { pass: number; fail: number; skip: number }>>;
}

/**
 * Runs the probe: discovery (a domain target), the plan, then the cases of
 * `options.cases` step by step, each judged as soon as its exchanges are
 * done. Never throws for anything the receiver does; a transport failure is
 * an answer like any other.
 */
export async function runProbe(options: ProbeOptions, ports: ProbePorts): Promise<ProbeRun> {
  const ctx = createProbeContext(options, ports);
  announce(ctx);
  const resolver = tracedResolver(ctx);
  const origin = await originOf(ctx, resolver);
  if (origin === undefined) return finish(ctx, undefined);
  const host = new URL(origin).hostname;
  const keyInDns = await keyInDnsOf(ctx, resolver);
  if (!(await tlsCases(ctx, origin, host))) return finish(ctx, origin);
  try {
    await steps(ctx, origin, keyInDns);
  } catch (error) {
    if (!(error instanceof Silent)) throw error;
    skipRest(ctx, error.message);
  }
  answerCases(ctx);
  return finish(ctx, origin);
}

/** `probe.started` with the plan, before any request; the cases that cannot run for want of an option said at once. */
function announce(ctx: ProbeContext): void {
  const { options, identity, target, domain, absent } = ctx;
  emit(ctx, "probe.started", {
    target,
    ...(ctx.isOrigin && { origin: target.replace(/\/+$/, "") }),
    ...(domain !== undefined && { domain }),
    ...(identity !== undefined && { from: identity.from, keyid: identity.keyid, keyRecord: identity.keyRecord }),
    mailboxes: options.mailboxes,
    ...(absent !== undefined && { absent }),
    plan: ctx.plan,
  });
  for (const c of ctx.cases) {
    const need = missingNeed(options, c);
    if (need !== undefined) skip(ctx, [c.id], NEED_WHY[need]);
  }
}

/** Everything after the handshakes, in the catalogue's order of steps; a receiver gone silent ends it ({@link Silent}). */
async function steps(ctx: ProbeContext, origin: string, keyInDns: string | undefined): Promise<void> {
  const capabilities = ctx.capabilitiesRun ? await capabilitiesCases(ctx, origin) : NO_CAPABILITIES;
  await versionCases(ctx, origin, capabilities.versions);
  if (!ctx.anyPost || ctx.identity === undefined) return;
  if (!ctx.deliverRuns) {
    skip(
      ctx,
      idsOfSteps(ctx, POST_STEPS),
      "needs --mailbox: the valid delivery runs first, to show that the receiver trusts the probe's key",
    );
    return;
  }
  const delivering = deliveringOf(ctx, origin, ctx.identity);
  if (!(await deliveryCases(delivering, keyInDns))) return;
  await badRequestCases(delivering, capabilities.maxRecipients);
  await signatureCases(delivering);
  await sizeCase(delivering, capabilities.maxMessageSize);
}
