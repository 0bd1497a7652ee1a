/**
 * One index of a run's events, shared by the models (a
 * 100k-event trace opened in under 2 s, and a live run's work per batch in
 * proportion to the batch). It lists where each delivery actor's, message's
 * and exchange's events are, so that a model of one delivery, one message or
 * one exchange reads those events only, not the whole run.
 *
 * {@link runIndexOf} gives the index of an events array. The arrays of a run
 * grow by batches (each batch a new array that starts with the one before);
 * the index of a longer array extends the index of the shorter one, reading
 * only the events it adds. The lists are shared between those versions and
 * only ever appended to: every answer is cut at the version's own length, so
 * a version answers for its own events, whatever was added after.
 *
 * Pure as far as anyone can tell: the answers depend on the events alone.
 */
import type { RecordedEvent } from "./schema.ts";
import { actorOfDelivery, messageOfActor } from "./deliveryIds.ts";
import { dataOf } from "./eventReader.ts";
import { textOf } from "./values.ts";

type Data = Readonly<Record<string, unknown>>;
/**
 * An id field (`deliveryActor`, `deliveryId`, `messageId`, `exchangeId`) read by name on an event of any name
 * the index lists: a non-empty string.
 */
const idOf = (v: unknown): string | undefined => textOf(v) || undefined;
/** `m1@a.example→b.example#2` → `m1@a.example→b.example`. */

/** The growing part of an index, shared by every version of one run's events. */
interface Lists {
  /** The events read so far (the longest array seen of this run). */
  events: readonly RecordedEvent[];
  /** Delivery actors in the order their machines started, with the position of their `machine.started`. */
  readonly actors: { readonly actor: string; readonly at: number; readonly messageId: string | undefined }[];
  readonly actorSeen: Set<string>;
  /** Message-IDs in the order submitted, with the position of their first `message.submitted`. */
  readonly messages: { readonly messageId: string; readonly at: number }[];
  readonly messageSeen: Set<string>;
  /** Positions of the events whose `deliveryActor` is the key. */
  readonly byActor: Map<string, number[]>;
  /** Positions of the `recipient.outcome` events of a message. */
  readonly outcomesByMessage: Map<string, number[]>;
  /** Positions of the events whose `exchangeId` is the key. */
  readonly byExchange: Map<string, number[]>;
  /** The events a message's outcomes read (submitted, outcome, hand-off, DSN, attempts, timers). */
  readonly outcomeFacts: Map<string, number[]>;
  /** Sequence diagram: positions of the events a delivery actor owns on the wire (see {@link sequenceEvents}). */
  readonly wire: Map<string, number[]>;
  /** Sequence diagram: hand-offs, bounces, DSNs of a message. */
  readonly wireByMessage: Map<string, number[]>;
  /** Sequence diagram state: the actor last active in each domain, and who made each exchange's requests. */
  readonly domainActor: Map<string, string>;
  readonly exchangeOwners: Map<string, Set<string>>;
  /** Sequence diagram state: the request each receiving domain handles ({@link receiverLookup}). */
  readonly handling: Map<string, string>;
  /** Sequence diagram state: who made the request that stored a message in each mailbox, lately. */
  readonly mailboxOwners: Map<string, ReadonlySet<string>>;
  /** Models' caches of this run, by model (see {@link runCache}). */
  readonly caches: Map<string, Map<string, unknown>>;
}

/** The index of one array of events: the shared lists, cut at its length. */
export interface RunIndex {
  readonly events: readonly RecordedEvent[];
  readonly count: number;
  /** @internal */
  readonly lists: Lists;
}

const versions = new WeakMap<readonly RecordedEvent[], RunIndex>();
/** The newest version of each run read lately (a few runs side by side). */
let latest: RunIndex[] = [];
const LATEST = 4;

function push<K>(map: Map<K, number[]>, key: K, at: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [at]);
  else if (list[list.length - 1] !== at) list.push(at);
}

function emptyLists(): Lists {
  return {
    events: [],
    actors: [],
    actorSeen: new Set(),
    messages: [],
    messageSeen: new Set(),
    byActor: new Map(),
    outcomesByMessage: new Map(),
    byExchange: new Map(),
    outcomeFacts: new Map(),
    wire: new Map(),
    wireByMessage: new Map(),
    domainActor: new Map(),
    exchangeOwners: new Map(),
    handling: new Map(),
    mailboxOwners: new Map(),
    caches: new Map(),
  };
}

/**
 * The request a receiver made a DNS question or got an answer for: while a receiving domain handles a
 * request (from its `receiver.request` to its `receiver.response`), its key lookups (TXT) are the
 * receiver's, made for that request — not a lookup of a delivery actor of the same domain, whose
 * discovery asks SVCB. Undefined for any other event; `handling` follows the requests handled.
 */
export function receiverLookup(handling: Map<string, string>, e: RecordedEvent): string | undefined {
  const d = (e.data ?? {}) as Data;
  const exchangeId = idOf(d["exchangeId"]);
  const domain = e.domain;
  if (domain === undefined) return undefined;
  if (e.name === "receiver.request" && exchangeId !== undefined) handling.set(domain, exchangeId);
  else if (e.name === "receiver.response" && handling.get(domain) === exchangeId) handling.delete(domain);
  else if ((e.name === "dns.query" || e.name === "dns.answer") && d["type"] !== "SVCB") return handling.get(domain);
  return undefined;
}

/** The message a delivery actor delivers (app/trace/deliveryIds.ts). */
export { messageOfActor };

/** Reads `events[from…]` into `lists`. */
function read(lists: Lists, events: readonly RecordedEvent[], from: number): void {
  for (let at = from; at < events.length; at++) {
    const e = events[at] as RecordedEvent;
    const d = (e.data ?? {}) as Data;
    const name = e.name;
    const deliveryActor = idOf(d["deliveryActor"]);
    const deliveryId = idOf(d["deliveryId"]);
    const messageId = idOf(d["messageId"]);
    const exchangeId = idOf(d["exchangeId"]);
    if (deliveryActor !== undefined) push(lists.byActor, deliveryActor, at);
    if (exchangeId !== undefined) push(lists.byExchange, exchangeId, at);
    switch (name) {
      case "machine.started": {
        const actor = d["deliveryActor"];
        if (typeof actor === "string" && !lists.actorSeen.has(actor)) {
          lists.actorSeen.add(actor);
          lists.actors.push({ actor, at, messageId: typeof d["messageId"] === "string" ? d["messageId"] : undefined });
        }
        // The outcomes read the recipients an actor took: an address rejected at submission had no attempt.
        push(lists.outcomeFacts, messageOfActor(String(actor ?? "")), at);
        break;
      }
      case "message.submitted": {
        const id = typeof d["messageId"] === "string" ? d["messageId"] : "";
        if (!lists.messageSeen.has(id)) {
          lists.messageSeen.add(id);
          lists.messages.push({ messageId: id, at });
        }
        push(lists.outcomeFacts, id, at);
        break;
      }
      case "recipient.outcome":
      case "smtp.handoff":
      case "dsn.sent":
        push(lists.outcomeFacts, typeof d["messageId"] === "string" ? d["messageId"] : "", at);
        if (name === "recipient.outcome" && typeof d["messageId"] === "string") {
          push(lists.outcomesByMessage, d["messageId"], at);
        }
        break;
      case "timer.fired":
        push(lists.outcomeFacts, messageOfActor(String(d["deliveryActor"] ?? "")), at);
        break;
      case "attempt.started":
        push(lists.outcomeFacts, messageOfActor(actorOfDelivery(String(d["deliveryId"] ?? ""))), at);
        break;
      default:
        break;
    }
    // The sequence diagram's reading (sequence.ts): the actor an event sets as the last active in its
    // domain, and the actor its wire events then belong to.
    const rawActor = d["deliveryActor"];
    const own =
      typeof rawActor === "string" ? rawActor : deliveryId !== undefined ? actorOfDelivery(deliveryId) : undefined;
    if (own && e.domain && name !== "recipient.result" && name !== "recipient.outcome") {
      lists.domainActor.set(e.domain, own);
      push(lists.wire, own, at);
    }
    const lookupFor = receiverLookup(lists.handling, e);
    const ownersOf = (x: string | undefined) => (x === undefined ? undefined : lists.exchangeOwners.get(x));
    switch (name) {
      case "dns.query":
      case "dns.answer":
      case "http.request": {
        if (lookupFor !== undefined) {
          // A receiver's key lookup for a request: it belongs to whoever made the request.
          for (const owner of ownersOf(lookupFor) ?? []) push(lists.wire, owner, at);
          break;
        }
        const current = e.domain ? lists.domainActor.get(e.domain) : undefined;
        if (current === undefined) break;
        push(lists.wire, current, at);
        if (name === "http.request" && exchangeId !== undefined) {
          const owners = lists.exchangeOwners.get(exchangeId);
          if (owners === undefined) lists.exchangeOwners.set(exchangeId, new Set([current]));
          else owners.add(current);
        }
        break;
      }
      case "http.response":
      case "http.failure":
      case "receiver.request":
      case "receiver.response":
      case "mailbox.delivered":
      case "failure.after-acceptance": {
        // A failure after acceptance names the mailbox, not the request: the one that stored the message there.
        const mailbox = idOf(d["mailbox"])?.toLowerCase();
        const owners =
          ownersOf(exchangeId) ??
          (name === "failure.after-acceptance" && mailbox ? lists.mailboxOwners.get(mailbox) : undefined);
        if (name === "mailbox.delivered" && mailbox) lists.mailboxOwners.set(mailbox, owners ?? new Set());
        for (const owner of owners ?? []) push(lists.wire, owner, at);
        break;
      }
      case "recipient.result":
        if (deliveryId !== undefined) push(lists.wire, actorOfDelivery(deliveryId), at);
        break;
      case "smtp.handoff":
      case "delivery.bounced":
      case "dsn.sent":
        if (messageId !== undefined) push(lists.wireByMessage, messageId, at);
        break;
      default:
        break;
    }
  }
  lists.events = events;
}

/** Whether `events` starts with every event of `seen` (the same objects). */
function extendsEvents(events: readonly RecordedEvent[], seen: readonly RecordedEvent[]): boolean {
  if (events.length < seen.length) return false;
  for (let i = seen.length - 1; i >= 0; i--) if (events[i] !== seen[i]) return false;
  return true;
}

/** The index of `events`: built once per array, extending the index of an array it continues. */
export function runIndexOf(events: readonly RecordedEvent[]): RunIndex {
  const known = versions.get(events);
  if (known !== undefined) return known;
  let lists: Lists | undefined;
  for (const version of latest) {
    const shared = version.lists;
    // Only the newest version of a run can be extended: its lists hold no event beyond it.
    if (shared.events.length === version.count && extendsEvents(events, shared.events)) {
      lists = shared;
      break;
    }
  }
  if (lists === undefined) lists = emptyLists();
  const from = lists.events.length;
  read(lists, events, from);
  const index: RunIndex = { events, count: events.length, lists };
  versions.set(events, index);
  latest = [index, ...latest.filter((v) => v.lists !== lists)].slice(0, LATEST);
  return index;
}

/** The positions in `list` below `count` (the list ascends). */
function upTo(list: readonly number[] | undefined, count: number): readonly number[] {
  if (list === undefined) return [];
  let n = list.length;
  while (n > 0 && (list[n - 1] as number) >= count) n--;
  return n === list.length ? list : list.slice(0, n);
}

/** The events at the positions of several ascending lists, in trace order, each once. */
function eventsAt(index: RunIndex, lists: readonly (readonly number[] | undefined)[]): RecordedEvent[] {
  const cut = lists.map((l) => upTo(l, index.count)).filter((l) => l.length > 0);
  const positions = cut.length === 1 ? (cut[0] as readonly number[]) : [...new Set(cut.flat())].sort((a, b) => a - b);
  return positions.map((p) => index.events[p] as RecordedEvent);
}

/** The delivery actors, in the order their machines started (`deliveryActors` of statechart.ts). */
export function actorsOf(index: RunIndex): string[] {
  const out: string[] = [];
  for (const a of index.lists.actors) {
    if (a.at >= index.count) break;
    out.push(a.actor);
  }
  return out;
}

/** The Message-IDs submitted, in order, each once (`messagesOf` of sequence.ts, with the empty id too). */
export function messageIdsOf(index: RunIndex): string[] {
  const out: string[] = [];
  for (const m of index.lists.messages) {
    if (m.at >= index.count) break;
    out.push(m.messageId);
  }
  return out;
}

/**
 * What the statechart of `actor` reads: the events whose `deliveryActor` is
 * the actor, and the `recipient.outcome` events of its message.
 */
export function actorEvents(index: RunIndex, actor: string): RecordedEvent[] {
  const started = index.lists.actors.find((a) => a.actor === actor && a.at < index.count);
  const messageId = started?.messageId;
  return eventsAt(index, [
    index.lists.byActor.get(actor),
    messageId === undefined ? undefined : index.lists.outcomesByMessage.get(messageId),
  ]);
}

/** The events of one exchange (`exchangeId`), in order. */
export function exchangeEvents(index: RunIndex, exchangeId: string): RecordedEvent[] {
  return eventsAt(index, [index.lists.byExchange.get(exchangeId)]);
}

/** The events a message's outcome rows read: its submission, outcomes, hand-offs, DSNs, attempts, timers. */
export function outcomeEvents(index: RunIndex, messageId: string): RecordedEvent[] {
  return eventsAt(index, [index.lists.outcomeFacts.get(messageId)]);
}

/** How many of the events {@link outcomeEvents} reads there are (a cache's key). */
export function outcomeEventCount(index: RunIndex, messageId: string): number {
  return upTo(index.lists.outcomeFacts.get(messageId), index.count).length;
}

/**
 * What the sequence diagram of `messageId` reads: the events of its delivery
 * actors (those that make an actor the last active in its domain), the DNS
 * queries and requests made while one of them was, the answers to those
 * requests and the receivers' handling of them (with the key lookups made
 * for them), the per-recipient results of its deliveries, its hand-offs,
 * bounces and DSNs — and the same of the DSNs that report on it. The diagram
 * of these events is the diagram of the whole run's (runIndex.test.ts checks
 * it on every bundled scenario).
 */
export function sequenceEvents(index: RunIndex, messageId: string): RecordedEvent[] {
  const lists: (readonly number[] | undefined)[] = [];
  // The message, and the DSNs that report on it (and theirs): their deliveries are part of its story.
  const messages = [messageId];
  for (let i = 0; i < messages.length; i++) {
    const id = messages[i] as string;
    const own = index.lists.wireByMessage.get(id);
    lists.push(own);
    for (const at of upTo(own, index.count)) {
      const e = index.events[at] as RecordedEvent;
      const dsn = dataOf(e, "dsn.sent")?.dsnMessageId || undefined;
      if (dsn !== undefined && !messages.includes(dsn)) messages.push(dsn);
    }
    const prefix = `${id}→`;
    for (const [actor, list] of index.lists.wire) if (actor.startsWith(prefix)) lists.push(list);
  }
  return eventsAt(index, lists);
}

/**
 * A model's cache for the run `index` belongs to (every version of its
 * events), by `model`: what a model keeps of one delivery or message between
 * batches, keyed and checked by the model itself.
 */
export function runCache<T>(index: RunIndex, model: string): Map<string, T> {
  let cache = index.lists.caches.get(model);
  if (cache === undefined) index.lists.caches.set(model, (cache = new Map()));
  return cache as Map<string, T>;
}

/**
 * The events a delivery actor owns on the wire: its own events, and the DNS queries, requests, answers and
 * receivers' handling made while it was the last active in its domain (see {@link sequenceEvents}).
 */
export function wireEvents(index: RunIndex, actor: string): RecordedEvent[] {
  return eventsAt(index, [index.lists.wire.get(actor)]);
}
