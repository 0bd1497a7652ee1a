/**
 * The per-recipient outcomes table: every recipient of every message the run
 * submitted (DSNs included), its outcome, when, how many attempts and POSTs,
 * and the rule that decided it — what `mailscope run` prints under
 * "outcomes:", computed from trace events alone so that a live run and an
 * imported trace draw the same table. The app's outcomes table
 * (renderer/src/model/outcomes.ts) and the comparison of two runs
 * (app/sim/compare.ts, `mailscope compare`) both read it.
 */
import { formatOffset } from "../trace/offset.ts";
import type { RecordedEvent } from "../trace/schema.ts";
import { indexTrace } from "./expectations.ts";
import { normalizeAddress } from "../protocol/mailbox.ts";
import { actorOfDelivery } from "../trace/deliveryIds.ts";

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

/** A recipient's row before its message is labelled, with the seq of the submission that listed it first. */
export interface RecipientRow {
  readonly at: number;
  readonly row: Omit<OutcomeRow, "message">;
}

/**
 * The rows of `events`, in the order the recipients were submitted, and the
 * scenario's message ids (the first part of each non-DSN Message-ID
 * submitted). The app reads each message's rows from that message's events
 * alone (renderer/src/model/outcomes.ts) and labels them across messages.
 */
export function recipientRows(
  events: Iterable<RecordedEvent>,
  startMs: number,
): { readonly rows: RecipientRow[]; readonly scenarioIds: Set<string> } {
  const scenarioIds = new Set<string>();
  const facts = indexTrace(events);
  const seqs = new Map<string, number>();
  const order: { at: number; messageId: string; recipient: string; dsn: boolean }[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    const d = e.data ?? {};
    const messageId = typeof d["messageId"] === "string" ? d["messageId"] : "";
    if (e.name === "message.submitted") {
      if (d["from"] !== null && messageId.includes("@")) scenarioIds.add(messageId.slice(0, messageId.indexOf("@")));
      for (const r of Array.isArray(d["to"]) ? d["to"].map(String) : []) {
        const recipient = normalizeAddress(r);
        const key = `${messageId}\n${recipient}`;
        if (seen.has(key)) continue;
        seen.add(key);
        order.push({ at: e.seq, messageId, recipient, dsn: d["from"] === null });
      }
    } else if (e.name === "recipient.outcome") {
      const key = `${messageId}\n${normalizeAddress(String(d["recipient"] ?? ""))}`;
      if (!seqs.has(key)) seqs.set(key, e.seq);
    }
  }
  const rows = order.map(({ at, messageId, recipient, dsn }) => {
    const f = facts.facts(messageId, recipient);
    const o = f.outcome;
    const smtp =
      f.handOff !== undefined && o?.outcome === "smtp"
        ? ` (${f.handOff.reason}${f.handOff.accepted ? "" : ", relay refused"})`
        : "";
    const seq = seqs.get(`${messageId}\n${recipient}`);
    const domain = recipient.slice(recipient.lastIndexOf("@") + 1).toLowerCase();
    const row: Omit<OutcomeRow, "message"> = {
      messageId,
      recipient,
      outcome: o?.outcome ?? "pending",
      outcomeText: o === undefined ? "pending" : `${o.outcome}${smtp}`,
      dsn,
      ...(o !== undefined && { atMs: o.timeMs }),
      when: o === undefined ? "" : formatOffset(o.timeMs, startMs),
      attempts: f.attempts,
      posts: f.posts,
      ...(o?.rule !== undefined && { rule: o.rule }),
      delivery: actorOfDelivery(`${messageId}→${domain}`),
      ...(seq !== undefined && { outcomeSeq: seq }),
    };
    return { at, row };
  });
  return { rows, scenarioIds };
}

/**
 * The outcomes table of `events` (the whole trace, or as far as the playhead).
 * `labels` maps a Message-ID to the scenario's id; without it the id is read
 * off the Message-ID's local part.
 */
export function outcomeRows(
  events: Iterable<RecordedEvent>,
  startMs: number,
  labels?: ReadonlyMap<string, string>,
): OutcomeRow[] {
  const { rows, scenarioIds } = recipientRows(events, startMs);
  return rows.map(({ row }) => ({
    message: labels?.get(row.messageId) ?? messageLabel(row.messageId, scenarioIds),
    ...row,
  }));
}
