/**
 * What a worker running lanes of an exploration says and is told — the same
 * for Node's worker threads (`mailscope explore --workers K`,
 * app/node/exploreWorkers.ts) and the app's Web Workers (the Explore view,
 * app/explore/webWorker.ts). Lanes run one run at a time in a worker (two
 * runs interleaved in one realm would each hold the other's WebCrypto work:
 * app/sim/worker.ts), so K workers run K runs at once.
 *
 * A worker started with `more` asks for more work when its lanes are done:
 * its `done` reply is answered with `lanes` (run these too) or with `lanes: []`
 * (nothing more: it ends). An exploration of a fixed number of runs deals its
 * lanes this way, one at a time to whichever worker is free, so that the
 * workers end together however unequal the lanes' runs turn out.
 */
import { runLanes, type ExploreConfig, type LaneResult, type RunReport } from "./search.ts";

/** To a worker: run these lanes; run these too (`more` only); or stop after the runs under way. */
export type ExploreWorkerRequest =
  | {
      readonly type: "start";
      readonly config: ExploreConfig;
      readonly lanes: readonly number[];
      /** Ask for more lanes when these are done (`done`, answered by `lanes`). */
      readonly more?: boolean;
    }
  | { readonly type: "lanes"; readonly lanes: readonly number[] }
  | { readonly type: "stop" };

/** From a worker: each run as it ends, then the lanes' results (or why it could not go on). */
export type ExploreWorkerReply =
  | { readonly type: "run"; readonly report: RunReport }
  | { readonly type: "done"; readonly results: readonly LaneResult[] }
  | { readonly type: "error"; readonly message: string };

/**
 * A worker's side: runs `request`'s lanes, posting each run and the results;
 * `stopped` is read between runs. With `more`, each `done` is followed by
 * the lanes `nextLanes` gives, until it gives none. Never throws: a failure
 * is an `error` reply.
 */
export async function serveLanes(
  request: Extract<ExploreWorkerRequest, { type: "start" }>,
  post: (reply: ExploreWorkerReply) => void,
  stopped: () => boolean,
  nextLanes: () => Promise<readonly number[]> = () => Promise.resolve([]),
): Promise<void> {
  try {
    let lanes = request.lanes;
    while (lanes.length > 0) {
      const results = await runLanes(request.config, lanes, {
        onRun: (report) => post({ type: "run", report }),
        shouldStop: stopped,
      });
      post({ type: "done", results });
      lanes = request.more === true ? await nextLanes() : [];
    }
  } catch (error) {
    post({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
}
