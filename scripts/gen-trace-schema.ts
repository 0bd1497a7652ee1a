// Writes schemas/trace.schema.json from the trace's zod schema
// (app/trace/schema.ts), so that other tools can validate a trace file
// without Mailscope.
//
//   node scripts/gen-trace-schema.ts           write schemas/trace.schema.json
//   node scripts/gen-trace-schema.ts --check   fail if it is out of date
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { traceJsonSchema } from "../app/trace/schema.ts";

const target = fileURLToPath(new URL("../schemas/trace.schema.json", import.meta.url));
const text = `${JSON.stringify(traceJsonSchema(), null, 2)}\n`;

if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(target, "utf8");
  } catch {
    // a missing file is out of date
  }
  if (current !== text) {
    console.error("schemas/trace.schema.json is out of date: run `node scripts/gen-trace-schema.ts`.");
    process.exitCode = 1;
  }
} else {
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log("wrote schemas/trace.schema.json");
}
