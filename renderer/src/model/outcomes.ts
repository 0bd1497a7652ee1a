/**
 * The per-recipient outcomes table of the run view: app/sim/outcomeRows.ts
 * (shared with `mailscope compare`), read one message at a time from the
 * run's index so that a live run's batch recomputes only the messages it
 * concerns.
 */
import { messageLabel, recipientRows, type OutcomeRow, type RecipientRow } from "../../../app/sim/outcomeRows.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { messageIdsOf, outcomeEventCount, outcomeEvents, runCache, runIndexOf } from "./runIndex.ts";

export { messageLabel, type OutcomeRow } from "../../../app/sim/outcomeRows.ts";

/** The rows of one message (all but the `message` label), as of `facts` of its events. */
interface MessageRows {
  readonly messageId: string;
  readonly facts: number;
  readonly startMs: number;
  /** Submitted by a sender (not a DSN): its local part is a scenario message id. */
  readonly scenario: boolean;
  readonly rows: readonly RecipientRow[];
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
      const read = recipientRows(outcomeEvents(index, messageId), startMs);
      const local = messageId.includes("@") ? messageId.slice(0, messageId.indexOf("@")) : undefined;
      const scenario = local !== undefined && read.scenarioIds.has(local);
      rows = { messageId, facts, startMs, scenario, rows: read.rows.filter((r) => r.row.messageId === messageId) };
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
