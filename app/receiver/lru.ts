/** A map of at most `capacity` entries that forgets the least recently used one first (the receiver's key caches). */
export interface Lru<K, V> {
  /** The value of `key`, which becomes the most recently used. */
  get(key: K): V | undefined;
  /** The value of `key`, its place left as it is. */
  peek(key: K): V | undefined;
  set(key: K, value: V): void;
  delete(key: K): void;
}

/** A {@link Lru} of at most `capacity` entries. */
export function createLru<K, V>(capacity: number): Lru<K, V> {
  const entries = new Map<K, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        // Map keeps insertion order: moved to the end, it is the most recently used.
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    peek: (key) => entries.get(key),
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > capacity) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
    },
    delete(key) {
      entries.delete(key);
    },
  };
}
