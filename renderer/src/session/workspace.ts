/**
 * The workspace machine (XState 5), beside the playback machine: what the
 * window shows. Its states are the document open — nothing, a scenario's
 * run, an opened trace, a bug bundle (its trace, with the bundle's panel), a
 * probe's report, or a file that could not be opened (its error, and nothing
 * of the file shown before, which the error would seem to be about) — and
 * its context the view on screen, the Compare and Sweep views' starting
 * points, and the error said above the views. The playback machine plays the
 * run a document has; the App draws both (docs/decisions/0140-app-state.md).
 */
import { assign, setup } from "xstate";
import type { Bundle } from "../../../app/trace/bundle.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import type { CompareBase, CompareSide } from "../model/compare.ts";

/** The views of the window. */
export type View = "run" | "rules" | "editor" | "compare" | "explore" | "probe" | "sweep";

export interface WorkspaceContext {
  readonly view: View;
  /** What went wrong last (a file that could not be read, a save that failed), until the next file opens. */
  readonly error: string | undefined;
  /** The bug bundle open, shown above its run. */
  readonly bundle: { readonly bundle: Bundle; readonly file: string } | undefined;
  /** A probe's trace or report (`mailscope probe`): its cases. Stays, with its view, while other files open. */
  readonly probe: { readonly file: string; readonly trace: Trace } | undefined;
  /** The run Compare forks, and the two sides it was given (a sweep's boundary) if any. */
  readonly compare:
    { readonly base: CompareBase; readonly preset?: readonly [CompareSide, CompareSide] | undefined } | undefined;
  /** The scenario the Sweep view sweeps; the view stays mounted with its results while others show. */
  readonly sweep: CompareBase | undefined;
  /** The Explore view, once opened, stays mounted (hidden) so that an exploration goes on while a run shows. */
  readonly exploring: boolean;
}

export type WorkspaceEvent =
  | { readonly type: "SHOW"; readonly view: View }
  /** A scenario's run starts (from the library, a file, the editor, a sweep's point). */
  | { readonly type: "OPEN_SCENARIO" }
  | { readonly type: "OPEN_TRACE" }
  | { readonly type: "OPEN_BUNDLE"; readonly bundle: Bundle; readonly file: string }
  | { readonly type: "OPEN_PROBE"; readonly file: string; readonly trace: Trace }
  /** A file that could not be opened, and why. */
  | { readonly type: "CANNOT_OPEN"; readonly message: string }
  /** Something else went wrong (the open run stays). */
  | { readonly type: "FAIL"; readonly message: string }
  | { readonly type: "COMPARE"; readonly base: CompareBase }
  | { readonly type: "SWEEP"; readonly base: CompareBase }
  /** Compare of a sweep boundary's two sides. */
  | { readonly type: "BOUNDARY"; readonly sides: readonly [CompareSide, CompareSide] }
  /** Compare's Back: to the sweep it came from, else the run. */
  | { readonly type: "BACK" };

const opened = { error: undefined, bundle: undefined, view: "run" } as const;

export const workspaceMachine = setup({
  types: { context: {} as WorkspaceContext, events: {} as WorkspaceEvent },
  actions: {
    show: assign(({ context, event }) =>
      event.type === "SHOW" ? { view: event.view, exploring: context.exploring || event.view === "explore" } : {},
    ),
  },
}).createMachine({
  id: "workspace",
  context: {
    view: "run",
    error: undefined,
    bundle: undefined,
    probe: undefined,
    compare: undefined,
    sweep: undefined,
    exploring: false,
  },
  initial: "empty",
  on: {
    SHOW: { actions: "show" },
    OPEN_SCENARIO: { target: ".scenario", actions: assign(opened) },
    OPEN_TRACE: { target: ".trace", actions: assign(opened) },
    OPEN_BUNDLE: {
      target: ".bundle",
      actions: assign(({ event }) => ({ ...opened, bundle: { bundle: event.bundle, file: event.file } })),
    },
    // A probe's report shows in its own view; the run beneath stays as it was.
    OPEN_PROBE: {
      target: ".probe",
      actions: assign(({ event }) => ({
        error: undefined,
        probe: { file: event.file, trace: event.trace },
        view: "probe" as const,
      })),
    },
    CANNOT_OPEN: {
      target: ".failed",
      actions: assign(({ event }) => ({ error: event.message, bundle: undefined, view: "run" as const })),
    },
    FAIL: { actions: assign(({ event }) => ({ error: event.message })) },
    COMPARE: { actions: assign(({ event }) => ({ compare: { base: event.base }, view: "compare" as const })) },
    SWEEP: { actions: assign(({ event }) => ({ sweep: event.base, view: "sweep" as const })) },
    BOUNDARY: {
      actions: assign(({ context, event }) =>
        context.sweep === undefined
          ? {}
          : { compare: { base: context.sweep, preset: event.sides }, view: "compare" as const },
      ),
    },
    BACK: {
      actions: assign(({ context }) => ({ view: context.compare?.preset ? ("sweep" as const) : ("run" as const) })),
    },
  },
  states: {
    /** Nothing open yet: the welcome pane. */
    empty: {},
    scenario: {},
    trace: {},
    bundle: {},
    probe: {},
    /** A file that could not be opened: its error, nothing of the file before it. */
    failed: {},
  },
});

export type WorkspaceDocument = "empty" | "scenario" | "trace" | "bundle" | "probe" | "failed";
