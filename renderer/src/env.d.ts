/** The package version, injected by Vite's `define`. */
declare const __MAILSCOPE_VERSION__: string;
/**
 * Of the WebWorker lib, which the renderer's DOM lib leaves out: the core's
 * worker guard (app/sim/mswGuard.ts) names it, and the renderer's tests
 * import the engine that loads it.
 */
declare const WorkerGlobalScope: { new (): object; readonly prototype: object };
/** Also of the WebWorker lib: the part of a worker's scope app/sim/worker.ts uses. */
interface DedicatedWorkerGlobalScope {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  addEventListener(type: "message", listener: (event: MessageEvent<unknown>) => void): void;
}
