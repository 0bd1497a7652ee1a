/** Locks on keys (the receiver's mailboxes): see {@link createLocks}. */
export interface Locks {
  /** Runs `fn` once every holder that claimed one of `keys` before has let go, holding `keys` while it runs. */
  with<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T>;
}

/**
 * Locks on mailboxes, so that the quota and rate checks and the store of one
 * delivery are not interleaved with another's for the same mailbox. All keys
 * of one holder are claimed in one synchronous step, and a holder waits only
 * for those that claimed before it, so no two holders can wait on each other.
 */
export function createLocks(): Locks {
  const tails = new Map<string, Promise<void>>();
  return {
    async with(keys, fn) {
      const unique = [...new Set(keys)];
      let release: () => void = () => {};
      const done = new Promise<void>((resolve) => {
        release = resolve;
      });
      const before: Promise<void>[] = [];
      for (const k of unique) {
        const tail = tails.get(k);
        if (tail !== undefined) before.push(tail);
        tails.set(k, done);
      }
      // Uncontended, the usual case: nothing to wait for.
      if (before.length > 0) await Promise.all(before);
      try {
        return await fn();
      } finally {
        release();
        for (const k of unique) if (tails.get(k) === done) tails.delete(k);
      }
    },
  };
}
