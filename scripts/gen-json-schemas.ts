// Writes schemas/protocol/*.schema.json from the zod schemas of the resources
// (app/protocol/resources.ts), so the published JSON Schemas are the ones the
// parsers check against. A schema cannot hold every rule: the 64-octet local
// part, minimal quoting, unique mailboxes and one domain in `to` are checked
// by the parsers only.
//
//   node scripts/gen-json-schemas.ts           write schemas/protocol/
//   node scripts/gen-json-schemas.ts --check   fail if a file is out of date
import { jsonSchemas } from "../app/protocol/resources.ts";
import { writeGenerated } from "./generated.ts";

for (const [name, schema] of Object.entries(jsonSchemas)) {
  writeGenerated(`schemas/protocol/${name}.schema.json`, `${JSON.stringify(schema, null, 2)}\n`, import.meta.url);
}
