/**
 * The run's index moved to the core (app/trace/runIndex.ts), where the Markdown report's sequence diagram
 * reads it too; this re-export keeps the run view's import while its state moves out (#28 item 4).
 */
export * from "../../../app/trace/runIndex.ts";
