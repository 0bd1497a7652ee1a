/** The package version, injected by Vite's `define`. */
declare const __MAILSCOPE_VERSION__: string;
/**
 * Of the WebWorker lib, which the renderer's DOM lib leaves out: the core's
 * worker guard (app/sim/mswGuard.ts) names it, and the renderer's tests
 * import the engine that loads it.
 */
declare var WorkerGlobalScope: { new (): object; readonly prototype: object };
