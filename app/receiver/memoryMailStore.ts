/**
 * The simulator's Mail store (ARCHITECTURE.md "Ports"): mailboxes in memory,
 * each message kept byte for byte (POST-9, POST-10: DKIM signatures inside
 * survive because nothing is changed). Quotas are the receiver's business;
 * the store only says how much a mailbox holds.
 */
import type { MailStore } from "../ports.ts";

/** One stored message. */
export interface StoredMessage {
  readonly mailbox: string;
  /** The message exactly as received: the bytes the receiver handed over (the port's contract: nobody changes them). */
  readonly message: Uint8Array;
  readonly deliveryId: string;
  readonly receivedAtMs: number;
}

/** The in-memory store, with ways to look inside for tests, invariants and the UI. */
export interface MemoryMailStore extends MailStore {
  /** The messages of one mailbox, oldest first. */
  messages(mailbox: string): readonly StoredMessage[];
  /** Every stored message, in the order stored. */
  all(): readonly StoredMessage[];
}

/** What {@link createMemoryMailStore} may be told. */
export interface MemoryMailStoreOptions {
  /** Mailboxes whose deliveries the store refuses (a storage failure). */
  readonly failFor?: readonly string[];
  /**
   * Keep each message (default true). False: the store counts what each
   * mailbox holds (messages and bytes, for quotas) and keeps no message, so
   * `messages` and `all` are empty; a simulation whose trace already says
   * what was delivered need not hold every message it delivered.
   */
  readonly keepMessages?: boolean;
}

/**
 * An in-memory {@link MailStore}. `failFor` names mailboxes whose deliveries
 * the store refuses (a storage failure), so a test or scenario can show the
 * receiver answering `temporary_failure` for that recipient.
 */
export function createMemoryMailStore(options: MemoryMailStoreOptions = {}): MemoryMailStore {
  const byMailbox = new Map<string, StoredMessage[]>();
  const everything: StoredMessage[] = [];
  const sizes = new Map<string, { messages: number; bytes: number }>();
  const failing = new Set(options.failFor ?? []);
  const keep = options.keepMessages ?? true;
  return {
    deliver(mailbox, message, meta) {
      if (failing.has(mailbox)) return Promise.reject(new Error(`the store refuses deliveries to ${mailbox}`));
      const size = sizes.get(mailbox);
      if (size === undefined) sizes.set(mailbox, { messages: 1, bytes: message.length });
      else {
        size.messages += 1;
        size.bytes += message.length;
      }
      if (!keep) return Promise.resolve();
      const stored: StoredMessage = {
        mailbox,
        message,
        deliveryId: meta.deliveryId,
        receivedAtMs: meta.receivedAtMs,
      };
      const list = byMailbox.get(mailbox);
      if (list === undefined) byMailbox.set(mailbox, [stored]);
      else list.push(stored);
      everything.push(stored);
      return Promise.resolve();
    },
    usage(mailbox) {
      const size = sizes.get(mailbox);
      return Promise.resolve({ messages: size?.messages ?? 0, bytes: size?.bytes ?? 0 });
    },
    messages: (mailbox) => [...(byMailbox.get(mailbox) ?? [])],
    all: () => [...everything],
  };
}
