// Part of the lint step of `npm test`: @doyensec/electronegativity's Electron security checks over
// the app's sources (main/ and renderer/), held to zero findings. Each exception is written, with
// its reason, in electronegativity.json; an exception that no longer matches a finding fails too,
// so the list never outlives its reasons.
//
//   node scripts/electronegativity.mjs [--config electronegativity.json]   (inputs are relative to the config's folder)
//
// Offline by design: electronegativity asks the network for translations and for Electron's
// release list. Its HTTP client is replaced here by one that fails at once (it falls back to the
// bundled English), and the release-list check is excluded in the config (see its reason).
// Electronegativity is driven through its API: its command line needs a commander it does not
// declare (it finds this project's, of another major version).
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const flag = process.argv.indexOf("--config");
const configPath = resolve(flag >= 0 ? (process.argv[flag + 1] ?? "") : join(root, "electronegativity.json"));
const config = JSON.parse(readFileSync(configPath, "utf8"));
const base = dirname(configPath);
const require = createRequire(join(root, "node_modules/@doyensec/electronegativity/package.json"));

// No network: every request of electronegativity fails at once.
const offline = () => Promise.reject(new Error("offline: mailscope runs electronegativity without the network"));
require.cache[require.resolve("got")] = {
  id: "got",
  filename: require.resolve("got"),
  loaded: true,
  exports: Object.assign(offline, { default: offline }),
};
const run = require("@doyensec/electronegativity");

const electronVersion = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies.electron;
const excluded = Object.keys(config.excludedChecks ?? {});
const exceptions = config.exceptions ?? [];
const used = new Set();
const findings = [];
const problems = [];

// One scan of all inputs together (its global checks look across files: the navigation limits are
// in main/, the page in renderer/), copied without tests, which are not shipped.
const scanned = mkdtempSync(join(tmpdir(), "mailscope-electronegativity-"));
for (const input of config.inputs)
  cpSync(join(base, input), join(scanned, input), {
    recursive: true,
    filter: (src) => !/\.test\.tsx?$/.test(src) && !src.includes("node_modules"),
  });

const quiet = console.log;
console.log = () => undefined; // its note on translations it could not fetch
let result;
try {
  result = await run({
    input: scanned,
    electronVersionOverride: electronVersion,
    excludeFromScan: excluded,
    parserPlugins: [],
  });
} finally {
  console.log = quiet;
  rmSync(scanned, { recursive: true, force: true });
}
for (const e of result.errors) problems.push(`${relative(scanned, e.file)}: cannot be read: ${e.message}`);
for (const issue of result.issues) {
  const file = issue.file === "N/A" ? "N/A" : relative(scanned, issue.file);
  const at = `${file}:${issue.location.line}:${issue.location.column}`;
  const index = exceptions.findIndex((x) => x.check === issue.id && x.file === file);
  if (index >= 0) used.add(index);
  else
    findings.push(
      `${at}: ${issue.id} (${issue.severity.name}, ${issue.confidence.name}${issue.manualReview ? ", review" : ""}): ${issue.description} ${issue.shortenedURL ?? ""}`.trim(),
    );
}
exceptions.forEach((x, i) => {
  if (!x.why) problems.push(`${relative(root, configPath)}: exception ${x.check} in ${x.file} gives no reason (why)`);
  if (!used.has(i))
    problems.push(
      `${relative(root, configPath)}: exception ${x.check} in ${x.file} matches no finding any more: remove it`,
    );
});
for (const [check, why] of Object.entries(config.excludedChecks ?? {}))
  if (!why) problems.push(`${relative(root, configPath)}: excluded check ${check} gives no reason`);

for (const line of [...findings, ...problems]) console.error(line);
const checked = `${config.inputs.join(", ")}, Electron ${electronVersion}`;
if (findings.length + problems.length > 0) {
  console.error(`electronegativity: ${findings.length} finding(s), ${problems.length} problem(s) (${checked})`);
  process.exitCode = 1;
} else {
  console.log(`electronegativity: no findings (${checked}; ${exceptions.length} explained exception(s))`);
}
