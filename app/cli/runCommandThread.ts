/**
 * The thread `mailscope run` and `check` run a large scenario in
 * (app/cli/runCommand.ts, decision 0130): `runCommandAction` or
 * `checkCommandAction` with the Node crypto provider the CLI uses, its stdout
 * lines posted in batches and each stderr line at once (after the stdout
 * lines before it), then its exit code.
 */
import { parentPort, workerData } from "node:worker_threads";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { nodeCryptoProvider } from "../node/nodeCrypto.ts";
import type { CliIo } from "./io.ts";
import type { RunThreadData, RunThreadMessage } from "./runCommand.ts";

/** Stdout lines posted together: one message a line would cost a fleet's timeline seconds. */
const OUT_BATCH = 512;

const port = parentPort;
if (port === null) throw new Error("app/cli/runCommandThread.ts runs as a worker thread");
const post = (message: RunThreadMessage): void => port.postMessage(message);
const data = workerData as RunThreadData;
let pending: string[] = [];
const flush = (): void => {
  if (pending.length === 0) return;
  post({ out: pending });
  pending = [];
};
const io: CliIo = {
  out: (text) => {
    pending.push(text);
    if (pending.length >= OUT_BATCH) flush();
  },
  err: (text) => {
    flush();
    post({ err: text });
  },
  now: () => performance.now(),
  errIsTty: data.errIsTty,
};

useCryptoProvider(nodeCryptoProvider());
try {
  const code =
    data.command === "run"
      ? await (await import("./run.ts")).runCommandAction(data.file, data.options, io)
      : await (await import("./check.ts")).checkCommandAction(data.paths, data.options, io);
  flush();
  post({ exit: code });
} catch (error) {
  flush();
  post({ failed: (error as Error).message });
}
