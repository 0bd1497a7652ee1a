/**
 * A worker thread of app/node/runPool.ts: runs the one-shot requests of
 * app/sim/worker.ts (`handleWorkerRequest`, the engine every run goes through)
 * one at a time, with the Node crypto provider the CLI uses, and posts each
 * reply back.
 */
import { parentPort } from "node:worker_threads";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { handleWorkerRequest, type WorkerRequest } from "../sim/worker.ts";
import { nodeCryptoProvider } from "./nodeCrypto.ts";

useCryptoProvider(nodeCryptoProvider());
const port = parentPort;
if (port === null) throw new Error("app/node/runPoolThread.ts runs as a worker thread");
// Loaded: the pool hands this thread work from now on (app/sim/runPool.ts's `ready`).
port.postMessage({ type: "ready" });
let chain = Promise.resolve();
port.on("message", (request: WorkerRequest) => {
  chain = chain.then(async () => port.postMessage(await handleWorkerRequest(request)));
});
