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

/**
 * An in-memory {@link MailStore}. `failFor` names mailboxes whose deliveries
 * the store refuses (a storage failure), so a test or scenario can show the
 * receiver answering `temporary_failure` for that recipient.
 */
export function createMemoryMailStore(options: { readonly failFor?: readonly string[] } = {}): MemoryMailStore {
  const byMailbox = new Map<string, StoredMessage[]>();
  const everything: StoredMessage[] = [];
  const failing = new Set(options.failFor ?? []);
  return {
    deliver(mailbox, message, meta) {
      if (failing.has(mailbox)) return Promise.reject(new Error(`the store refuses deliveries to ${mailbox}`));
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
      const list = byMailbox.get(mailbox) ?? [];
      return Promise.resolve({ messages: list.length, bytes: list.reduce((sum, m) => sum + m.message.length, 0) });
    },
    messages: (mailbox) => [...(byMailbox.get(mailbox) ?? [])],
    all: () => [...everything],
  };
}
