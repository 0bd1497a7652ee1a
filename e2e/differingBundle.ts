/**
 * For the end-to-end tests and the README's pictures: a bug bundle of a run its scenario text does not make.
 * `mailscope run` bundles state-1-temporary-failure-retried, then the text is edited to say the receiver is
 * unavailable 3 times (the trace shows 2) and the hash recomputed, so that the bundle reads and its re-run
 * differs from its trace.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { canonicalJson } from "../app/trace/exportJson.ts";

/** Writes the bundle to `file`; returns the scenario text it holds. */
export function writeDifferingBundle(file: string): string {
  const cli = spawnSync(
    process.execPath,
    ["bin/mailscope.mjs", "run", "scenarios/state-1-temporary-failure-retried.yaml", "--bundle", file],
    { encoding: "utf8" },
  );
  if (cli.status !== 0) throw new Error(`mailscope run --bundle failed: ${cli.stderr}`);
  const doc = JSON.parse(readFileSync(file, "utf8")) as {
    scenario: { text: string };
    trace: { scenario: { source: string } };
    traceHash: string;
  };
  const text = doc.scenario.text.replace("times: 2", "times: 3");
  if (text === doc.scenario.text) throw new Error("the scenario no longer says times: 2");
  doc.scenario.text = text;
  doc.trace.scenario.source = text;
  doc.traceHash = createHash("sha256").update(canonicalJson(doc.trace)).digest("hex");
  writeFileSync(file, JSON.stringify(doc));
  return text;
}
