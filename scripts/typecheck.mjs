// Typechecks every TypeScript project of the repository, each with its own
// lib and types: the pure core sees no DOM and no Node, main/ sees Node and
// Electron, renderer/ sees the DOM.
//
// At most as many `tsc` run at once as the machine has cores (each takes
// ~500 MB; six at once on a 2-core machine only made each slower).
// `npm run typecheck -- renderer/tsconfig.json` checks the projects named.
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";

const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));
const all = [
  "app/tsconfig.json",
  "app/tsconfig.test.json",
  "tsconfig.json",
  "main/tsconfig.json",
  "renderer/tsconfig.json",
  "e2e/tsconfig.json",
];
const asked = process.argv.slice(2);
const unknown = asked.filter((project) => !all.includes(project));
if (unknown.length > 0) {
  console.error(`typecheck: no such project: ${unknown.join(", ")} (the projects: ${all.join(", ")})`);
  process.exit(2);
}
const projects = asked.length > 0 ? asked : all;

function check(project) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, "-p", project, "--pretty", "false"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ project, code, out }));
  });
}

const results = new Array(projects.length);
let next = 0;
async function lane() {
  while (next < projects.length) {
    const index = next++;
    results[index] = await check(projects[index]);
  }
}
const lanes = Math.max(1, Math.min(availableParallelism(), projects.length));
await Promise.all(Array.from({ length: lanes }, lane));

let failed = 0;
for (const { project, code, out } of results) {
  console.log(`${code === 0 ? "ok  " : "FAIL"} ${project}`);
  if (code !== 0) {
    failed++;
    process.stdout.write(out);
  }
}
process.exitCode = failed ? 1 : 0;
