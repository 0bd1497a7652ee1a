/**
 * What the spec expects of a sender next, read off the requests a receiver
 * sees: `mailscope serve --faults` prints it under each request, so that an
 * implementer pointing their own sender at serve sees when the next attempt
 * may come, whether SMTP is allowed yet, and whether their sender kept to it.
 *
 * A receiver sees only what reaches it: a delivery by its (signing domain,
 * Idempotency-Key), the first attempt of it that arrived, the answers it gave.
 * So the times are lower bounds drawn from the spec's rules:
 * - a retry of a request-level temporary failure keeps its key (POST-24) and
 *   comes no earlier than the schedule allows (RETRY-1, RETRY-2: 1 min
 *   doubling to 1 h after the attempt, less 20 % jitter, RETRY-3) and no
 *   earlier than a Retry-After (RETRY-7);
 * - a deferred recipient comes back in a new delivery with a new key (STATE-6,
 *   POST-27), no earlier than the schedule and its `retry_after`;
 * - SMTP only after request-level 5xx or connection failures, every attempt
 *   so far, and not before the fallback window (at least 1 h after the first
 *   attempt, RETRY-5; 2 h advised, RETRY-4) (STATE-3, ERR-22); at once on
 *   `unsupported_version` (STATE-4, ERR-26); never after any other answer
 *   (ERR-23);
 * - nothing after a permanent answer (STATE-9); the give-up 5 days after the
 *   first attempt (STATE-7).
 *
 * With a clock scale (`--clock-scale 60`: the sender runs the spec's schedule
 * 60 times faster, as `mailscope send --clock-scale 60` does), the spec's
 * durations are divided by it on the wall clock.
 */
import { interpretRecipientResult, interpretRequestLevel, transportFailure } from "../protocol/errors.ts";
import { parseProblem, parseRecipientResult, type RecipientResult } from "../protocol/resources.ts";
import type { RequestLevelReading } from "../protocol/errors.ts";
import {
  FIRST_RETRY_DELAY_MS,
  GIVE_UP_AFTER_MS,
  JITTER_FRACTION,
  MAX_RETRY_DELAY_MS,
  MIN_FALLBACK_WINDOW_S,
} from "./retrySchedule.ts";

/** One request as the receiver saw it, and what it answered. */
export interface WatchedRequest {
  /** Wall-clock ms of its arrival. */
  readonly atMs: number;
  readonly method: string;
  readonly path: string;
  readonly signingDomain?: string;
  readonly idempotencyKey?: string;
  readonly answer:
    | { readonly kind: "none"; readonly failure: "connection-refused" | "connection-reset" | "tls" | "timeout" }
    | {
        readonly kind: "response";
        readonly status: number;
        readonly retryAfter?: string | null;
        /** The body as JSON, when it was: a problem document or a DeliveryResult. */
        readonly json?: unknown;
      };
}

/** What {@link createSenderWatch} is told. */
export interface SenderWatchOptions {
  /** Spec time per wall-clock time; 1 for the spec's own schedule. */
  readonly clockScale: number;
  /** The receiver's `{problem_base}`, to read its problems. */
  readonly problemBase: string;
}

/** Follows the requests of senders and says, for each, what the spec expects next. */
export interface SenderWatch {
  /** The lines for one request: how it kept to what was expected before (if anything was), then what comes next. */
  observe(request: WatchedRequest): string[];
}

/**
 * Wall-clock ms a request may arrive before its bound and still be on time: what serve cannot see of the
 * sender's attempt before its request arrives (discovery, a capabilities request, the connection), which the
 * spec's delays count from.
 */
export const EARLY_SLACK_MS = 1000;

interface Delivery {
  /** The first attempt of the message seen (a new delivery for deferred recipients keeps its message's). */
  readonly firstMs: number;
  attempts: number;
  lastMs: number;
  /** Every attempt so far fallback-eligible (STATE-3). */
  eligible: boolean;
  /** The earliest the spec allows the next attempt, and why. */
  next?: { readonly atMs: number; readonly why: string };
  /** Answered for good: no attempt may follow (and why). */
  final?: string;
  /** Recipients deferred in this delivery. */
  deferred: string[];
}

/** The schedule's delay before retry `n` (1 for the first), without jitter (RETRY-1, RETRY-2). */
function baseDelayMs(n: number): number {
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** Math.max(0, n - 1), MAX_RETRY_DELAY_MS);
}

/** `1 min`, `1 h 30 min`, `2 d`: a spec duration. */
function spec(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 360) / 10} h`;
  return `${Math.round(s / 8640) / 10} d`;
}

export function createSenderWatch(options: SenderWatchOptions): SenderWatch {
  const scale = options.clockScale;
  const deliveries = new Map<string, Delivery>();
  /** Deferred recipients by signing domain and mailbox: when, the earliest new delivery, the message's first attempt. */
  const deferred = new Map<string, { atMs: number; earliestMs: number; firstMs: number; key: string }>();
  /** A wall-clock time and, when scaled, how far it is on the spec's clock. */
  const when = (atMs: number, fromMs: number): string => {
    const iso = new Date(atMs).toISOString();
    const sameDay = iso.slice(0, 10) === new Date(fromMs).toISOString().slice(0, 10);
    return `${sameDay ? `${iso.slice(11, 23)}Z` : iso}${scale !== 1 ? ` (${spec((atMs - fromMs) * scale)} on the spec's clock)` : ""}`;
  };
  /** Spec ms as wall-clock ms. */
  const wall = (specMs: number): number => specMs / scale;

  return {
    observe(request) {
      const lines: string[] = [];
      const id =
        request.idempotencyKey !== undefined ? `${request.signingDomain ?? "?"} ${request.idempotencyKey}` : undefined;
      const isCapabilities = request.method === "GET" && /\/capabilities$/.test(request.path);
      const answer = request.answer;

      // ── Did the sender keep to what was expected? ────────────────────
      const known = id === undefined ? undefined : deliveries.get(id);
      if (known !== undefined) {
        const gapMs = request.atMs - known.lastMs;
        if (known.final !== undefined)
          lines.push(
            known.final === "200"
              ? `sender: attempt ${known.attempts + 1} of a delivery answered 200: the receiver replays that answer [POST-12]; a sender that got it sends nothing more`
              : `sender: UNEXPECTED: attempt ${known.attempts + 1} of a delivery answered for good (${known.final}); a sender that got that answer does not retry [STATE-9]`,
          );
        else if (known.deferred.length > 0)
          lines.push(
            `sender: VIOLATION: the deferred ${known.deferred.join(", ")} came back under the same Idempotency-Key; a new delivery takes a new one [STATE-6, POST-27]`,
          );
        else if (known.next !== undefined && request.atMs < known.next.atMs - EARLY_SLACK_MS)
          lines.push(
            `sender: EARLY: attempt ${known.attempts + 1}, ${spec(gapMs * scale)} after the last; the spec allowed it from ${when(known.next.atMs, known.lastMs)} (${known.next.why})`,
          );
        else
          lines.push(
            `sender: attempt ${known.attempts + 1} of this delivery, ${spec(gapMs * scale)} after the last: on time${known.next !== undefined ? ` (allowed from ${spec((known.next.atMs - known.lastMs) * scale)})` : ""} [POST-24]`,
          );
      }
      const list =
        answer.kind === "response" && answer.status === 200
          ? (answer.json as { results?: unknown } | undefined)?.results
          : undefined;
      const results: RecipientResult[] = (Array.isArray(list) ? list : []).flatMap((entry: unknown) => {
        const parsed = parseRecipientResult(entry);
        return parsed.ok ? [parsed.value] : [];
      });
      let inherited: number | undefined;
      for (const r of results) {
        const was = deferred.get(`${request.signingDomain ?? "?"} ${r.recipient.address}`);
        if (was === undefined || was.key === request.idempotencyKey) continue;
        inherited = Math.min(inherited ?? was.firstMs, was.firstMs);
        lines.push(
          request.atMs < was.earliestMs - EARLY_SLACK_MS
            ? `sender: EARLY: ${r.recipient.address}, deferred at ${when(was.atMs, was.atMs)}, is back ${spec((request.atMs - was.atMs) * scale)} later; allowed from ${when(was.earliestMs, was.atMs)} [RETRY-7, RETRY-8]`
            : `sender: ${r.recipient.address}, deferred ${spec((request.atMs - was.atMs) * scale)} ago, is back in a new delivery: on time [STATE-6, POST-27]`,
        );
        deferred.delete(`${request.signingDomain ?? "?"} ${r.recipient.address}`);
      }

      // ── What comes next ──────────────────────────────────────────────
      const delivery: Delivery =
        known ??
        ({
          firstMs: inherited ?? request.atMs,
          attempts: 0,
          lastMs: request.atMs,
          eligible: true,
          deferred: [],
        } as Delivery);
      delivery.attempts += 1;
      delivery.lastMs = request.atMs;
      delivery.next = undefined;
      if (id !== undefined && !isCapabilities) deliveries.set(id, delivery);

      let reading: RequestLevelReading | undefined;
      let retryAfterS: number | undefined;
      if (answer.kind === "none") reading = transportFailure(answer.failure === "tls" ? "tls" : "connection");
      else if (isCapabilities && answer.status !== 200) reading = transportFailure("capabilities");
      else if (answer.status !== 200) {
        const problem = parseProblem(answer.json);
        reading = interpretRequestLevel(answer.status, problem.ok ? problem.value : undefined, options.problemBase);
        const after = answer.retryAfter;
        if (after !== undefined && after !== null && /^\s*\d+\s*$/.test(after)) retryAfterS = Number(after);
      }

      const scheduleMs = (1 - JITTER_FRACTION) * baseDelayMs(delivery.attempts);
      const windowEndMs = delivery.firstMs + wall(MIN_FALLBACK_WINDOW_S * 1000);
      const giveUpMs = delivery.firstMs + wall(GIVE_UP_AFTER_MS);
      const earliest = (afterS: number | undefined): { atMs: number; why: string } => {
        const bySchedule = request.atMs + wall(scheduleMs);
        const byAfter = afterS === undefined ? 0 : request.atMs + wall(afterS * 1000);
        return byAfter > bySchedule
          ? { atMs: byAfter, why: `Retry-After ${afterS ?? 0} s [RETRY-7]` }
          : {
              atMs: bySchedule,
              why: `retry ${delivery.attempts} of the schedule: ${spec(baseDelayMs(delivery.attempts))} less 20 % jitter after this attempt [RETRY-1, RETRY-2, RETRY-3]`,
            };
      };

      if (isCapabilities && answer.kind === "response" && answer.status === 200) {
        lines.push(
          "next: the sender may cache this document for its max-age, an hour at most without one, never past 24 h [GET-6, GET-7]",
        );
        return lines;
      }
      if (reading !== undefined) {
        const what = isCapabilities
          ? "an unusable capabilities document"
          : `${reading.identifier ?? `status class ${reading.class}`}`;
        if (!reading.retry) {
          delivery.final = `${answer.kind === "response" ? answer.status : ""} ${what}`.trim();
          lines.push(
            reading.smtpFallback === "immediately"
              ? `next: no common version: no retry over the service; SMTP is allowed at once, even with a valid pin [STATE-4, ERR-26]`
              : `next: ${what} is permanent: no retry, and never SMTP [STATE-9, ERR-23]`,
          );
          return lines;
        }
        if (!reading.fallbackEligible) delivery.eligible = false;
        const next = earliest(retryAfterS);
        delivery.next = next;
        const keyNote = isCapabilities ? "the attempt ends before its POST" : "the same Idempotency-Key [POST-24]";
        const smtp = !delivery.eligible
          ? "never SMTP: an attempt of this delivery was not fallback-eligible [ERR-23]"
          : request.atMs >= windowEndMs
            ? `SMTP allowed now: every attempt since ${when(delivery.firstMs, delivery.firstMs)} failed at request level and the 1 h fallback window is over [STATE-3, ERR-22]`
            : `SMTP not yet: from ${when(windowEndMs, delivery.firstMs)} at the earliest (fallback window ≥ 1 h after the first attempt seen, 2 h advised [RETRY-4, RETRY-5]), and only if every attempt until then fails like this [STATE-3]`;
        lines.push(
          `next: ${what}, temporary${reading.fallbackEligible ? ", fallback-eligible" : ", not fallback-eligible"} [${reading.rule}]: retry with ${keyNote} no earlier than ${when(next.atMs, request.atMs)} (${next.why}); ${smtp}; give-up at ${when(giveUpMs, delivery.firstMs)} [STATE-7]`,
        );
        return lines;
      }

      // A 200: each recipient's result.
      const done: string[] = [];
      const again: string[] = [];
      for (const r of results) {
        const read = interpretRecipientResult(r, options.problemBase);
        if (read.outcome === "deferred") {
          const next = earliest(read.retryAfterS);
          deferred.set(`${request.signingDomain ?? "?"} ${r.recipient.address}`, {
            atMs: request.atMs,
            earliestMs: next.atMs,
            firstMs: delivery.firstMs,
            key: request.idempotencyKey ?? "",
          });
          delivery.deferred.push(r.recipient.address);
          again.push(
            `${r.recipient.address} in a new delivery with a new Idempotency-Key no earlier than ${when(next.atMs, request.atMs)} (${next.why.replace("Retry-After", "retry_after")})`,
          );
        } else done.push(`${r.recipient.address} ${read.outcome}`);
      }
      if (again.length === 0) delivery.final = "200";
      lines.push(
        `next: ${done.length > 0 ? `${done.join(", ")}: finished, never retried nor sent over SMTP [RCP-7, RCP-8]` : ""}${done.length > 0 && again.length > 0 ? "; " : ""}${again.length > 0 ? `deferred: ${again.join("; ")}; never SMTP for them [STATE-6, ERR-23]` : ""}`,
      );
      return lines;
    },
  };
}
