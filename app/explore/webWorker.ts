/**
 * The Web Worker of the app's Explore view: runs lanes of an exploration off
 * the page (app/explore/workerProtocol.ts). Start it with
 * `new Worker(new URL("./webWorker.ts", import.meta.url), { type: "module" })`.
 */
import "../sim/mswGuard.ts"; // first: msw needs a localStorage stand-in in a worker
import { serveLanes, type ExploreWorkerReply, type ExploreWorkerRequest } from "./workerProtocol.ts";

declare const self: {
  onmessage: ((event: { data: ExploreWorkerRequest }) => void) | null;
  postMessage(message: ExploreWorkerReply): void;
};

let stopped = false;
let started = false;
self.onmessage = (event) => {
  const request = event.data;
  if (request.type === "stop") {
    stopped = true;
    return;
  }
  // The app deals all its lanes at the start: it sends no more (`lanes`).
  if (started || request.type !== "start") return;
  started = true;
  void serveLanes(
    request,
    (reply) => self.postMessage(reply),
    () => stopped,
  );
};
