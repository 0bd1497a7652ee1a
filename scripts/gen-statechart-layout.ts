// Writes renderer/src/model/deliveryMachineLayout.json: ELK's layout of the delivery machine and the hash
// of the input it came from, which the app draws without running ELK on the page's thread.
//
//   node scripts/gen-statechart-layout.ts           write it
//   node scripts/gen-statechart-layout.ts --check   fail if it is not ELK's layout of the machine as it is
import { deliveryGraph } from "../renderer/src/model/statechart.ts";
import { elkInputHash, elkInputOf, runElk } from "../renderer/src/model/statechartLayout.ts";
import { writeGenerated } from "./generated.ts";

const input = elkInputOf(deliveryGraph());
const laid = await runElk(input);
writeGenerated(
  "renderer/src/model/deliveryMachineLayout.json",
  `${JSON.stringify({ inputSha256: elkInputHash(input), laid })}\n`,
  import.meta.url,
);
