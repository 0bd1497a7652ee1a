/**
 * The sequence diagram of one message, from trace events alone: the sending
 * domain's sender, DNS, each receiver host and the SMTP relay as
 * participants; DNS queries and answers, capabilities GETs, POSTs and their
 * responses (with the per-recipient results), faults as broken arrows,
 * hand-offs, bounces and DSNs as arrows and notes, in trace order; long quiet
 * spans compressed to one labelled row (`… 58 min …`). Also as Mermaid text.
 */
import type { RecordedEvent } from "./schema.ts";
import { messageIdsOf, messageOfActor, receiverLookup, runIndexOf, sequenceEvents } from "./runIndex.ts";
import { formatDuration, formatOffset } from "./offset.ts";
import { readEvent } from "./eventReader.ts";
import { textOf } from "./values.ts";
import { actorOfDelivery } from "./deliveryIds.ts";

export type SequenceRowKind =
  "dns-query" | "dns-answer" | "request" | "response" | "failure" | "handoff" | "dsn" | "note" | "gap";

export interface SequenceRow {
  readonly kind: SequenceRowKind;
  readonly timeMs: number;
  readonly seq: number;
  /** Participant indexes; a note sits over `from`. */
  readonly from: number;
  readonly to: number;
  readonly label: string;
  /** The per-recipient results of a response: `carol@b.example accepted`. */
  readonly results: readonly string[];
  readonly exchangeId?: string;
  /** A fault or failure: drawn as a broken arrow. */
  readonly broken: boolean;
}

export interface SequenceDiagram {
  readonly participants: readonly string[];
  readonly rows: readonly SequenceRow[];
}

type Data = Readonly<Record<string, unknown>>;
const actorOf = (deliveryId: string | undefined) =>
  deliveryId === undefined ? undefined : actorOfDelivery(deliveryId);

/** The messages a trace delivers (by Message-ID), in the order submitted. */
export function messagesOf(events: readonly RecordedEvent[]): string[] {
  return messageIdsOf(runIndexOf(events)).filter((id) => id !== "");
}

/** A time range of a run: every message's exchanges in it. */
export interface SequenceRange {
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * The diagram of `selection`: one message's deliveries (its Message-ID), or
 * everything that went over the wire in a time range (every sending
 * domain's sender a participant, each request marked with its message via
 * `labels`). Quiet spans longer than `quietMs` (default 1 minute) between
 * two rows become one gap row.
 */
export function sequenceOf(
  events: readonly RecordedEvent[],
  selection: string | SequenceRange,
  startMs: number,
  quietMs = 60_000,
  labels: ReadonlyMap<string, string> = new Map(),
): SequenceDiagram {
  // A message's diagram reads only its events, which the run's index finds (the same diagram); a range the run's.
  const read = typeof selection === "string" ? sequenceEvents(runIndexOf(events), selection) : events;
  return sequenceOfEvents(read, selection, startMs, quietMs, labels);
}

/** {@link sequenceOf} read off `events` as they are given: every event of a run, or those of the message. */
export function sequenceOfEvents(
  events: Iterable<RecordedEvent>,
  selection: string | SequenceRange,
  startMs: number,
  quietMs = 60_000,
  labels: ReadonlyMap<string, string> = new Map(),
): SequenceDiagram {
  const messageId = typeof selection === "string" ? selection : undefined;
  const range = typeof selection === "string" ? undefined : selection;
  const participants: string[] = [];
  const index = (name: string) => {
    let i = participants.indexOf(name);
    if (i < 0) {
      participants.push(name);
      i = participants.length - 1;
    }
    return i;
  };
  // The message and the DSNs that report on it (their deliveries are part of its story), as they are sent.
  const own = new Set<string>(messageId === undefined ? [] : [messageId]);
  const ownMessage = (id: string | undefined) => messageId === undefined || (id !== undefined && own.has(id));
  const ownActor = (actor: string | undefined) => actor !== undefined && ownMessage(messageOfActor(actor));
  /** In a range, each request says whose it is: ` [m1]`; in a message's diagram, a DSN's says ` [DSN]`. */
  const whose = (actor: string | undefined) => {
    if (actor === undefined) return "";
    const id = messageOfActor(actor);
    if (range === undefined) return id === messageId ? "" : " [DSN]";
    return ` [${labels.get(id) ?? id}]`;
  };
  const currentActor = new Map<string, string>();
  const exchanges = new Map<string, { from: number; to: number; actor: string | undefined; post: boolean }>();
  const lastPost = new Map<string, number>();
  // The request each receiving domain handles (its key lookups are made for it), and where each mailbox's
  // message was last stored (a failure after acceptance names the mailbox only); undefined: not drawn here.
  const handling = new Map<string, string>();
  const storedAt = new Map<string, number | undefined>();
  const rows: { -readonly [K in keyof SequenceRow]: SequenceRow[K] }[] = [];
  // Each sending domain's sender: the message's own, and another domain's that sends a DSN about it.
  const senderIndex = (domain: string | undefined) => index(`sender ${domain ?? "?"}`);

  for (const e of events) {
    const d = e.data as Data;
    // Any event of a delivery actor or of one of its deliveries: fields of many names, read by name.
    const actor = textOf(d["deliveryActor"]) ?? actorOf(textOf(d["deliveryId"]));
    if (actor && e.domain && e.name !== "recipient.result" && e.name !== "recipient.outcome")
      currentActor.set(e.domain, actor);
    // A range shows every exchange in it, also those of no delivery actor (a probe's requests, `mailscope probe`).
    const mine = e.domain !== undefined && (range !== undefined || ownActor(currentActor.get(e.domain)));
    const inRange = range === undefined || (e.timeMs >= range.fromMs && e.timeMs <= range.toMs);
    const row = (r: Omit<SequenceRow, "seq" | "timeMs" | "results" | "broken"> & Partial<SequenceRow>) => {
      if (inRange) rows.push({ results: [], broken: false, seq: e.seq, timeMs: e.timeMs, ...r });
    };
    // A receiver's key lookup for a request: drawn from the receiver's column, when the request is drawn.
    const lookupFor = receiverLookup(handling, e);
    const receiver = lookupFor === undefined ? undefined : (exchanges.get(lookupFor)?.to ?? -1);
    const ev = readEvent(e);
    switch (ev?.name) {
      case "dns.query":
        if (receiver !== undefined) {
          if (receiver >= 0)
            row({ kind: "dns-query", from: receiver, to: index("DNS"), label: `${ev.data.type} ${ev.data.name}?` });
        } else if (mine)
          row({
            kind: "dns-query",
            from: senderIndex(e.domain),
            to: index("DNS"),
            label: `${ev.data.type} ${ev.data.name}?`,
          });
        break;
      case "dns.answer": {
        if (receiver === undefined ? !mine : receiver < 0) break;
        const kind = ev.data.kind ?? "answer";
        const records = ev.data.records ?? [];
        const what = kind === "answer" ? records.map(recordText).join(", ") || "answer" : kind;
        const fault = ev.data.fault;
        row({
          kind: "dns-answer",
          from: index("DNS"),
          to: receiver ?? senderIndex(e.domain),
          label: `${ev.data.name}: ${what}${fault ? ` (fault ${fault})` : ""}`,
          broken: kind === "servfail" || kind === "timeout",
        });
        break;
      }
      case "http.request": {
        if (!mine) break;
        const url = ev.data.url ?? "";
        const parsed = URL.canParse(url) ? new URL(url) : undefined;
        const from = senderIndex(e.domain);
        const to = index(parsed?.host ?? "receiver");
        const x = ev.data.exchangeId;
        const method = ev.data.method ?? "";
        const owner = e.domain ? currentActor.get(e.domain) : undefined;
        if (x) exchanges.set(x, { from, to, actor: owner, post: method === "POST" });
        row({
          kind: "request",
          from,
          to,
          label: `${method} ${parsed?.pathname ?? url}${whose(owner)}`,
          ...(x && { exchangeId: x }),
        });
        break;
      }
      case "http.response":
      case "http.failure": {
        const x = ev.data.exchangeId;
        const ex = x ? exchanges.get(x) : undefined;
        if (!ex || !x) break;
        const fault = ev.data.fault;
        if (ev.name === "http.response") {
          const problem = ev.data.body !== undefined ? problemType(ev.data.body ?? "") : undefined;
          if (ex.post && ex.actor) lastPost.set(ex.actor, inRange ? rows.length : -1);
          row({
            kind: "response",
            from: ex.to,
            to: ex.from,
            label: `${ev.data.status ?? ""}${problem ? ` ${problem}` : ""}${fault ? ` (fault ${fault})` : ""}`,
            exchangeId: x,
            broken: fault !== undefined,
          });
        } else
          row({
            kind: "failure",
            from: ex.to,
            to: ex.from,
            label: `${ev.data.kind ?? "failure"}${fault ? ` (fault ${fault})` : ""}`,
            exchangeId: x,
            broken: true,
          });
        break;
      }
      case "recipient.result": {
        const a = actorOf(ev.data.deliveryId);
        if (!ownActor(a) || !a) break;
        const at = lastPost.get(a);
        const target = at !== undefined ? rows[at] : undefined;
        if (target && target.kind === "response")
          target.results = [...target.results, `${ev.data.recipient} ${ev.data.status}`];
        break;
      }
      case "smtp.handoff":
        if (!ownMessage(ev.data.messageId)) break;
        row({
          kind: "handoff",
          from: senderIndex(e.domain),
          to: index("SMTP relay"),
          label: `SMTP hand-off (${ev.data.reason}): ${(ev.data.recipients ?? []).join(", ")}${ev.data.accepted === false ? " — refused" : ""}${whose(ev.data.messageId)}`,
          broken: ev.data.accepted === false,
        });
        break;
      case "delivery.bounced":
        if (!ownMessage(ev.data.messageId)) break;
        row({
          kind: "note",
          from: senderIndex(e.domain),
          to: senderIndex(e.domain),
          label: `bounced: ${(ev.data.recipients ?? []).join(", ")}${whose(ev.data.messageId)}`,
        });
        break;
      case "dsn.sent": {
        if (!ownMessage(ev.data.messageId)) break;
        const dsn = ev.data.dsnMessageId;
        if (dsn !== undefined && messageId !== undefined) own.add(dsn);
        // From the domain that sends it: the sender's after a bounce, the receiver's after a failure after acceptance.
        row({
          kind: "dsn",
          from: senderIndex(e.domain),
          to: senderIndex(e.domain),
          label: `DSN (${ev.data.reason}) to ${ev.data.to}${whose(ev.data.messageId)}`,
        });
        break;
      }
      case "mailbox.delivered":
      case "failure.after-acceptance": {
        // A failure after acceptance names the mailbox only.
        const x = ev.name === "mailbox.delivered" ? ev.data.exchangeId : undefined;
        const mailbox = ev.data.mailbox?.toLowerCase();
        const at = x !== undefined ? exchanges.get(x)?.to : mailbox !== undefined ? storedAt.get(mailbox) : undefined;
        if (e.name === "mailbox.delivered" && mailbox !== undefined) storedAt.set(mailbox, at);
        if (at === undefined) break;
        row({
          kind: "note",
          from: at,
          to: at,
          label:
            e.name === "mailbox.delivered"
              ? `stored in ${ev.data.mailbox}`
              : `failure after acceptance: ${ev.data.mailbox}`,
        });
        break;
      }
      default:
        break;
    }
  }

  void startMs;
  return { participants, rows: withQuietGaps(rows, participants.length, quietMs) };
}

/** A DNS record as a row shows it: a TXT record's text (a key) cut short (the inspector shows it whole). */
function recordText(r: unknown): string {
  if (typeof r === "string") return r.length > 32 ? `${r.slice(0, 31)}…` : r;
  const o = r !== null && typeof r === "object" ? (r as Data) : {};
  return textOf(o["target"]) ?? textOf(o["value"]) ?? JSON.stringify(r);
}

/** `rows` with one gap row where nothing happened for longer than `quietMs` (a quiet span). */
function withQuietGaps(rows: readonly SequenceRow[], participants: number, quietMs: number): SequenceRow[] {
  const out: SequenceRow[] = [];
  let prev: SequenceRow | undefined;
  for (const r of rows) {
    if (prev && r.timeMs - prev.timeMs > quietMs)
      out.push({
        kind: "gap",
        timeMs: prev.timeMs,
        seq: prev.seq,
        from: 0,
        to: Math.max(0, participants - 1),
        label: `… ${formatDuration(r.timeMs - prev.timeMs)} …`,
        results: [],
        broken: false,
      });
    out.push(r);
    prev = r;
  }
  return out;
}

/** The problem type's last segment, from a problem document's JSON. */
function problemType(body: string): string | undefined {
  try {
    const doc = JSON.parse(body) as Data;
    const type = textOf(doc["type"]);
    return type ? type.replace(/^.*\//, "") : undefined;
  } catch {
    return undefined;
  }
}

/** Mermaid text of the diagram: what the Markdown report draws, for this message. */
export function sequenceMermaid(diagram: SequenceDiagram, startMs: number): string {
  // Text Mermaid draws as is: no statement separators, comments (%%) or entity codes (#…;).
  const clean = (t: string) =>
    t
      .replace(/[;#%\r\n]/g, " ")
      .replace(/\s+/g, " ")
      .trim();
  const alias = (i: number) => `P${i + 1}`;
  const lines = ["sequenceDiagram"];
  diagram.participants.forEach((p, i) => lines.push(`  participant ${alias(i)} as ${clean(p)}`));
  for (const r of diagram.rows) {
    const at = formatOffset(r.timeMs, startMs);
    const label = clean(`${at} ${r.label}${r.results.length ? ` — ${r.results.join(", ")}` : ""}`);
    if (r.kind === "gap") lines.push(`  Note over ${alias(r.from)},${alias(r.to)}: ${clean(r.label)}`);
    else if (r.kind === "note" || r.kind === "dsn" || r.from === r.to)
      lines.push(`  Note over ${alias(r.from)}: ${label}`);
    else {
      const arrow = r.broken ? "--x" : r.kind === "response" || r.kind === "dns-answer" ? "-->>" : "->>";
      lines.push(`  ${alias(r.from)}${arrow}${alias(r.to)}: ${label}`);
    }
  }
  return lines.join("\n");
}
