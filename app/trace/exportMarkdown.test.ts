import { describe, expect, it } from "vitest";
import { runScenarioText } from "../sim/runScenario.ts";
import { evidenceText, explainOutcomes } from "./explain.ts";
import { duration, exportMarkdown, reproduceCommand } from "./exportMarkdown.ts";
import { sampleTrace } from "./sampleTrace.ts";

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
    expect(report).toContain("from 2026-01-01T00:00:00.000Z for 1m");
  });

  it("has a per-recipient outcome table", () => {
    expect(report).toContain("| Recipient | Message | Outcome | Rule | At |");
    expect(report).toContain("| dave@c.example | <m1@a.example> | smtp | SVC-5 | +40ms |");
    expect(report).toContain("| bob@b.example | <m1@a.example> | accepted | POST-11 | +1m |");
    expect(report).toContain("| carol@b.example | <m1@a.example> | rejected | ERR-17 | +1m |");
  });

  it("says why each recipient got its outcome, in the words of the app's Why panel, or that the trace does not say", async () => {
    const text = library["../../scenarios/rate-limited-then-down.yaml"] ?? "";
    const run = await runScenarioText(text, { file: "scenarios/rate-limited-then-down.yaml" });
    if (!run.ok) throw new Error("the scenario does not load");
    const trace = run.run.trace;
    const md = exportMarkdown(trace);
    const section = /## Why\n\n([\s\S]*?)\n\n## /.exec(md)?.[1]?.split("\n") ?? [];
    const [bob] = explainOutcomes(trace.events, trace.startedAtMs);
    expect(section[0]).toBe("- `bob@b.example` of `m1@a.example`: bounced at +120:00:00");
    expect(section.slice(1, 6)).toEqual(bob?.clauses.map((c, i) => `  ${i + 1}. ${c.text} (${evidenceText(c)})`));
    expect(md.indexOf("## Why")).toBeGreaterThan(md.indexOf("## Outcomes"));
    // The sample trace has outcomes but no delivery machine: it says so rather than guessing.
    expect(report).toContain("the trace does not say");
  });

  it("draws the exchanges and hand-offs as a Mermaid sequence diagram", () => {
    const block = /```mermaid\n([\s\S]*?)\n```/.exec(report)?.[1] ?? "";
    expect(block.split("\n")).toEqual([
      "sequenceDiagram",
      "  participant P1 as a.example",
      "  participant P2 as SMTP",
      "  participant P3 as mx.b.example:8443",
      "  P1->>P2: [+40ms] hand-off (no-service), 1 recipient(s)",
      "  P1->>P3: [+40ms] GET /v1/capabilities",
      "  P3-->>P1: [+80ms] 200",
      "  P1->>P3: [+80ms] POST /v1/messages",
      "  P3--xP1: [+120ms] connection-reset",
      "  P1->>P3: [+1m] POST /v1/messages",
      "  P3-->>P1: [+1m] 200",
    ]);
  });

  it("caps the diagram and says how much it left out", () => {
    const short = exportMarkdown(sampleTrace(), { maxDiagramMessages: 2 });
    expect(short).toContain("  Note over P1: 5 more messages not drawn");
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

  it("writes durations compactly", () => {
    expect(
      [0, 250, 1000, 1500, 90_000, 3_600_000, 3_723_000, 5 * 86_400_000 + 3_600_000, 5 * 86_400_000].map(duration),
    ).toEqual(["0ms", "250ms", "1s", "1.5s", "1m30s", "1h", "1h02m03s", "5d01h", "5d"]);
  });
});
