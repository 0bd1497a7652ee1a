// Writes schemas/scenario.schema.json from the scenario's zod schema
// (app/sim/scenario.ts), so that editors check scenario files as they are
// typed: put `# yaml-language-server: $schema=../schemas/scenario.schema.json`
// at the top of a scenario for VS Code's YAML extension.
//
//   node scripts/gen-scenario-schema.ts           write schemas/scenario.schema.json
//   node scripts/gen-scenario-schema.ts --check   fail if it is out of date
import { scenarioJsonSchema } from "../app/sim/scenario.ts";
import { writeGenerated } from "./generated.ts";

writeGenerated("schemas/scenario.schema.json", `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`, import.meta.url);
