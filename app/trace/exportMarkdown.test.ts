import { describe, expect, it } from "vitest";
import { runScenarioText } from "../sim/runScenario.ts";
import { evidenceText, explainOutcomes } from "./explain.ts";
import { redactTrace } from "./exportJson.ts";
import { exportMarkdown, reproduceCommand } from "./exportMarkdown.ts";
import { sampleTrace } from "./sampleTrace.ts";
import { sequenceMermaid, sequenceOfEvents } from "./sequence.ts";

const WHOLE_RUN = { fromMs: -Infinity, toMs: Infinity };
const START = sampleTrace().startedAtMs;

const library = import.meta.glob<string>("../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });

describe("Markdown bug report", () => {
  const report = exportMarkdown(sampleTrace());

  it("has a summary with seed, readings and counts, and flags failed checks", () => {
    expect(report).toMatch(/^# Mailscope run: sample\n/);
    expect(report).toContain("- **Seed:** `42`");
    expect(report).toContain("G16=jitter=off, fallback-window=3h (not the default)");
    expect(report).toContain("G7=enforced;");
    expect(report).toContain("HTTP exchanges: 3 (1 without an answer); DNS queries: 2; SMTP hand-offs: 1");
    expect(report).toContain("- **Checks:** 1 of 3 FAILED: `carol accepted`");
    expect(report).toContain("from 2026-01-01T00:00:00.000Z for 1 min 1 s");
  });

  it("has a per-recipient outcome table", () => {
    expect(report).toContain("| Recipient | Message | Outcome | Rule | At |");
    expect(report).toContain("| dave@c.example | <m1@a.example> | smtp | SVC-5 | +0:00:00.040 |");
    expect(report).toContain("| bob@b.example | <m1@a.example> | accepted | POST-11 | +0:01:00.660 |");
    expect(report).toContain("| carol@b.example | <m1@a.example> | rejected | ERR-17 | +0:01:00.660 |");
  });

  it("says why each recipient got its outcome, in the words of the app's Why panel, or that the trace does not say", async () => {
    const text = library["../../scenarios/rate-limited-then-down.yaml"] ?? "";
    const run = await runScenarioText(text, { file: "scenarios/rate-limited-then-down.yaml" });
    if (!run.ok) throw new Error("the scenario does not load");
    const trace = run.run.trace;
    const md = exportMarkdown(trace);
    const section = /## Why\n\n([\s\S]*?)\n\n## /.exec(md)?.[1]?.split("\n") ?? [];
    const [bob] = explainOutcomes(trace.events, trace.startedAtMs);
    expect(section[0]).toBe("- `bob@b.example` of `m1@a.example`: bounced at +5d 0:00:00");
    expect(section.slice(1, 6)).toEqual(bob?.clauses.map((c, i) => `  ${i + 1}. ${c.text} (${evidenceText(c)})`));
    expect(md.indexOf("## Why")).toBeGreaterThan(md.indexOf("## Outcomes"));
    // The sample trace has outcomes but no delivery machine: it says so rather than guessing.
    expect(report).toContain("the trace does not say");
  });

  it("draws the run as the app's sequence view draws it, DNS lookups included, as a Mermaid sequence diagram", () => {
    const block = /```mermaid\n([\s\S]*?)\n```/.exec(report)?.[1] ?? "";
    expect(block).toBe(sequenceMermaid(sequenceOfEvents(sampleTrace().events, WHOLE_RUN, START), START));
    expect(block.split("\n")).toEqual([
      "sequenceDiagram",
      "  participant P1 as sender a.example",
      "  participant P2 as DNS",
      "  participant P3 as SMTP relay",
      "  participant P4 as mx.b.example:8443",
      "  P1->>P2: +0:00:00 SVCB _svc.b.example?",
      "  P2-->>P1: +0:00:00.020 _svc.b.example: mx.b.example",
      "  P1->>P2: +0:00:00.020 SVCB _svc.c.example?",
      "  P2-->>P1: +0:00:00.040 _svc.c.example: nxdomain",
      "  P1->>P3: +0:00:00.040 SMTP hand-off (no-service): dave@c.example [<m1@a.example>]",
      "  P1->>P4: +0:00:00.040 GET /v1/capabilities",
      "  P4-->>P1: +0:00:00.080 200",
      "  P1->>P4: +0:00:00.080 POST /v1/messages [d1]",
      "  P4--xP1: +0:00:00.120 connection-reset (fault 0:connection-reset)",
      "  P1->>P4: +0:01:00.120 POST /v1/messages [d1]",
      "  P4-->>P1: +0:01:00.160 200",
    ]);
  });

  it("AUTH-9, G4: a real run's diagram is the app's, the receiver's TXT lookup of the signing key included", async () => {
    const run = await runScenarioText(library["../../scenarios/teach-mixed-recipient-results.yaml"] ?? "", {
      file: "scenarios/teach-mixed-recipient-results.yaml",
    });
    if (!run.ok) throw new Error("the scenario does not load");
    const { trace } = run.run;
    const block = /```mermaid\n([\s\S]*?)\n```/.exec(exportMarkdown(trace))?.[1] ?? "";
    // The report draws the trace it holds: bodies redacted.
    const held = redactTrace(trace, { bodies: true });
    const drawn = sequenceOfEvents(held.events, WHOLE_RUN, held.startedAtMs);
    // Its first 150 rows (the default cap), then how many more there are.
    expect(block).toBe(
      `${sequenceMermaid({ ...drawn, rows: drawn.rows.slice(0, 150) }, held.startedAtMs)}\n  Note over P1: ${drawn.rows.length - 150} more rows not drawn`,
    );
    expect(block).toMatch(/P3->>P2: \S+ TXT s1\._svckey\.a\.example\?/);
  });

  it("caps the diagram and says how much it left out", () => {
    const short = exportMarkdown(sampleTrace(), { maxDiagramMessages: 2 });
    expect(short).toContain(
      "  P2-->>P1: +0:00:00.020 _svc.b.example: mx.b.example\n  Note over P1: 9 more rows not drawn\n```",
    );
  });

  it("includes the scenario text with private keys redacted, and the command that reproduces the run", () => {
    expect(report).toContain("## Scenario\n\n```yaml\nname: sample\n");
    expect(report).toContain("privateKey: [redacted]");
    expect(report).not.toContain("MC4CAQAwBQYDK2VwBCIEIJ");
    expect(report).toContain(
      "## Reproduce\n\n```sh\nmailscope run scenarios/sample.yaml --seed 42 --set G16=jitter=off,fallback-window=3h\n```",
    );
  });

  it("quotes what the shell would split, and names a file when the trace has none", () => {
    const trace = sampleTrace();
    const noFile = { ...trace, seed: "my seed", scenario: { name: "retry storm" }, readings: { G7: "ignored" } };
    expect(reproduceCommand(noFile)).toBe(
      "mailscope run 'scenarios/retry storm.yaml' --seed 'my seed' --set G7=ignored",
    );
    expect(reproduceCommand(noFile, "s.yaml")).toBe("mailscope run s.yaml --seed 'my seed' --set G7=ignored");
  });
});
