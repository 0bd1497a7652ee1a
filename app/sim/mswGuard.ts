/**
 * Lets msw load inside a Web Worker, where the desktop app and the browser
 * run the simulation (ARCHITECTURE.md "Where things run").
 *
 * msw 3 builds a cookie store when its module is first evaluated, in every
 * runtime it does not take for Node (`lib/_chunks/cookie-store.js`:
 * `isNodeProcess() ? null : new CookieStore()`), and that constructor asserts
 * that `localStorage` exists. A dedicated worker has no `localStorage`, so a
 * bare `import "msw"` throws there. This module installs a small in-memory
 * stand-in first. It must be evaluated before msw: network.ts imports it
 * ahead of msw, and a worker entry that imports msw some other way should
 * import this module first.
 *
 * The stand-in only ever holds msw's own cookie jar. Our receivers set no
 * cookies and our requests carry no credentials, so nothing in a simulation
 * reads it; it exists so that the import does not throw.
 */

/** The part of the Web Storage API msw touches. */
interface StorageLike {
  readonly length: number;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
  clear(): void;
  key(index: number): string | null;
}

/** An in-memory Storage: nothing persists, nothing is shared. */
export function createMemoryStorage(): StorageLike {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    getItem: (key) => items.get(String(key)) ?? null,
    setItem: (key, value) => {
      items.set(String(key), String(value));
    },
    removeItem: (key) => {
      items.delete(String(key));
    },
    clear: () => {
      items.clear();
    },
    key: (index) => [...items.keys()][index] ?? null,
  };
}

/**
 * Installs the stand-in as `target.localStorage` when `target` is a worker
 * scope without one (or always, with `force`). Returns whether it installed.
 * Node is left alone: msw keeps no cookie store there.
 */
export function installLocalStorageStandIn(
  target: object = globalThis,
  options: { readonly force?: boolean } = {},
): boolean {
  const scope = target as { localStorage?: unknown };
  let present: boolean;
  try {
    present = scope.localStorage !== undefined && scope.localStorage !== null;
  } catch {
    // Some hosts throw on access (opaque origins); msw would then fail the same way.
    present = false;
  }
  if (present) return false;
  const inWorker = typeof WorkerGlobalScope !== "undefined" && target instanceof WorkerGlobalScope;
  if (!inWorker && options.force !== true) return false;
  Object.defineProperty(target, "localStorage", {
    value: createMemoryStorage(),
    configurable: true,
    writable: true,
    enumerable: false,
  });
  return true;
}

installLocalStorageStandIn();
