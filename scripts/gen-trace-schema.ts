// Writes schemas/trace.schema.json from the trace's zod schema
// (app/trace/schema.ts), so that other tools can validate a trace file
// without Mailscope.
//
//   node scripts/gen-trace-schema.ts           write schemas/trace.schema.json
//   node scripts/gen-trace-schema.ts --check   fail if it is out of date
import { traceJsonSchema } from "../app/trace/schema.ts";
import { writeGenerated } from "./generated.ts";

writeGenerated("schemas/trace.schema.json", `${JSON.stringify(traceJsonSchema(), null, 2)}\n`, import.meta.url);
