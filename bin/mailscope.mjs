#!/usr/bin/env node
// The `mailscope` command. Written to run on any Node (even the machine's old
// one): it starts the TypeScript CLI (app/cli/main.ts) under a Node that can
// strip types — this one when new enough, else the project's pinned Node from
// tools/node, fetched on first use.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = join(root, "app", "cli", "main.ts");
const [major, minor] = process.versions.node.split(".").map(Number);
// Type stripping is on by default from Node 22.18 and 23.6.
const canStripTypes = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);

if (canStripTypes) {
  const { main } = await import(pathToFileURL(entry).href);
  process.exitCode = await main(process.argv.slice(2));
} else {
  const arch = process.arch === "x64" ? "x64" : process.arch;
  const pinned = join(root, "tools", "node", "node_modules", `node-${process.platform}-${arch}`, "bin", "node");
  if (!existsSync(pinned)) {
    const setup = spawnSync("bash", ["-c", `source "${join(root, "scripts", "env.sh")}"`], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (setup.status !== 0 || !existsSync(pinned)) {
      console.error(
        `mailscope: needs Node.js 22.18 or newer (this is ${process.version}); run \`npm test\` or \`npm start\` once to set up the pinned Node.`,
      );
      process.exit(1);
    }
  }
  const run = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(run.status ?? 1);
}
