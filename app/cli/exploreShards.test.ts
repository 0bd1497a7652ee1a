import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_SUFFIX } from "../trace/bundle.ts";

/**
 * `--shard i/n` in separate processes, then `explore merge`,
 * make the report one process makes, byte for byte — the report file, the
 * printed report, the shrunk violations and the gallery.
 */
const BIN = fileURLToPath(new URL("../../bin/mailscope.mjs", import.meta.url));
const run = promisify(execFile);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-shards-"));
  await writeFile(
    join(dir, "options.yaml"),
    "domains: { max: 2 }\nmessages: { max: 2 }\nrecipients: { max: 3 }\nnetworkFaults: { max: 2 }\nlanes: 8\nshrinkRuns: 30\n",
  );
  // A property some runs violate, so the merge has violations to pick and shrunk scenarios to write.
  await writeFile(
    join(dir, "properties.yaml"),
    "properties:\n  - id: none-rejected\n    description: no recipient is rejected\n    never: { outcome: rejected }\n",
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function mailscope(args: readonly string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [BIN, ...args], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number" || e.code === 2)
      throw new Error(`mailscope ${args.join(" ")}: ${e.stderr ?? String(error)}`, { cause: error });
    return { code: e.code, stdout: e.stdout ?? "" };
  }
}

async function tree(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const sub of ["", "violations", "gallery"]) {
    for (const name of (await readdir(join(folder, sub))).sort()) {
      if (name === "violations" || name === "gallery") continue;
      out[join(sub, name)] = await readFile(join(folder, sub, name), "utf8");
    }
  }
  return out;
}

describe("explore in 4 shards, in 4 processes, then merge", () => {
  // Six processes on a machine others share: the time limit ends a hang, it does not time the machine.
  it("is the one run's report, byte for byte", { timeout: 300_000 }, async () => {
    const common = [
      "explore",
      "--runs",
      "24",
      "--seed",
      "11",
      "--options",
      "options.yaml",
      "--properties",
      "properties.yaml",
      "--workers",
      "1",
      "--no-progress",
    ];
    const [whole, ...shards] = await Promise.all([
      mailscope([...common, "--out", "one"]),
      ...[1, 2, 3, 4].map((i) => mailscope([...common, "--shard", `${i}/4`, "--out", "shards"])),
    ]);
    expect(shards.map((s) => s?.stdout.split("\n")[0])).toEqual(
      [1, 2, 3, 4].map((i) => expect.stringMatching(new RegExp(`^shard ${i}/4: \\d+ runs`))),
    );
    const files = (await readdir(join(dir, "shards"))).filter((f) => f.startsWith("shard-")).sort();
    expect(files).toEqual(["shard-1-of-4.json", "shard-2-of-4.json", "shard-3-of-4.json", "shard-4-of-4.json"]);
    expect(whole?.stdout).toContain("VIOLATED none-rejected");
    // The merge writes where the one run wrote (the files name their own paths): nothing may change.
    const oneTree = await tree(join(dir, "one"));
    expect(Object.keys(oneTree)).toContain(join("violations", "none-rejected.yaml"));
    expect(Object.keys(oneTree)).toContain(join("violations", `none-rejected${BUNDLE_SUFFIX}`));
    const merged = await mailscope(["explore", "merge", ...files.map((f) => join("shards", f)), "--out", "one"]);
    expect(merged.code).toBe(whole?.code);
    expect(merged.stdout).toBe(whole?.stdout);
    expect(await tree(join(dir, "one"))).toEqual(oneTree);
  });
});
