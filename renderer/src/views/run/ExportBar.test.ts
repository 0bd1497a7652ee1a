/**
 * Every export of the run follows "with message bodies" — the trace, the HAR, the report and the
 * bug bundle (File ▸ Export in the desktop app goes through the same function) — and says what it left out.
 */
import { describe, expect, it } from "vitest";
import { EML_BYTES, EML_PATH } from "../../../../app/sim/testing.ts";
import { emlTraceWithBodies } from "../../../../app/sim/testingRuns.ts";
import { exportFile, exportNote, type ExportWhat } from "./ExportBar.tsx";

const BODY = "Hi Bob";

const recorded = emlTraceWithBodies;

const ALL: readonly ExportWhat[] = ["trace", "har", "report", "bundle"];

describe('the run\'s exports and the box "with message bodies" (POST-9)', () => {
  it("unticked: no export holds a message body, and each says what it left out", async () => {
    const trace = await recorded();
    expect(JSON.stringify(trace.events)).toContain(BODY);
    const notes: string[] = [];
    for (const what of ALL) {
      const file = await exportFile(trace, what, false, { [EML_PATH]: EML_BYTES });
      expect(file.contents, what).not.toContain(BODY);
      notes.push(exportNote(file, trace, what, false));
    }
    expect(notes).toEqual([
      'raw.mstrace: left out: message bodies and private keys. Tick "with message bodies" to keep them.',
      'raw.har: left out: message bodies and private keys. Tick "with message bodies" to keep them.',
      "raw.md: left out: message bodies (a report never holds them) and private keys.",
      'raw.msbundle: left out: message bodies and private keys. It carries the bytes of the scenario\'s eml: file (mail/hello.eml): its re-run needs them. Tick "with message bodies" to keep them.',
    ]);
    // Each file says it too, where it has room: the trace's redactions, the HAR's comment, the report's summary.
    const [json, har, report, bundle] = await Promise.all(ALL.map((what) => exportFile(trace, what, false)));
    expect(JSON.parse(json?.contents ?? "").redactions).toEqual(["bodies", "private-keys"]);
    expect(JSON.parse(har?.contents ?? "").log.comment).toContain("Left out: message bodies and private keys.");
    expect(report?.contents).toContain("- **Left out:** message bodies (a report never holds them) and private keys.");
    expect(JSON.parse(bundle?.contents ?? "").trace.redactions).toEqual(["bodies", "private-keys"]);
  });

  it("ticked: the trace, the HAR and the bundle keep the bodies; the report still holds none", async () => {
    const trace = await recorded();
    const kept = await Promise.all(
      ALL.map(async (what) => [what, (await exportFile(trace, what, true)).contents] as const),
    );
    expect(kept.filter(([, contents]) => contents.includes(BODY)).map(([what]) => what)).toEqual([
      "trace",
      "har",
      "bundle",
    ]);
    const har = await exportFile(trace, "har", true);
    expect(exportNote(har, trace, "har", true)).toBe("raw.har: left out: private keys (message bodies kept).");
  });
});
