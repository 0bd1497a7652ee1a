/**
 * A worker thread of `mailscope explore --workers K`: runs the lanes it is
 * given (app/explore/workerProtocol.ts) with the Node crypto provider the CLI
 * uses, and posts each run and the results to app/node/exploreWorkers.ts.
 */
import { parentPort, workerData } from "node:worker_threads";
import { serveLanes, type ExploreWorkerRequest } from "../explore/workerProtocol.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { nodeCryptoProvider } from "./nodeCrypto.ts";

useCryptoProvider(nodeCryptoProvider());
const port = parentPort;
if (port === null) throw new Error("app/node/exploreWorker.ts runs as a worker thread");
let stopped = false;
let waiting: ((lanes: readonly number[]) => void) | undefined;
port.on("message", (request: ExploreWorkerRequest) => {
  if (request.type === "stop") stopped = true;
  else if (request.type === "lanes") {
    waiting?.(request.lanes);
    waiting = undefined;
  }
});
await serveLanes(
  workerData as Extract<ExploreWorkerRequest, { type: "start" }>,
  (reply) => port.postMessage(reply),
  () => stopped,
  () =>
    new Promise((resolve) => {
      waiting = resolve;
    }),
);
