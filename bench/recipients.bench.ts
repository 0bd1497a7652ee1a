/**
 * Issue 16: what a request of 100,000 recipients (1.9 MB of envelope) costs
 * the receiver, against a delivery of 100 recipients, measured side by side
 * in one run. One such request with a bogus signature used to hold the
 * receiver for 103 s (every recipient compared with every other, before the
 * signature's verdict and before max_recipients).
 *
 * In process, `createReceiver` with the memory store, catch-all, the default
 * max_recipients of 100: rounds alternate one 100-recipient delivery (200,
 * every recipient stored) with one request of 100,000 recipients, signed
 * with the wrong key (401) or rightly (400, over max_recipients); each
 * request is built before it is timed, with a boundary and key of its own.
 * What is left of the big request's cost is what any body of its size costs:
 * reading and hashing it, and, once the signature has verified, splitting
 * it and `JSON.parse` of its envelope (max_recipients is then checked on the
 * length of `to`, before any recipient is read). Targets: at most 10 × the
 * 100-recipient delivery unauthenticated, 20 × authenticated (the JSON.parse
 * of 2 MB is most of it).
 */
import { chooseBoundary } from "../app/protocol/multipart.ts";
import { createMemoryMailStore } from "../app/receiver/memoryMailStore.ts";
import { createReceiver } from "../app/receiver/receiver.ts";
import { createManualClock, createTestSender, signedDelivery, textMessage } from "../app/receiver/testing.ts";
import type { Bench, BenchResult } from "./types.ts";

const ROUNDS = 15;
const MANY = 100_000;
const FEW = 100;
const TARGET_RATIO_BOGUS = 10;
const TARGET_RATIO_TOO_MANY = 20;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const recipients = (n: number): string[] => Array.from({ length: n }, (_, i) => `user${i}@b.example`);

async function run(): Promise<BenchResult[]> {
  const sender = await createTestSender("a.example");
  const mallory = await createTestSender("evil.example");
  const clock = createManualClock(Date.now());
  const receiver = createReceiver(
    {
      domains: ["b.example"],
      capabilities: { max_message_size: 26214400 },
      problem_base: "https://b.example/problems",
      catchAll: true,
      keyRecords: { [sender.keyid]: sender.keyRecord },
    },
    {
      clock,
      resolver: {
        svcb: () => Promise.resolve({ kind: "nxdomain" }),
        txt: () => Promise.resolve({ kind: "nxdomain" }),
      },
      mailStore: createMemoryMailStore(),
    },
  );
  const message = textMessage({ from: "alice@a.example", to: ["user0@b.example"] });
  let serial = 0;
  const build = (to: readonly string[], key: CryptoKey): Promise<Request> => {
    serial += 1;
    return signedDelivery({
      from: "alice@a.example",
      to,
      message,
      key,
      keyid: sender.keyid,
      createdS: clock.nowS(),
      idempotencyKey: `bench-${serial}`,
      boundary: chooseBoundary(crypto.getRandomValues(new Uint8Array(24)), message),
    });
  };
  const few = recipients(FEW);
  const many = recipients(MANY);
  const manyBytes = (await (await build(many, sender.privateKey)).arrayBuffer()).byteLength;

  /** The milliseconds one request takes, answer read; its status must be `expected`. */
  const time = async (request: Request, expected: number): Promise<number> => {
    const started = performance.now();
    const response = await receiver(request);
    await response.arrayBuffer();
    const ms = performance.now() - started;
    if (response.status !== expected) throw new Error(`answered ${response.status}, not ${expected}`);
    return ms;
  };

  // Warm up every path, then alternate, so that a busy moment of the machine hits each side alike.
  for (let i = 0; i < 3; i++) {
    await time(await build(few, sender.privateKey), 200);
    await time(await build(many, mallory.privateKey), 401);
    await time(await build(many, sender.privateKey), 400);
  }
  const fewMs: number[] = [];
  const bogusMs: number[] = [];
  const tooManyMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    fewMs.push(await time(await build(few, sender.privateKey), 200));
    bogusMs.push(await time(await build(many, mallory.privateKey), 401));
    tooManyMs.push(await time(await build(many, sender.privateKey), 400));
  }
  const fewTime = median(fewMs);
  const bogusTime = median(bogusMs);
  const tooManyTime = median(tooManyMs);
  const how = `median of ${ROUNDS} rounds, one of each per round, in process, memory store`;
  const size = `${(manyBytes / 1e6).toFixed(1)} MB`;
  return [
    {
      name: `${FEW} recipients, valid signature → 200`,
      value: fewTime,
      unit: "ms/request",
      note: `${how}; every recipient checked and stored`,
    },
    {
      name: `${MANY.toLocaleString("en-US")} recipients, bogus signature → 401`,
      value: bogusTime,
      unit: "ms/request",
      note: `${size}; 103 s in issue 16's report, before the fix`,
    },
    {
      name: `${MANY.toLocaleString("en-US")} recipients, valid signature → 400`,
      value: tooManyTime,
      unit: "ms/request",
      note: `${size}; over max_recipients (100)`,
    },
    {
      name: `${MANY.toLocaleString("en-US")} recipients (bogus signature) vs ${FEW}`,
      value: bogusTime / fewTime,
      unit: "ratio",
      target: { op: "<=", value: TARGET_RATIO_BOGUS, label: `≤ ${TARGET_RATIO_BOGUS}` },
      note: "what is left: reading and hashing the body",
    },
    {
      name: `${MANY.toLocaleString("en-US")} recipients (valid, too many) vs ${FEW}`,
      value: tooManyTime / fewTime,
      unit: "ratio",
      target: { op: "<=", value: TARGET_RATIO_TOO_MANY, label: `≤ ${TARGET_RATIO_TOO_MANY}` },
      note: "reading, hashing, then the multipart split and JSON.parse; no recipient read",
    },
  ];
}

export const bench: Bench = {
  name: "recipients",
  description: "a request of 100,000 recipients against a delivery of 100, in process (issue 16)",
  run,
};

/** `node bench/recipients.bench.ts`: this bench alone, printed as `npm run bench` prints it. */
if (import.meta.main) {
  const { formatTable } = await import("./run.ts");
  console.log(formatTable((await run()).map((result) => ({ bench: "recipients", result }))));
}
