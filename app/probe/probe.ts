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
 */
import type { Clock, DnsAnswer, Fetch, Random, Resolver, SvcbRecord, TransportFailureKind } from "../ports.ts";
import { TransportError, traceEvent } from "../ports.ts";
import type { EmitData, TraceEventName } from "../trace/events.ts";
import { asBufferSource, bytesToBase64, bytesToHex } from "../protocol/base64.ts";
import { createContentDigest, createDigester } from "../protocol/digest.ts";
import { PROBLEM_IDENTIFIERS, parseRetryAfter } from "../protocol/errors.ts";
import { errorMessage } from "../errorMessage.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import {
  buildMultipartBody,
  chooseBoundary,
  indexOfBytes,
  MESSAGE_PART_TYPE,
  multipartBytes,
} from "../protocol/multipart.ts";
import { PROFILE_COMPONENTS, PROFILE_LABEL, generateSigningKey, signingDomainOfKeyid } from "../protocol/profile.ts";
import { MIN_MAX_MESSAGE_SIZE, DEFAULT_MAX_RECIPIENTS } from "../protocol/resources.ts";
import { signRequest } from "../protocol/signature.ts";
import { VERSION_PATTERN } from "../protocol/versions.ts";
import { lookupSvcb } from "../sender/discovery.ts";
import { bodyFields, headersObject, sha256FieldInline } from "../trace/httpFields.ts";
import { createRecorder, type Recorder } from "../trace/recorder.ts";
import type { Trace } from "../trace/schema.ts";
import { probeCases, type ProbeCase, type ProbeGrade, type ProbeNeed, type ProbeStep } from "./cases.ts";

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

/** Answer bodies are kept up to this size; the rest is read and dropped. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Request bodies up to this size go into the trace whole. */
const MAX_RECORDED_BODY = 1024 * 1024;
/** Default longest Retry-After waited for. */
export const DEFAULT_RETRY_WAIT_MAX_MS = 30_000;
/** How far `created` is moved for the stale and future signatures: far past any tolerance a receiver could choose (G3). */
const SKEW_S = 3600;
/** Requests in a row without an answer after which the probe stops: a receiver that hangs costs at most this many timeouts. */
export const MAX_SILENT = 3;
/** Where a recipient nobody can have lives (RFC 2606). */
const NOWHERE = "probe.invalid";

/** Thrown to end the run when the receiver has stopped answering. */
class Silent extends Error {}

interface ProblemSeen {
  readonly type: string;
  /** The last segment of the type. */
  readonly identifier: string;
  readonly detail?: string;
  readonly hasVersions: boolean;
  readonly versions?: unknown;
}

type Answer =
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

interface Sent {
  readonly answer: Answer;
  readonly exchanges: readonly string[];
  readonly evidence: readonly number[];
}

interface Judged {
  readonly result: ProbeResult;
  readonly actual: string;
  readonly why?: string;
}

/** A request ready to go, with what the trace says of its body. */
interface Built {
  readonly request: Request;
  readonly bodySize: number;
  /** The bytes, when they are in hand (all but the oversized body). */
  readonly body?: Uint8Array;
  readonly bodyDigest?: string;
  /** For a streamed body: bytes handed to the connection so far, and a stop once answered. */
  readonly streamed?: { sent(): number; stop(): void };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });

/** The major versions a path may not use for `unsupported-version`: the first vN not served. */
function unservedVersion(served: readonly string[]): string {
  for (let n = 2; ; n++) if (!served.includes(`v${n}`)) return `v${n}`;
}

function mediaTypeOf(headers: Headers): string {
  return (headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function problemOf(json: unknown): ProblemSeen | undefined {
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

function clip(text: string, max = 160): string {
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

/**
 * Runs the probe: discovery (a domain target), the plan, then the cases of
 * `options.cases` step by step, each judged as soon as its exchanges are
 * done. Never throws for anything the receiver does; a transport failure is
 * an answer like any other.
 */
export async function runProbe(options: ProbeOptions, ports: ProbePorts): Promise<ProbeRun> {
  const cases = options.cases ?? probeCases;
  const selected = new Set(cases.map((c) => c.id));
  const recorder: Recorder = createRecorder({ recordBodies: true });
  const identity = options.identity;
  const signing = identity === undefined ? undefined : signingDomainOfKeyid(identity.keyid);
  const fromDomain = signing?.ok === true ? signing.value : identity?.from.replace(/^.*@/, "");
  const traceDomain = fromDomain ?? "probe";
  const startedAtMs = ports.clock.now();
  const retryWaitMaxMs = options.retryWaitMaxMs ?? DEFAULT_RETRY_WAIT_MAX_MS;
  const intervalMs = 1000 / Math.max(0.001, options.requestsPerSecond);
  const verdicts = new Map<string, ProbeVerdict>();
  const responses: { exchangeId: string; evidence: number[]; answer: Answer & { kind: "response" } }[] = [];
  let exchangeCount = 0;
  let lastRequestAtMs = Number.NEGATIVE_INFINITY;

  function emit<N extends TraceEventName>(name: N, data: EmitData<N>): number {
    recorder.emit(traceEvent(name, ports.clock.now(), data, traceDomain));
    const event = recorder.events[recorder.events.length - 1];
    if (event !== undefined) options.onEvent?.(event);
    return recorder.events.length - 1;
  }

  const target = options.target.trim();
  const isOrigin = /^[a-z][a-z0-9+.-]*:\/\//i.test(target);
  const mailboxDomain = options.mailboxes[0]?.replace(/^.*@/, "").toLowerCase();
  const domain = isOrigin ? mailboxDomain : target.toLowerCase().replace(/\.$/, "");
  const absent = options.absent;
  const absentOne = absent?.replace("{n}", "");
  const absentPattern = absent !== undefined && absent.includes("{n}");

  // ── What can run, and the plan ──────────────────────────────────────
  const given = (need: ProbeNeed): boolean => {
    switch (need) {
      case "key":
        return identity !== undefined;
      case "mailbox":
        return options.mailboxes.length > 0;
      case "absent":
        return absent !== undefined;
      case "absent-pattern":
        return absentPattern;
    }
  };
  const missing = (c: ProbeCase): ProbeNeed | undefined => c.needs.find((n) => !given(n));
  const runnable = cases.filter((c) => missing(c) === undefined);
  const runs = (id: string): boolean => runnable.some((c) => c.id === id);
  const stepRuns = (step: ProbeStep): boolean => runnable.some((c) => c.step === step);
  const postSteps: readonly ProbeStep[] = ["delivery", "bad-requests", "signatures", "size"];
  const anyPost = postSteps.some(stepRuns);
  // The valid delivery runs first whenever a POST case runs: it shows that the receiver trusts the probe's key.
  const deliverRuns = anyPost && given("key") && given("mailbox");
  const capabilitiesRun = runnable.some((c) => c.step !== "tls" && c.step !== "answers");
  const planRequests =
    (capabilitiesRun ? 1 : 0) +
    (runs("unsupported-version") || runs("unsupported-version-versions") ? 1 : 0) +
    (runs("unsupported-version-post") ? 1 : 0) +
    (deliverRuns ? 1 : 0) +
    (runs("replay") ? 1 : 0) +
    (runs("idempotency-conflict") ? 1 : 0) +
    (runs("all-rejected") ? 1 : 0) +
    (runs("unknown-envelope-fields") ? 1 : 0) +
    runnable.filter((c) => c.step === "bad-requests" || c.step === "signatures" || c.step === "size").length;
  const messages = (deliverRuns ? 1 : 0) + (runs("unknown-envelope-fields") ? 1 : 0);
  const plan: ProbePlan = {
    cases: cases.length,
    requests: planRequests,
    handshakes: 1 + (runs("tls12-refused") ? 1 : 0),
    messages,
    messagesAtMost:
      messages +
      runnable
        .filter((c) => c.step === "bad-requests" || c.step === "signatures" || c.step === "size")
        .reduce((n, c) => n + c.mayDeliver, 0) +
      (runs("idempotency-conflict") ? 1 : 0),
    mailboxes: options.mailboxes,
    requestsPerSecond: options.requestsPerSecond,
  };

  // ── Verdicts ────────────────────────────────────────────────────────
  function record(id: string, judged: Judged, sent: readonly (Sent | undefined)[] = [], extra: number[] = []): void {
    if (!selected.has(id) || verdicts.has(id)) return;
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
    verdicts.set(id, verdict);
    emit("probe.case", { ...verdict });
  }
  function skip(ids: readonly string[], why: string): void {
    for (const id of ids) record(id, { result: "SKIP", actual: "not run", why });
  }
  const idsOf = (filter: (c: ProbeCase) => boolean): string[] => cases.filter(filter).map((c) => c.id);

  emit("probe.started", {
    target,
    ...(isOrigin && { origin: target.replace(/\/+$/, "") }),
    ...(domain !== undefined && { domain }),
    ...(identity !== undefined && { from: identity.from, keyid: identity.keyid, keyRecord: identity.keyRecord }),
    mailboxes: options.mailboxes,
    ...(absent !== undefined && { absent }),
    plan,
  });
  // Cases that cannot run for want of an option: said at once.
  for (const c of cases) {
    const need = missing(c);
    if (need !== undefined) skip([c.id], NEED_WHY[need]);
  }

  // ── DNS (traced) ────────────────────────────────────────────────────
  const traced: Resolver = {
    async svcb(name) {
      emit("dns.query", { name, type: "SVCB" });
      const answer = await ports.resolver.svcb(name).catch((): DnsAnswer<SvcbRecord> => ({ kind: "servfail" }));
      emit("dns.answer", { name, type: "SVCB", ...answerData(answer) });
      return answer;
    },
    async txt(name) {
      emit("dns.query", { name, type: "TXT" });
      const answer = await ports.resolver.txt(name).catch((): DnsAnswer<string> => ({ kind: "servfail" }));
      emit("dns.answer", { name, type: "TXT", ...answerData(answer) });
      return answer;
    },
  };

  const finish = (origin: string | undefined): ProbeRun => {
    // Cases nothing judged (a step cut short) say so.
    skip(
      cases.map((c) => c.id),
      "not reached",
    );
    const ordered = cases.flatMap((c) => {
      const v = verdicts.get(c.id);
      return v === undefined ? [] : [v];
    });
    const summary = summarize(ordered);
    return {
      target,
      ...(origin !== undefined && { origin }),
      ...(domain !== undefined && { domain }),
      plan,
      verdicts: ordered,
      summary,
      exitCode: summary.byGrade.MUST.fail > 0 ? 1 : 0,
      trace: recorder.toTrace({
        mailscope: options.mailscope,
        scenario: { name: `probe ${target}` },
        seed: 0,
        readings: {},
        startedAtMs,
      }),
    };
  };

  // ── Discovery ───────────────────────────────────────────────────────
  let origin: string;
  if (isOrigin) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      skip(
        cases.map((c) => c.id),
        `${target} is not a URL`,
      );
      return finish(undefined);
    }
    origin = url.origin;
  } else {
    const found = await lookupSvcb(traced, target);
    if (found.kind !== "endpoints") {
      const first = cases[0];
      if (first !== undefined)
        record(first.id, {
          result: "FAIL",
          actual: `no endpoint: SVCB at _svc.${target} ${found.kind === "no-record" ? "has no usable record" : "failed"} (${found.answer})`,
          why: "discovery found no receiver to probe (SVC-5); give its origin instead, or --resolve",
        });
      skip(
        cases.map((c) => c.id),
        `no endpoint for ${target}: SVCB ${found.answer}`,
      );
      return finish(undefined);
    }
    origin = found.endpoints[0]?.origin ?? `https://${target}`;
  }
  const host = new URL(origin).hostname;

  // Whether the key is published (G4): only to explain a 401 later.
  let keyInDns: string | undefined;
  if (identity !== undefined && options.lookupKey === true && anyPost) {
    const answer = await traced.txt(identity.keyid);
    keyInDns =
      answer.kind !== "answer" || answer.records.length === 0
        ? `DNS has no TXT record at ${identity.keyid} (${answer.kind === "answer" ? "no records" : answer.kind})`
        : answer.records.some((r) => r.replace(/\s+/g, "") === identity.keyRecord.replace(/\s+/g, ""))
          ? `the key is published at ${identity.keyid}`
          : `the TXT record at ${identity.keyid} publishes another key`;
  }

  // ── TLS ─────────────────────────────────────────────────────────────
  const t13 = await ports.tls(origin, "TLSv1.3");
  const t13seq = emit("probe.tls", { origin, version: "TLSv1.3", ...t13 });
  if (t13.outcome === "failed") {
    record(
      "tls13",
      { result: "FAIL", actual: `no connection: ${t13.message ?? t13.failure ?? "failed"}` },
      [],
      [t13seq],
    );
    skip(
      cases.map((c) => c.id),
      `${origin} cannot be reached: ${t13.message ?? "no connection"}`,
    );
    return finish(origin);
  }
  if (t13.outcome === "refused" || t13.protocol !== "TLSv1.3") {
    record(
      "tls13",
      {
        result: "FAIL",
        actual:
          t13.outcome === "refused" ? `handshake refused: ${t13.message ?? ""}` : `negotiated ${t13.protocol ?? "?"}`,
      },
      [],
      [t13seq],
    );
    skip(
      cases.map((c) => c.id),
      "no TLS 1.3 connection (AUTH-8): nothing else can be asked",
    );
    return finish(origin);
  }
  record(
    "tls13",
    { result: "PASS", actual: `${t13.protocol}${t13.cipher !== undefined ? ` (${t13.cipher})` : ""}` },
    [],
    [t13seq],
  );
  const names = t13.certificateNames?.length ? ` (names: ${t13.certificateNames.join(", ")})` : "";
  if (t13.authorized !== true) {
    record(
      "certificate",
      {
        result: "FAIL",
        actual: `not valid for ${host}: ${t13.authorizationError ?? "unverified"}${names}`,
        why: "the probe sends nothing to a host it cannot authenticate; give --ca with the CA (or self-signed certificate) that issued it",
      },
      [],
      [t13seq],
    );
    skip(
      cases.filter((c) => c.step !== "tls").map((c) => c.id),
      `the certificate does not verify for ${host}: ${t13.authorizationError ?? "unverified"} (--ca)`,
    );
  } else {
    record("certificate", { result: "PASS", actual: `verified for ${host}${names}` }, [], [t13seq]);
  }
  if (runs("tls12-refused")) {
    const t12 = await ports.tls(origin, "TLSv1.2");
    const seq = emit("probe.tls", { origin, version: "TLSv1.2", ...t12 });
    record(
      "tls12-refused",
      t12.outcome === "refused"
        ? { result: "PASS", actual: `refused: ${clip(t12.message ?? "handshake failed", 120)}` }
        : t12.outcome === "established"
          ? {
              result: "FAIL",
              actual: `accepted: ${t12.protocol ?? "TLSv1.2"}${t12.cipher !== undefined ? ` (${t12.cipher})` : ""}`,
            }
          : { result: "SKIP", actual: `no connection: ${t12.message ?? ""}`, why: "the second connection failed" },
      [],
      [seq],
    );
  }
  if (t13.authorized !== true) return finish(origin);

  // ── Sending ─────────────────────────────────────────────────────────
  let silent = 0;
  async function exchangeOnce(
    caseIds: readonly string[],
    built: Built,
  ): Promise<{ answer: Answer; id: string; seqs: number[] }> {
    if (silent >= MAX_SILENT)
      throw new Silent(
        `not sent: the receiver stopped answering (${MAX_SILENT} requests in a row got no answer), so the probe stopped`,
      );
    const wait = lastRequestAtMs + intervalMs - ports.clock.now();
    if (wait > 0) await ports.sleep(wait);
    lastRequestAtMs = ports.clock.now();
    const id = `x${++exchangeCount}`;
    const req = built.request;
    const seqs = [
      emit("http.request", {
        exchangeId: id,
        method: req.method,
        url: req.url,
        headers: headersObject(req.headers),
        bodySize: built.bodySize,
        ...(built.bodyDigest !== undefined
          ? { bodyDigest: built.bodyDigest }
          : built.body !== undefined
            ? { bodyDigest: sha256FieldInline(built.body) }
            : {}),
        ...(built.body !== undefined && built.body.length <= MAX_RECORDED_BODY ? bodyFields(built.body) : {}),
        probeCases: caseIds,
      }),
    ];
    let answer: Answer;
    try {
      const response = await ports.fetch(req);
      const body = await readCapped(response);
      const text = decoder.decode(body);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const problem = problemOf(json);
      answer = {
        kind: "response",
        status: response.status,
        headers: response.headers,
        body,
        mediaType: mediaTypeOf(response.headers),
        json,
        ...(problem !== undefined && { problem }),
        ...(built.streamed !== undefined && { sentBytes: built.streamed.sent() }),
      };
      seqs.push(
        emit("http.response", {
          exchangeId: id,
          status: response.status,
          ...(response.statusText !== "" && { statusText: response.statusText }),
          headers: headersObject(response.headers),
          bodySize: body.length,
          bodyDigest: sha256FieldInline(body),
          ...bodyFields(body),
          ...(built.streamed !== undefined && { requestBodySentBytes: built.streamed.sent() }),
          probeCases: caseIds,
        }),
      );
      responses.push({ exchangeId: id, evidence: seqs, answer });
      silent = 0;
    } catch (error) {
      const kind = error instanceof TransportError ? error.kind : "error";
      const message = errorMessage(error);
      answer = { kind: "failure", failure: kind, message };
      silent += 1;
      seqs.push(emit("http.failure", { exchangeId: id, kind, message, probeCases: caseIds }));
    } finally {
      // A body cut short (answered before it was all sent) goes no further; its connection is not used again.
      built.streamed?.stop();
    }
    return { answer, id, seqs };
  }

  /**
   * Sends what `build` makes; an idempotent request answered 429 or 503 is
   * built again (re-signed, POST-24) and sent once more after its
   * Retry-After, when that is at most `retryWaitMaxMs`.
   */
  async function send(caseIds: readonly string[], build: () => Promise<Built>, idempotent: boolean): Promise<Sent> {
    const first = await exchangeOnce(caseIds, await build());
    const a = first.answer;
    if (!idempotent || a.kind !== "response" || (a.status !== 429 && a.status !== 503))
      return { answer: a, exchanges: [first.id], evidence: first.seqs };
    const waitS = parseRetryAfter(a.headers.get("retry-after"), ports.clock.now()) ?? 1;
    if (waitS * 1000 > retryWaitMaxMs) return { answer: a, exchanges: [first.id], evidence: first.seqs };
    await ports.sleep(Math.max(waitS * 1000, 0));
    const second = await exchangeOnce(caseIds, await build());
    return { answer: second.answer, exchanges: [first.id, second.id], evidence: [...first.seqs, ...second.seqs] };
  }

  /** Everything after the handshakes; a receiver gone silent ends it (see {@link Silent}). */
  async function steps(): Promise<ProbeRun> {
    // ── Capabilities ────────────────────────────────────────────────────
    let versions: readonly string[] = ["v1"];
    let maxMessageSize: number | undefined;
    let maxRecipients = DEFAULT_MAX_RECIPIENTS;
    if (capabilitiesRun) {
      const caps = await send(
        idsOf((c) => c.step === "capabilities"),
        () => Promise.resolve(plainRequest("GET", `${origin}/v1/capabilities`)),
        true,
      );
      const a = caps.answer;
      const doc =
        a.kind === "response" &&
        a.status === 200 &&
        typeof a.json === "object" &&
        a.json !== null &&
        !Array.isArray(a.json)
          ? (a.json as Record<string, unknown>)
          : undefined;
      const on = (id: string, judged: Judged): void => record(id, judged, [caps]);
      const noDoc = (): Judged => ({
        result: "FAIL",
        actual: answerText(a),
        why: "no capabilities document to read (GET /v1/capabilities)",
      });
      on(
        "capabilities-200",
        a.kind === "response" && a.status === 200 && a.mediaType === "application/json" && doc !== undefined
          ? { result: "PASS", actual: `200 application/json (${Object.keys(doc).join(", ")})` }
          : {
              result: "FAIL",
              actual:
                a.kind === "response"
                  ? `${a.status} ${a.mediaType || "(no Content-Type)"}${doc === undefined ? ", not a JSON object" : ""}`
                  : answerText(a),
            },
      );
      const cacheControl = a.kind === "response" && a.status === 200 ? a.headers.get("cache-control") : null;
      on(
        "capabilities-cache-control",
        a.kind !== "response" || a.status !== 200
          ? noDoc()
          : cacheControl !== null
            ? { result: "PASS", actual: `Cache-Control: ${cacheControl}` }
            : { result: "FAIL", actual: "no Cache-Control header" },
      );
      on(
        "capabilities-max-age",
        a.kind !== "response" || a.status !== 200
          ? noDoc()
          : cacheControl !== null && /(^|,)\s*max-age\s*=\s*"?3600"?\s*(,|$)/i.test(cacheControl)
            ? { result: "PASS", actual: `Cache-Control: ${cacheControl}` }
            : {
                result: "FAIL",
                actual: cacheControl === null ? "no Cache-Control header" : `Cache-Control: ${cacheControl}`,
              },
      );
      if (doc === undefined) {
        const read = new Set(["capabilities-200", "capabilities-cache-control", "capabilities-max-age"]);
        for (const id of idsOf((c) => c.step === "capabilities" && !read.has(c.id))) on(id, noDoc());
      } else {
        const size = doc["max_message_size"];
        on(
          "capabilities-max-message-size",
          Number.isInteger(size)
            ? { result: "PASS", actual: `max_message_size: ${String(size)}` }
            : {
                result: "FAIL",
                actual: size === undefined ? "no max_message_size" : `max_message_size: ${JSON.stringify(size)}`,
              },
        );
        on(
          "capabilities-max-message-size-bound",
          typeof size !== "number"
            ? {
                result: "SKIP",
                actual: `max_message_size: ${JSON.stringify(size) ?? "absent"}`,
                why: "no number to compare (capabilities-max-message-size)",
              }
            : size >= MIN_MAX_MESSAGE_SIZE
              ? { result: "PASS", actual: `max_message_size: ${size}` }
              : { result: "FAIL", actual: `max_message_size: ${size}, below ${MIN_MAX_MESSAGE_SIZE}` },
        );
        if (Number.isInteger(size) && typeof size === "number" && size > 0) maxMessageSize = size;
        const recipients = doc["max_recipients"];
        on(
          "capabilities-max-recipients",
          recipients === undefined
            ? { result: "PASS", actual: "absent (100)" }
            : Number.isInteger(recipients) && (recipients as number) >= 100
              ? { result: "PASS", actual: `max_recipients: ${String(recipients)}` }
              : { result: "FAIL", actual: `max_recipients: ${JSON.stringify(recipients)}` },
        );
        if (Number.isInteger(recipients) && (recipients as number) >= 1) maxRecipients = recipients as number;
        const v = doc["versions"];
        const list = Array.isArray(v) ? v : undefined;
        const versionsOk =
          v === undefined ||
          (list !== undefined &&
            list.length > 0 &&
            list.every((x) => typeof x === "string" && VERSION_PATTERN.test(x)) &&
            new Set(list).size === list.length &&
            list.includes("v1"));
        on(
          "capabilities-versions",
          versionsOk
            ? { result: "PASS", actual: v === undefined ? 'absent (["v1"])' : `versions: ${JSON.stringify(v)}` }
            : { result: "FAIL", actual: `versions: ${JSON.stringify(v)}` },
        );
        if (list !== undefined && list.every((x): x is string => typeof x === "string")) versions = list;
        const pin = doc["discovery_pin_max_age"];
        on(
          "capabilities-pin-max-age",
          pin === undefined || (Number.isInteger(pin) && (pin as number) >= 0)
            ? { result: "PASS", actual: pin === undefined ? "absent" : `discovery_pin_max_age: ${String(pin)}` }
            : { result: "FAIL", actual: `discovery_pin_max_age: ${JSON.stringify(pin)}` },
        );
        on(
          "capabilities-pin-advertised",
          pin === 604800
            ? { result: "PASS", actual: "discovery_pin_max_age: 604800" }
            : {
                result: "FAIL",
                actual: pin === undefined ? "not advertised" : `discovery_pin_max_age: ${JSON.stringify(pin)}`,
              },
        );
        const abuse = doc["abuse_contact"];
        on(
          "capabilities-abuse-contact",
          abuse === undefined
            ? { result: "PASS", actual: "not advertised (optional)" }
            : typeof abuse === "string" && /^mailto:[^?]+$/.test(abuse)
              ? { result: "PASS", actual: `abuse_contact: ${abuse}` }
              : { result: "FAIL", actual: `abuse_contact: ${JSON.stringify(abuse)}` },
        );
      }
    }

    // ── Versions ────────────────────────────────────────────────────────
    const unserved = unservedVersion(versions);
    if (runs("unsupported-version") || runs("unsupported-version-versions")) {
      const sent = await send(
        ["unsupported-version", "unsupported-version-versions"],
        () => Promise.resolve(plainRequest("GET", `${origin}/${unserved}/capabilities`)),
        true,
      );
      record("unsupported-version", expectProblem(sent.answer, 404, "unsupported_version"), [sent]);
      const a = sent.answer;
      const listed = a.kind === "response" ? a.problem?.versions : undefined;
      record(
        "unsupported-version-versions",
        a.kind !== "response" || a.problem?.identifier !== "unsupported_version"
          ? {
              result: "SKIP",
              actual: answerText(a),
              why: "no unsupported_version problem to read (unsupported-version)",
            }
          : !Array.isArray(listed)
            ? {
                result: "FAIL",
                actual: a.problem.hasVersions ? `versions: ${JSON.stringify(listed)}` : "no versions member",
              }
            : sameSet(listed, versions)
              ? { result: "PASS", actual: `versions: ${JSON.stringify(listed)}` }
              : {
                  result: "FAIL",
                  actual: `versions: ${JSON.stringify(listed)}`,
                  why: `the capabilities list ${JSON.stringify(versions)}`,
                },
        [sent],
      );
    }
    if (runs("unsupported-version-post")) {
      const sent = await send(
        ["unsupported-version-post"],
        () => Promise.resolve(plainRequest("POST", `${origin}/${unserved}/messages`)),
        false,
      );
      record("unsupported-version-post", expectProblem(sent.answer, 404, "unsupported_version"), [sent]);
    }

    // ── POSTs ───────────────────────────────────────────────────────────
    const postIds = idsOf((c) => postSteps.includes(c.step));
    if (!anyPost || identity === undefined) return crossCuts();
    if (!deliverRuns) {
      skip(postIds, "needs --mailbox: the valid delivery runs first, to show that the receiver trusts the probe's key");
      return crossCuts();
    }
    const signer: ProbeIdentity = identity;
    const from = signer.from;
    const url = `${origin}/v1/messages`;
    const mailbox0 = options.mailboxes[0] ?? "";

    /** A short text message for `to`, naming the case, from the probe. */
    function message(caseId: string, to: readonly string[], note = ""): Uint8Array {
      const id = `probe.${bytesToHex(ports.random.bytes(8))}@${fromDomain ?? "probe"}`;
      return encoder.encode(
        [
          `From: ${from}`,
          `To: ${to.join(", ")}`,
          `Subject: mailscope probe: ${caseId}`,
          `Date: ${new Date(ports.clock.now()).toUTCString()}`,
          `Message-ID: <${id}>`,
          "MIME-Version: 1.0",
          "Content-Type: text/plain; charset=utf-8",
          "",
          `This message was sent by mailscope probe while testing the receiver at ${origin}`,
          `(case ${caseId}${note}). It may be deleted.`,
          "",
        ].join("\r\n"),
      );
    }

    interface DeliverySpec {
      readonly caseId: string;
      readonly to?: readonly string[];
      /** The envelope: an object (JSON) or the JSON text itself; default `{ from, to }`. */
      readonly envelope?: unknown;
      /** Another shape of body: the parts, given the envelope's and the message's bytes. */
      readonly parts?: (envelope: Uint8Array, message: Uint8Array) => { contentType: string; bytes: Uint8Array }[];
      readonly contentType?: string;
      /** The Idempotency-Key; null: none. Default a fresh one. */
      readonly key?: string | null;
      readonly digest?: boolean;
      /** The signature: null for none; else the components (default the profile's), `created` (null: left out), the key. */
      readonly signature?: null | {
        readonly components?: readonly string[];
        readonly createdS?: number | null;
        readonly privateKey?: CryptoKey;
      };
      /** Changes the body after it was signed. */
      readonly afterSigning?: (body: Uint8Array) => Uint8Array;
      readonly message?: Uint8Array;
    }

    const freshKey = (caseId: string): string => `probe-${caseId}-${bytesToHex(ports.random.bytes(8))}`;

    /** The body of a delivery, made once: a retry or a replay sends the same bytes (POST-12, POST-24). */
    function bodyOf(spec: DeliverySpec): { body: Uint8Array; contentType: string } {
      const to = spec.to ?? [mailbox0];
      const msg = spec.message ?? message(spec.caseId, to);
      const envelope = spec.envelope ?? { from, to };
      const boundary = chooseBoundary(ports.random.bytes(24), msg);
      if (spec.parts === undefined) return buildMultipartBody(envelope, msg, boundary);
      const envelopeBytes = encoder.encode(typeof envelope === "string" ? envelope : JSON.stringify(envelope));
      return multipartBytes(spec.parts(envelopeBytes, msg), boundary);
    }

    /** The delivery of `spec` with `shape`'s body, signed now (a retry is signed afresh, POST-24). */
    async function delivery(
      spec: DeliverySpec,
      key: string | null,
      shape: { body: Uint8Array; contentType: string },
    ): Promise<Built> {
      const { body, contentType } = shape;
      const headers = new Headers({ "content-type": spec.contentType ?? contentType });
      if (spec.digest !== false) headers.set("content-digest", await createContentDigest(body));
      if (key !== null) headers.set("idempotency-key", key);
      const sig = spec.signature === undefined ? {} : spec.signature;
      let signedHeaders = headers;
      if (sig !== null) {
        const signed = await signRequest(
          { method: "POST", url, headers: [...headers] },
          {
            key: sig.privateKey ?? signer.privateKey,
            keyid: signer.keyid,
            label: PROFILE_LABEL,
            components: sig.components ?? PROFILE_COMPONENTS,
            created: sig.createdS === null ? undefined : (sig.createdS ?? Math.floor(ports.clock.now() / 1000)),
          },
        );
        signedHeaders = signed.headers;
      }
      const sentBody = spec.afterSigning?.(body) ?? body;
      return {
        request: new Request(url, {
          method: "POST",
          headers: signedHeaders,
          body: asBufferSource(sentBody),
          redirect: "manual",
        }),
        body: sentBody,
        bodySize: sentBody.length,
      };
    }

    /** Sends a delivery; a fresh key per case unless `spec.key` says, built again for a retry (re-signed). */
    function post(spec: DeliverySpec, caseIds: readonly string[] = [spec.caseId], shape = bodyOf(spec)): Promise<Sent> {
      const key = spec.key === undefined ? freshKey(spec.caseId) : spec.key;
      const idempotent = key !== null && /^[A-Za-z0-9._~-]{1,128}$/.test(key);
      return send(caseIds, () => delivery(spec, key, shape), idempotent);
    }

    // The valid delivery: every --mailbox, then --absent, so that order and a rejection show.
    const deliverTo = [...options.mailboxes, ...(absentOne !== undefined ? [absentOne] : [])];
    const deliverKey = freshKey("deliver");
    const deliverMessage = message("deliver", deliverTo);
    const deliverSpec: DeliverySpec = { caseId: "deliver", to: deliverTo, key: deliverKey, message: deliverMessage };
    const deliveryIds = ["deliver", "results-count", "results-order", "result-fields", "recipient-not-found"];
    const deliverShape = bodyOf(deliverSpec);
    const delivered = await post(deliverSpec, deliveryIds, deliverShape);
    const d = delivered.answer;
    const results =
      d.kind === "response" && d.status === 200 && typeof d.json === "object" && d.json !== null
        ? (d.json as Record<string, unknown>)["results"]
        : undefined;
    const keyRefused = d.kind === "response" && d.status === 401;
    if (keyRefused) {
      const skew = clockSkewS(d.headers.get("date"), ports.clock.now());
      const hints = [
        keyInDns,
        `publish ${identity.keyid}. IN TXT "${identity.keyRecord}" or add it to the receiver's keyRecords (mailscope keygen prints both)`,
        skew !== undefined && Math.abs(skew) > 60
          ? `the receiver's clock (its Date header) is ${skew} s ${skew > 0 ? "ahead of" : "behind"} the probe's, so a tolerance on created (G3) may refuse the signature`
          : undefined,
      ].filter((x): x is string => x !== undefined);
      record(
        "deliver",
        {
          result: "FAIL",
          actual: answerText(d),
          why: `a correctly signed delivery was refused: the receiver does not trust keyid ${identity.keyid}, or verifies signatures wrongly. ${hints.join("; ")}`,
        },
        [delivered],
      );
      skip(
        postIds,
        `the receiver refuses the probe's correctly signed delivery (deliver: ${answerText(d)}), so past the signature nothing can be told, and a 401 would prove nothing: fix the key first`,
      );
      return crossCuts();
    }
    record(
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
      [delivered],
    );
    if (!Array.isArray(results)) {
      skip(
        ["results-count", "results-order", "result-fields", "recipient-not-found"],
        `no DeliveryResult to read (deliver: ${answerText(d)})`,
      );
    } else {
      const entries = results.map((r) => (typeof r === "object" && r !== null ? (r as Record<string, unknown>) : {}));
      const addresses = entries.map((e) => normalized(e["recipient"]));
      const wanted = deliverTo.map((t) => normalized(t));
      const counted = wanted.map((w) => addresses.filter((a) => a === w).length);
      const strangers = addresses.filter((a) => !wanted.includes(a));
      record(
        "results-count",
        counted.every((n) => n === 1) && strangers.length === 0
          ? { result: "PASS", actual: `${results.length} entries for ${wanted.length} recipients` }
          : {
              result: "FAIL",
              actual: `${results.length} entries for ${wanted.length} recipients${wanted
                .map((w, i) =>
                  counted[i] === 1 ? "" : `; ${w} ${counted[i] === 0 ? "missing" : `${counted[i]} times`}`,
                )
                .join("")}${strangers.length > 0 ? `; not in to: ${strangers.join(", ")}` : ""}`,
            },
        [delivered],
      );
      const order = addresses.map((a) => wanted.indexOf(a)).filter((i) => i >= 0);
      const inOrder = order.every((v, i) => i === 0 || v > (order[i - 1] ?? -1) || v === order[i - 1]);
      record(
        "results-order",
        wanted.length < 2
          ? { result: "SKIP", actual: "one recipient", why: "needs two recipients: give two --mailbox, or --absent" }
          : inOrder
            ? { result: "PASS", actual: `in the order of to: ${addresses.join(", ")}` }
            : { result: "FAIL", actual: `results: ${addresses.join(", ")}; to: ${wanted.join(", ")}` },
        [delivered],
      );
      const bad = entries.flatMap((e, i) =>
        entryProblems(e).map((p) => `entry ${i} (${String(e["recipient"])}): ${p}`),
      );
      record(
        "result-fields",
        bad.length === 0
          ? { result: "PASS", actual: resultsText(results) }
          : { result: "FAIL", actual: bad.slice(0, 3).join("; ") },
        [delivered],
      );
      if (absentOne !== undefined) {
        const entry = entries.find((e) => normalized(e["recipient"]) === normalized(absentOne));
        const problem = problemOf(entry?.["problem"]);
        record(
          "recipient-not-found",
          entry === undefined
            ? { result: "SKIP", actual: `no entry for ${absentOne}`, why: "results-count says why" }
            : entry["status"] === "rejected" && problem?.identifier === "recipient_not_found"
              ? { result: "PASS", actual: `${absentOne}: rejected (recipient_not_found)` }
              : {
                  result: "FAIL",
                  actual: `${absentOne}: ${String(entry["status"])}${problem !== undefined ? ` (${problem.identifier})` : ""}`,
                  why:
                    entry["status"] === "accepted" ? "--absent must name a recipient that does not exist" : undefined,
                },
          [delivered],
        );
      }
    }

    const answered200 = d.kind === "response" && d.status === 200;
    if (runs("replay")) {
      if (!answered200) skip(["replay"], `the delivery it repeats was not answered 200 (deliver: ${answerText(d)})`);
      else {
        const again = await post({ ...deliverSpec, key: deliverKey }, ["replay"], deliverShape);
        const r = again.answer;
        const same =
          r.kind === "response" &&
          r.status === d.status &&
          (r.headers.get("content-type") ?? "") === (d.headers.get("content-type") ?? "") &&
          sameBytes(r.body, d.body);
        record(
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
          [delivered, again],
        );
      }
    }
    if (runs("idempotency-conflict")) {
      if (!answered200)
        skip(
          ["idempotency-conflict"],
          `the delivery whose key it reuses was not answered 200 (deliver: ${answerText(d)})`,
        );
      else {
        const other = message(
          "idempotency-conflict",
          deliverTo,
          ", the same Idempotency-Key as deliver with another body",
        );
        // Not retried: the same key with another body is not idempotent.
        const sent = await send(
          ["idempotency-conflict"],
          () => {
            const spec = { ...deliverSpec, caseId: "idempotency-conflict", message: other };
            return delivery(spec, deliverKey, bodyOf(spec));
          },
          false,
        );
        record("idempotency-conflict", expectProblem(sent.answer, 409, "idempotency_conflict"), [delivered, sent]);
      }
    }
    if (runs("all-rejected") && absentOne !== undefined) {
      const sent = await post({ caseId: "all-rejected", to: [absentOne] });
      const a = sent.answer;
      const list =
        a.kind === "response" && a.status === 200
          ? (a.json as Record<string, unknown> | undefined)?.["results"]
          : undefined;
      record(
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
    if (runs("unknown-envelope-fields")) {
      const sent = await post({
        caseId: "unknown-envelope-fields",
        envelope: { from, to: [mailbox0], x_mailscope_probe: { note: "an unknown member: ignore it (ENV-9)" } },
      });
      const a = sent.answer;
      record(
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

    // ── Requests that must be refused ───────────────────────────────────
    const nowS = (): number => Math.floor(ports.clock.now() / 1000);
    const without = (name: string): string[] => PROFILE_COMPONENTS.filter((c) => c !== name);
    const badRequest = 400;
    const g10 = [
      {
        status: 401,
        identifier: "invalid_signature",
        note: "refused as 401 invalid_signature: the order of a receiver's checks is not in the spec (G10)",
      },
    ];
    const bad: readonly {
      readonly id: string;
      readonly spec: DeliverySpec;
      readonly status?: number;
      readonly identifier?: string;
      readonly alternatives?: readonly { status: number; identifier: string; note: string }[];
    }[] = [
      {
        id: "missing-idempotency-key",
        spec: { caseId: "missing-idempotency-key", key: null, signature: { components: without("idempotency-key") } },
        alternatives: g10,
      },
      { id: "idempotency-key-too-long", spec: { caseId: "idempotency-key-too-long", key: "k".repeat(129) } },
      { id: "idempotency-key-characters", spec: { caseId: "idempotency-key-characters", key: "probe key!" } },
      {
        id: "missing-content-digest",
        spec: { caseId: "missing-content-digest", digest: false, signature: { components: without("content-digest") } },
        alternatives: g10,
      },
      { id: "missing-signature", spec: { caseId: "missing-signature", signature: null }, alternatives: g10 },
      { id: "content-type", spec: { caseId: "content-type", contentType: "text/plain" } },
      {
        id: "part-order",
        spec: {
          caseId: "part-order",
          parts: (envelope, msg) => [
            { contentType: MESSAGE_PART_TYPE, bytes: msg },
            { contentType: "application/json", bytes: envelope },
          ],
        },
      },
      {
        id: "part-types",
        spec: {
          caseId: "part-types",
          parts: (envelope, msg) => [
            { contentType: "application/json", bytes: envelope },
            { contentType: "text/plain", bytes: msg },
          ],
        },
      },
      { id: "envelope-not-json", spec: { caseId: "envelope-not-json", envelope: `{"from": "${from}", "to": [` } },
      { id: "envelope-missing-to", spec: { caseId: "envelope-missing-to", envelope: { from } } },
      { id: "envelope-empty-to", spec: { caseId: "envelope-empty-to", envelope: { from, to: [] } } },
      { id: "envelope-duplicate-to", spec: { caseId: "envelope-duplicate-to", to: [mailbox0, mailbox0] } },
      { id: "envelope-two-domains", spec: { caseId: "envelope-two-domains", to: [mailbox0, `probe@${NOWHERE}`] } },
      {
        id: "envelope-from-domain",
        spec: { caseId: "envelope-from-domain", envelope: { from: `probe@${NOWHERE}`, to: [mailbox0] } },
        status: 401,
        identifier: "invalid_signature",
        alternatives: [
          { status: 403, identifier: "policy_rejected", note: "refused as 403 policy_rejected, a reading G19 allows" },
        ],
      },
      { id: "mailbox-syntax", spec: { caseId: "mailbox-syntax", to: [`probe-not-a-mailbox.${domain ?? NOWHERE}`] } },
      {
        id: "mailbox-local-part-length",
        spec: { caseId: "mailbox-local-part-length", to: [`${"p".repeat(65)}@${domain ?? NOWHERE}`] },
      },
      {
        id: "mailbox-minimal-quoting",
        spec: { caseId: "mailbox-minimal-quoting", to: [quoted(mailbox0)] },
      },
    ];
    for (const b of bad) {
      if (!runs(b.id)) continue;
      const sent = await post(b.spec);
      record(
        b.id,
        expectProblem(sent.answer, b.status ?? badRequest, b.identifier ?? "invalid_request", b.alternatives),
        [sent],
      );
    }
    if (runs("too-many-recipients") && absent !== undefined) {
      const to = Array.from({ length: maxRecipients + 1 }, (_, i) => absent.replace("{n}", String(i + 1)));
      const sent = await post({ caseId: "too-many-recipients", to });
      record("too-many-recipients", expectProblem(sent.answer, badRequest, "invalid_request"), [sent], []);
    }

    // ── Signatures ──────────────────────────────────────────────────────
    const attacks: readonly { id: string; spec: () => Promise<DeliverySpec> }[] = [
      {
        id: "signature-untrusted-key",
        spec: async () => ({
          caseId: "signature-untrusted-key",
          signature: { privateKey: (await generateSigningKey()).privateKey },
        }),
      },
      {
        id: "signature-stale",
        spec: () => Promise.resolve({ caseId: "signature-stale", signature: { createdS: nowS() - SKEW_S } }),
      },
      {
        id: "signature-future",
        spec: () => Promise.resolve({ caseId: "signature-future", signature: { createdS: nowS() + SKEW_S } }),
      },
      {
        id: "signature-no-created",
        spec: () => Promise.resolve({ caseId: "signature-no-created", signature: { createdS: null } }),
      },
      {
        id: "signature-component-missing",
        spec: () =>
          Promise.resolve({ caseId: "signature-component-missing", signature: { components: without("@target-uri") } }),
      },
      {
        id: "signature-digest-not-covered",
        spec: () =>
          Promise.resolve({
            caseId: "signature-digest-not-covered",
            signature: { components: without("content-digest") },
          }),
      },
      {
        id: "body-changed",
        spec: () =>
          Promise.resolve({
            caseId: "body-changed",
            afterSigning: (body: Uint8Array) => {
              // One letter of the message text changed: the digest no longer matches (POST-5).
              const copy = body.slice();
              const at = indexOfBytes(copy, encoder.encode("It may be deleted."), 0);
              if (at >= 0) copy[at] = 0x69; // "I" → "i"
              return copy;
            },
          }),
      },
    ];
    for (const attack of attacks) {
      if (!runs(attack.id)) continue;
      const sent = await post(await attack.spec());
      record(attack.id, expectProblem(sent.answer, 401, "invalid_signature"), [sent]);
    }

    // ── Size ────────────────────────────────────────────────────────────
    if (runs("too-large")) {
      if (maxMessageSize === undefined) skip(["too-large"], "no usable max_message_size in the capabilities document");
      else {
        // One byte over the limit; over the spec's floor at least, so that a document advertising less than the
        // floor (capabilities-max-message-size-bound's business) is not also blamed here.
        const total = Math.max(maxMessageSize, MIN_MAX_MESSAGE_SIZE) + 1;
        const sent = await send(["too-large"], () => oversized(total), false);
        const a = sent.answer;
        const judged = expectProblem(a, 413, "message_too_large");
        const stopped =
          a.kind === "response" && a.sentBytes !== undefined
            ? a.sentBytes < total
              ? `; answered after ${a.sentBytes} of ${total} bytes, the rest not sent`
              : `; answered after the whole body`
            : "";
        record("too-large", { ...judged, actual: `${judged.actual}${stopped}` }, [sent]);
      }
    }
    return crossCuts();

    /** A delivery to --mailbox whose body is `total` bytes, streamed with its Content-Length. */
    async function oversized(total: number): Promise<Built> {
      const to = [mailbox0];
      const head = message("too-large", to, `, a body of ${total} bytes`);
      const boundary = chooseBoundary(ports.random.bytes(24), head);
      const { body: frame, contentType } = buildMultipartBody({ from, to }, head, boundary);
      // The frame is the body with a short message; the message is padded, inside its part, to make `total`.
      const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
      const prefix = frame.subarray(0, frame.length - tail.length);
      const padding = total - frame.length;
      const line = encoder.encode(`${"x".repeat(76)}\r\n`);
      const pieces = function* (): Generator<Uint8Array> {
        yield prefix;
        const chunk = new Uint8Array(64 * 1024);
        for (let i = 0; i < chunk.length; i++) chunk[i] = line[i % line.length] ?? 0x78;
        for (let left = padding; left > 0; left -= chunk.length)
          yield left >= chunk.length ? chunk : chunk.subarray(0, left);
        yield tail;
      };
      const digester = createDigester("sha-256");
      for (const piece of pieces()) digester.update(piece);
      const digestBytes = await digester.finish();
      const headers = new Headers({
        "content-type": contentType,
        "content-digest": `sha-256=:${bytesToBase64(digestBytes)}:`,
        "idempotency-key": freshKey("too-large"),
        "content-length": String(total),
      });
      const signed = await signRequest(
        { method: "POST", url, headers: [...headers] },
        {
          key: signer.privateKey,
          keyid: signer.keyid,
          label: PROFILE_LABEL,
          components: PROFILE_COMPONENTS,
          created: nowS(),
        },
      );
      let sent = 0;
      let done = false;
      let pipe: ReadableStreamDefaultController<Uint8Array> | undefined;
      const source = pieces();
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          pipe = controller;
        },
        pull(controller) {
          const next = source.next();
          if (next.done === true) {
            done = true;
            controller.close();
          } else {
            sent += next.value.length;
            controller.enqueue(next.value.slice());
          }
        },
      });
      // Once answered, the rest is not sent: the body errors, which cuts the request and closes its connection,
      // even when the receiver has stopped reading and the body waits on its backpressure.
      const stop = (): void => {
        if (done) return;
        done = true;
        pipe?.error(new Error("the probe stopped sending: the receiver has answered"));
      };
      return {
        request: new Request(url, {
          method: "POST",
          headers: signed.headers,
          body: stream,
          redirect: "manual",
          duplex: "half",
        } as RequestInit),
        bodySize: total,
        bodyDigest: `sha-256=:${bytesToBase64(digestBytes)}:`,
        streamed: { sent: () => sent, stop },
      };
    }
  }

  try {
    return await steps();
  } catch (error) {
    if (!(error instanceof Silent)) throw error;
    skip(
      cases.map((c) => c.id),
      error.message,
    );
    return crossCuts();
  }

  /** The cases judged over every answer of the run. */
  function crossCuts(): ProbeRun {
    const failing = responses.filter((r) => r.answer.status >= 400);
    const ev = (list: typeof responses): { exchanges: string[]; evidence: number[] }[] =>
      list.map((r) => ({ exchanges: [r.exchangeId], evidence: r.evidence }));
    const asSent = (list: typeof responses): Sent[] =>
      ev(list).map((e) => ({ answer: { kind: "failure", failure: "", message: "" }, ...e }));
    if (failing.length === 0) {
      skip(["problem-media-type", "problem-type", "problem-versions"], "no 4xx or 5xx answer in this run");
    } else {
      const notProblem = failing.filter((r) => r.answer.mediaType !== "application/problem+json");
      record(
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
      const base = options.problemBase?.replace(/\/+$/, "") ?? bases[0]?.base;
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
    const waits = responses.filter((r) => r.answer.status === 429 || r.answer.status === 503);
    if (waits.length === 0)
      skip(["retry-after"], "no 429 or 503 answer in this run (the probe does not flood a receiver to provoke one)");
    else {
      const none = waits.filter(
        (r) => parseRetryAfter(r.answer.headers.get("retry-after"), ports.clock.now()) === undefined,
      );
      record(
        "retry-after",
        none.length === 0
          ? {
              result: "PASS",
              actual: waits
                .map(
                  (r) => `${r.exchangeId} ${r.answer.status} Retry-After: ${r.answer.headers.get("retry-after") ?? ""}`,
                )
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
    return finish(origin);
  }
}

const NEED_WHY: Readonly<Record<ProbeNeed, string>> = {
  key: "needs --from and --key: a signing identity the receiver trusts",
  mailbox: "needs --mailbox: a recipient that exists and may be given the probe's messages",
  absent: "needs --absent: a recipient of the receiver's domain that does not exist",
  "absent-pattern":
    "needs --absent with {n} (nobody{n}@b.example): max_recipients + 1 recipients that do not exist, made from it",
};

/** `expected` against what came: PASS, PASS with the note of an alternative a gap allows, or FAIL with why. */
function expectProblem(
  answer: Answer,
  status: number,
  identifier: string,
  alternatives: readonly { status: number; identifier: string; note: string }[] = [],
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

/** The problems of one DeliveryResult entry (RCP-2, RCP-4, RCP-5). */
function entryProblems(entry: Readonly<Record<string, unknown>>): string[] {
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
function resultsText(results: unknown): string {
  if (!Array.isArray(results)) return "(no results)";
  return results
    .map((e) => {
      const r = typeof e === "object" && e !== null ? (e as Record<string, unknown>) : {};
      const problem = problemOf(r["problem"]);
      return `${String(r["recipient"])} ${String(r["status"])}${problem !== undefined ? ` (${problem.identifier})` : ""}`;
    })
    .join(", ");
}

function normalized(address: unknown): string {
  if (typeof address !== "string") return String(address);
  const parsed = parseMailbox(address);
  return parsed.ok ? parsed.value.address : address;
}

/** `"bob"@b.example` for `bob@b.example`: the same mailbox, quoted where a dot-string does (MBX-7). */
function quoted(mailbox: string): string {
  const at = mailbox.lastIndexOf("@");
  return `"${mailbox.slice(0, at)}"${mailbox.slice(at)}`;
}

/** The same items, each counted once (a list with a repeat is another case's: capabilities-versions). */
function sameSet(a: readonly unknown[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...right].every((x) => left.has(x));
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

/** A GET or an empty POST with no headers of its own. */
function plainRequest(method: "GET" | "POST", url: string): Built {
  return {
    request: new Request(url, {
      method,
      redirect: "manual",
      ...(method === "POST" && { headers: { "content-length": "0" } }),
    }),
    body: new Uint8Array(0),
    bodySize: 0,
  };
}

/** The answer's body, at most {@link MAX_ANSWER_BYTES} of it (the rest read and dropped). */
async function readCapped(response: Response): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size < MAX_ANSWER_BYTES) chunks.push(value.subarray(0, MAX_ANSWER_BYTES - size));
    size += value.length;
  }
  const out = new Uint8Array(Math.min(size, MAX_ANSWER_BYTES));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function answerData(answer: DnsAnswer<SvcbRecord | string>): Pick<EmitData<"dns.answer">, "kind" | "records" | "ttlS"> {
  return answer.kind === "answer"
    ? { kind: "answer", records: answer.records, ttlS: answer.ttlS }
    : { kind: answer.kind };
}
