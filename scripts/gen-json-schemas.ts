// Writes schemas/protocol/*.schema.json from the zod schemas of the resources
// (app/protocol/resources.ts), so the published JSON Schemas are the ones the
// parsers check against. A schema cannot hold every rule: the 64-octet local
// part, minimal quoting, unique mailboxes and one domain in `to` are checked
// by the parsers only.
//
//   node scripts/gen-json-schemas.ts           write schemas/protocol/
//   node scripts/gen-json-schemas.ts --check   fail if a file is out of date
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { jsonSchemas } from "../app/protocol/resources.ts";

const dir = fileURLToPath(new URL("../schemas/protocol/", import.meta.url));
const check = process.argv.includes("--check");

let stale = 0;
for (const [name, schema] of Object.entries(jsonSchemas)) {
  const file = `${dir}${name}.schema.json`;
  const text = `${JSON.stringify(schema, null, 2)}\n`;
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (check) {
    if (current !== text) {
      console.error(`schemas/protocol/${name}.schema.json is out of date: run node scripts/gen-json-schemas.ts`);
      stale += 1;
    }
    continue;
  }
  mkdirSync(dir, { recursive: true });
  if (current !== text) writeFileSync(file, text);
  console.log(`schemas/protocol/${name}.schema.json`);
}
if (stale > 0) process.exit(1);
