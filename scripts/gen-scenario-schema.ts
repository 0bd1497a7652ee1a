// Writes schemas/scenario.schema.json from the scenario's zod schema
// (app/sim/scenario.ts), so that editors check scenario files as they are
// typed: put `# yaml-language-server: $schema=../schemas/scenario.schema.json`
// at the top of a scenario for VS Code's YAML extension.
//
//   node scripts/gen-scenario-schema.ts           write schemas/scenario.schema.json
//   node scripts/gen-scenario-schema.ts --check   fail if it is out of date
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { scenarioJsonSchema } from "../app/sim/scenario.ts";

const target = fileURLToPath(new URL("../schemas/scenario.schema.json", import.meta.url));
const text = `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`;

if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(target, "utf8");
  } catch {
    // a missing file is out of date
  }
  if (current !== text) {
    console.error("schemas/scenario.schema.json is out of date: run `node scripts/gen-scenario-schema.ts`.");
    process.exitCode = 1;
  }
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log("wrote schemas/scenario.schema.json");
}
