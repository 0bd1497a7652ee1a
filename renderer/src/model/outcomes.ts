/**
 * The per-recipient outcomes table: every recipient of every message the run
 * submitted (DSNs included), its outcome, when, how many attempts and POSTs,
 * and the rule that decided it — what `mailscope run` prints under
 * "outcomes:", computed from trace events alone so that a live run and an
 * imported trace draw the same table.
 */
import { indexTrace } from "../../../app/sim/expectations.ts";
import { actorOfDelivery, normalizeAddress } from "../../../app/sim/invariants.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { messageIdsOf, outcomeEventCount, outcomeEvents, runCache, runIndexOf } from "./runIndex.ts";
import { offset } from "./time.ts";

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

/** The rows of one message (all but the `message` label), and where each recipient was first submitted. */
interface MessageRows {
  readonly messageId: string;
  readonly facts: number;
  readonly startMs: number;
  /** Submitted by a sender (not a DSN): its local part is a scenario message id. */
  readonly scenario: boolean;
  readonly rows: readonly { readonly at: number; readonly row: Omit<OutcomeRow, "message"> }[];
}

/** The rows of the recipients of `messageId`, from `events`: the events its outcomes read (runIndex.ts). */
function messageRows(events: readonly RecordedEvent[], messageId: string, startMs: number, facts: number): MessageRows {
  const index = indexTrace(events);
  const seqs = new Map<string, number>();
  const order: { at: number; recipient: string; dsn: boolean }[] = [];
  const seen = new Set<string>();
  let scenario = false;
  for (const e of events) {
    const d = e.data ?? {};
    if (e.name === "message.submitted") {
      if (d["from"] !== null) scenario = true;
      for (const r of Array.isArray(d["to"]) ? d["to"].map(String) : []) {
        const recipient = normalizeAddress(r);
        if (seen.has(recipient)) continue;
        seen.add(recipient);
        order.push({ at: e.seq, recipient, dsn: d["from"] === null });
      }
    } else if (e.name === "recipient.outcome") {
      const key = normalizeAddress(String(d["recipient"] ?? ""));
      if (!seqs.has(key)) seqs.set(key, e.seq);
    }
  }
  const rows = order.map(({ at, recipient, dsn }) => {
    const f = index.facts(messageId, recipient);
    const o = f.outcome;
    const smtp =
      f.handOff !== undefined && o?.outcome === "smtp"
        ? ` (${f.handOff.reason}${f.handOff.accepted ? "" : ", relay refused"})`
        : "";
    const seq = seqs.get(recipient);
    const domain = recipient.slice(recipient.lastIndexOf("@") + 1).toLowerCase();
    const row: Omit<OutcomeRow, "message"> = {
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
    return { at, row };
  });
  return { messageId, facts, startMs, scenario, rows };
}

/**
 * The outcomes table of `events` (the whole trace, or as far as the playhead).
 * `labels` maps a Message-ID to the scenario's id; without it the id is read
 * off the Message-ID's local part.
 *
 * Each message's rows read only that message's events, found by the run's
 * index, and are kept until a batch brings it new ones: a live run's batch
 * recomputes the rows of the messages it concerns.
 */
export function outcomeRows(
  events: readonly RecordedEvent[],
  startMs: number,
  labels?: ReadonlyMap<string, string>,
): OutcomeRow[] {
  const index = runIndexOf(events);
  const cache = runCache<MessageRows>(index, "outcomes");
  const messages = messageIdsOf(index).map((messageId) => {
    const facts = outcomeEventCount(index, messageId);
    let rows = cache.get(messageId);
    if (rows === undefined || rows.facts !== facts || rows.startMs !== startMs) {
      rows = messageRows(outcomeEvents(index, messageId), messageId, startMs, facts);
      // An older version of the events (a deferred render) computes, but keeps nothing.
      if (index.count === index.lists.events.length) cache.set(messageId, rows);
    }
    return rows;
  });
  // The scenario's message ids read off its submissions: the first part of each non-DSN Message-ID.
  const ids = new Set<string>();
  for (const m of messages) {
    if (m.scenario && m.messageId.includes("@")) ids.add(m.messageId.slice(0, m.messageId.indexOf("@")));
  }
  const all = messages.flatMap((m) => m.rows);
  // In the order the recipients were submitted (a message submitted again later adds its rows there).
  if (all.some((r, i) => i > 0 && r.at < (all[i - 1]?.at ?? 0))) all.sort((a, b) => a.at - b.at);
  return all.map(({ row }) => ({ message: labels?.get(row.messageId) ?? messageLabel(row.messageId, ids), ...row }));
}
