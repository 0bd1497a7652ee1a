/**
 * The per-recipient outcomes table: every recipient of every message the run
 * submitted (DSNs included), its outcome, when, how many attempts and POSTs,
 * and the rule that decided it — what `mailscope run` prints under
 * "outcomes:", computed from trace events alone so that a live run and an
 * imported trace draw the same table. The app's outcomes table
 * (renderer/src/model/outcomes.ts) and the comparison of two runs
 * (app/sim/compare.ts, `mailscope compare`) both read it.
 */
import { offset } from "../trace/offset.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { indexTrace } from "./expectations.ts";
import { actorOfDelivery, normalizeAddress } from "./invariants.ts";

/** One recipient of one message. */
export interface OutcomeRow {
  /** The scenario's message id (`m1`), or the Message-ID for a DSN. */
  readonly message: string;
  readonly messageId: string;
  readonly recipient: string;
  /** accepted | rejected | smtp | bounced, or pending while the run goes on. */
  readonly outcome: string;
  /** `smtp (fallback)`, `smtp (no-service, relay refused)`: the outcome as the CLI prints it. */
  readonly outcomeText: string;
  readonly dsn: boolean;
  readonly atMs?: number;
  /** `+2:03:00`, empty while pending. */
  readonly when: string;
  readonly attempts: number;
  readonly posts: number;
  readonly rule?: string;
  /** The delivery actor (`m1@a.example→b.example`), to select the delivery in the other views. */
  readonly delivery: string;
  /** The seq of the event that gave the outcome, for links to it. */
  readonly outcomeSeq?: number;
}

/** `m1@a.example` → `m1` when the scenario has a message m1; a DSN keeps its Message-ID. */
export function messageLabel(messageId: string, scenarioIds: ReadonlySet<string>): string {
  const at = messageId.indexOf("@");
  const local = at < 0 ? messageId : messageId.slice(0, at);
  return scenarioIds.has(local) ? local : messageId;
}

/** The scenario's message ids read off its submissions: the first part of each non-DSN Message-ID. */
function submittedIds(events: readonly RecordedEvent[]): Set<string> {
  const ids = new Set<string>();
  for (const e of events) {
    if (e.name !== "message.submitted" || e.data?.["from"] === null) continue;
    const id = String(e.data?.["messageId"] ?? "");
    if (id.includes("@")) ids.add(id.slice(0, id.indexOf("@")));
  }
  return ids;
}

/**
 * The outcomes table of `events` (the whole trace, or as far as the playhead).
 * `labels` maps a Message-ID to the scenario's id; without it the id is read
 * off the Message-ID's local part.
 */
export function outcomeRows(
  events: readonly RecordedEvent[],
  startMs: number,
  labels?: ReadonlyMap<string, string>,
): OutcomeRow[] {
  const ids = submittedIds(events);
  const facts = indexTrace(events);
  const seqs = new Map<string, number>();
  const order: { messageId: string; recipient: string; dsn: boolean }[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    const d = e.data ?? {};
    const messageId = typeof d["messageId"] === "string" ? d["messageId"] : "";
    if (e.name === "message.submitted") {
      for (const r of Array.isArray(d["to"]) ? d["to"].map(String) : []) {
        const recipient = normalizeAddress(r);
        const key = `${messageId}\n${recipient}`;
        if (seen.has(key)) continue;
        seen.add(key);
        order.push({ messageId, recipient, dsn: d["from"] === null });
      }
    } else if (e.name === "recipient.outcome") {
      const key = `${messageId}\n${normalizeAddress(String(d["recipient"] ?? ""))}`;
      if (!seqs.has(key)) seqs.set(key, e.seq);
    }
  }
  return order.map(({ messageId, recipient, dsn }) => {
    const f = facts.facts(messageId, recipient);
    const o = f.outcome;
    const smtp =
      f.handOff !== undefined && o?.outcome === "smtp"
        ? ` (${f.handOff.reason}${f.handOff.accepted ? "" : ", relay refused"})`
        : "";
    const seq = seqs.get(`${messageId}\n${recipient}`);
    const domain = recipient.slice(recipient.lastIndexOf("@") + 1).toLowerCase();
    return {
      message: labels?.get(messageId) ?? messageLabel(messageId, ids),
      messageId,
      recipient,
      outcome: o?.outcome ?? "pending",
      outcomeText: o === undefined ? "pending" : `${o.outcome}${smtp}`,
      dsn,
      ...(o !== undefined && { atMs: o.timeMs }),
      when: o === undefined ? "" : offset(o.timeMs, startMs),
      attempts: f.attempts,
      posts: f.posts,
      ...(o?.rule !== undefined && { rule: o.rule }),
      delivery: actorOfDelivery(`${messageId}→${domain}`),
      ...(seq !== undefined && { outcomeSeq: seq }),
    };
  });
}
