import { describe, expect, it } from "vitest";
import { probeCases, selectCases } from "./cases.ts";
import { runProbe, type ProbeRun } from "./probe.ts";
import { inProcessProbe, MISBEHAVIOURS, type Misbehaviour } from "./testing.ts";

async function probe(kind?: Misbehaviour): Promise<ProbeRun> {
  const { options, ports } = await inProcessProbe(kind);
  return runProbe(options, ports);
}

const resultsOf = (run: ProbeRun): Record<string, string> =>
  Object.fromEntries(run.verdicts.map((v) => [v.id, v.result]));

describe("mailscope probe against a receiver with switchable misbehaviours", () => {
  let baseline: Record<string, string> | undefined;
  const base = async (): Promise<Record<string, string>> => (baseline ??= resultsOf(await probe()));

  it("POST-11, AUTH-5: against the receiver that follows the spec every MUST and SHOULD case passes", async () => {
    const run = await probe();
    const results = resultsOf(run);
    expect(Object.keys(results)).toEqual(probeCases.map((c) => c.id));
    const notPassed = run.verdicts.filter((v) => v.result !== "PASS").map((v) => `${v.id}: ${v.result} ${v.why ?? ""}`);
    // retry-after is skipped: a receiver that follows the spec answers no 429 or 503 to the probe.
    expect(notPassed).toEqual([expect.stringMatching(/^retry-after: SKIP no 429 or 503/)]);
    expect(run.exitCode).toBe(0);
    baseline = results;
  }, 60_000);

  for (const [kind, { breaks, what }] of Object.entries(MISBEHAVIOURS) as [
    Misbehaviour,
    (typeof MISBEHAVIOURS)[Misbehaviour],
  ][]) {
    const rules = breaks.map((id) => probeCases.find((c) => c.id === id)?.rule).join(", ");
    it(`${rules}: ${what} is caught by ${breaks.join(", ")}, and no other case changes`, async () => {
      const before = await base();
      const after = resultsOf(await probe(kind));
      const changed = Object.keys(before).filter((id) => before[id] !== after[id]);
      expect(changed.sort()).toEqual([...breaks].sort());
      for (const id of breaks) expect(after[id], id).toBe("FAIL");
    }, 60_000);
  }
});

describe("selectCases: --only and --skip by case id, rule ID or prefix", () => {
  it("AUTH-5: a rule ID selects every case citing it; a prefix a whole section", () => {
    expect(selectCases(["AUTH-5"], []).map((c) => c.id)).toContain("signature-stale");
    expect(selectCases(["CAP"], []).every((c) => c.rules.some((r) => r.startsWith("CAP-")))).toBe(true);
    expect(selectCases([], ["tls13", "CAP"]).some((c) => c.id === "tls13" || c.rule.startsWith("CAP-"))).toBe(false);
  });
});
