/**
 * A micro-benchmark of the .eml Mail store alone (not part of `npm run
 * bench`): 3000 messages of 10 KB, 8 deliveries in flight, spread over 64
 * mailboxes (as the serve bench sends them), with fsync on and off, printing
 * the CPU (process.cpuUsage: the event loop and the thread pool) and the wall
 * time per message. With `--usage`, each delivery is preceded by a `usage`
 * call, as the receiver does for a mailbox with a quota.
 *
 *   node bench/lib/emlStoreMicro.ts [--usage] [--messages N] [--rounds N] [--root DIR] [store module…]
 *
 * The store module defaults to app/node/emlStore.ts; pass several (a copy of
 * an older version, say) to compare them: each round measures each of them
 * in turn. The mail goes under a new folder in DIR (default: the system's
 * temporary folder), removed only at the end.
 *
 * Why only at the end: on ext4 without a journal (as on the dev VM), making a
 * file skips every inode of its block group freed in the last one to six
 * minutes, looking each one up (`recently_deleted` in fs/ext4/ialloc.c), so
 * after a clean-up of thousands of files `open` costs hundreds of µs of
 * system CPU instead of ~15, for any store. Runs a few minutes apart from
 * anything that deleted many files on the same disk (another run's clean-up,
 * a test run) are the ones to trust; the probe line printed first tells, and
 * `--root /dev/shm` (tmpfs: no such cost, but no disk wait in fsync either)
 * shows the store's own cost.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { EmlStore, EmlStoreOptions } from "../../app/node/emlStore.ts";
import { fileCreationProbe } from "./fileProbe.ts";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const valued = ["--messages", "--rounds", "--root"];
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const withUsage = args.includes("--usage");
const total = Number(option("--messages") ?? 3000);
const rounds = Number(option("--rounds") ?? 1);
const parent = resolve(option("--root") ?? tmpdir());
const modulePaths = args.filter((a, i) => !a.startsWith("--") && !valued.includes(args[i - 1] ?? ""));
const storeModules = (modulePaths.length > 0 ? modulePaths : [join(here, "../../app/node/emlStore.ts")]).map((p) =>
  resolve(p),
);

type CreateEmlStore = (root: string, options?: EmlStoreOptions) => EmlStore;

const MAILBOXES = 64;
const IN_FLIGHT = 8;
const body = new Uint8Array(10_000).fill(0x61);

/** Delivers `count` messages, IN_FLIGHT at a time, round robin over the mailboxes. */
async function run(store: EmlStore, count: number, offset: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const mailbox = `user${(offset + i) % MAILBOXES}@example.net`;
      if (withUsage) await store.usage(mailbox);
      await store.deliver(mailbox, body, { deliveryId: `d${offset + i}`, receivedAtMs: Date.now() });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

async function measure(
  createEmlStore: CreateEmlStore,
  root: string,
  fsync: boolean,
): Promise<{ cpuUs: number; wallUs: number }> {
  const store = createEmlStore(root, { fsync });
  // Warm up: the folders exist, the code is compiled, the counts are kept.
  await run(store, 256, 0);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run(store, total, 256);
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / total, wallUs: (wallMs * 1000) / total };
}

const stores: [string, CreateEmlStore][] = [];
for (const path of storeModules) {
  const module = (await import(pathToFileURL(path).href)) as { createEmlStore: CreateEmlStore };
  stores.push([path, module.createEmlStore]);
}

const top = await mkdtemp(join(parent, "mailscope-eml-micro-"));
try {
  console.log(
    `${total} × 10 KB, ${IN_FLIGHT} in flight, ${MAILBOXES} mailboxes${withUsage ? ", usage before each" : ""}, under ${top}`,
  );
  let n = 0;
  for (let round = 1; round <= rounds; round++) {
    for (const [path, createEmlStore] of stores) {
      console.log(
        `${path} (round ${round}): probe ${fileCreationProbe(join(top, `probe${++n}`)).toFixed(0)} µs CPU/empty file`,
      );
      for (const fsync of [true, false]) {
        const { cpuUs, wallUs } = await measure(
          createEmlStore,
          join(top, `run${n}-${fsync ? "fsync" : "nofsync"}`),
          fsync,
        );
        console.log(
          `  fsync ${fsync ? "on " : "off"}: ${cpuUs.toFixed(0).padStart(5)} µs CPU/message  ${wallUs.toFixed(0).padStart(5)} µs wall/message`,
        );
      }
    }
  }
} finally {
  await rm(top, { recursive: true, force: true });
}
