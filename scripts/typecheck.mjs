// Typechecks every TypeScript project of the repository, each with its own
// lib and types: the pure core sees no DOM and no Node, main/ sees Node and
// Electron, renderer/ sees the DOM.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
const projects = [
  "app/tsconfig.json",
  "app/tsconfig.test.json",
  "tsconfig.json",
  "main/tsconfig.json",
  "renderer/tsconfig.json",
  "e2e/tsconfig.json",
];

const runs = projects.map(
  (project) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [tsc, "-p", project, "--pretty", "false"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("close", (code) => resolve({ project, code, out }));
    }),
);
let failed = 0;
for (const { project, code, out } of await Promise.all(runs)) {
  console.log(`${code === 0 ? "ok  " : "FAIL"} ${project}`);
  if (code !== 0) {
    failed++;
    process.stdout.write(out);
  }
}
process.exitCode = failed ? 1 : 0;
