import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUN_THREAD_RESOURCE_LIMITS, startRunThread } from "../node/runThread.ts";
import { runCommandAction } from "./run.ts";
import { checkCommandAction } from "./check.ts";
import { RUN_THREAD_MIN_BYTES, checkInThread, checksInThread, runInThread, runsInThread } from "./runCommand.ts";

/**
 * `mailscope run` runs a large scenario in a worker thread with a bounded
 * young generation (decision 0130): what it prints, writes and exits with is what
 * `runCommandAction` prints, writes and exits with on this thread.
 */
function capture() {
  const lines: string[] = [];
  return {
    io: { out: (l: string) => lines.push(`out ${l}`), err: (l: string) => lines.push(`err ${l}`) },
    lines,
  };
}

/** The lines without the run's wall time, the one thing that differs between two runs. */
const steady = (lines: readonly string[]): string[] => lines.map((l) => l.replace(/ in \d+\.\d\d s$/, " in … s"));

describe("mailscope run in its thread", { timeout: 60_000 }, () => {
  it("STATE-6: the same lines in the same order, the same exit code and the same trace bytes as on this thread", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-thread-"));
    const here = capture();
    const there = capture();
    const file = "scenarios/state-6-give-up-after-5-days.yaml";
    const options = { explain: true, progress: false };
    const codeHere = await runCommandAction(file, { ...options, trace: join(dir, "here.mstrace") }, here.io);
    const codeThere = await runInThread(file, { ...options, trace: join(dir, "there.mstrace") }, there.io);
    expect(codeThere).toBe(codeHere);
    expect(steady(there.lines).slice(0, -1)).toEqual(steady(here.lines).slice(0, -1));
    expect(there.lines.at(-1)).toBe(`out wrote trace ${join(dir, "there.mstrace")}`);
    expect(readFileSync(join(dir, "there.mstrace"))).toEqual(readFileSync(join(dir, "here.mstrace")));
  });

  it("a failed expectation: exit 1, the report on stdout, then the reproduce command on stderr", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-thread-"));
    const file = join(dir, "wrong.yaml");
    writeFileSync(
      file,
      "name: wrong\ndomains:\n  a.example: { mailboxes: [alice] }\n  b.example: { mailboxes: [bob] }\nmessages:\n  - { from: alice@a.example, to: bob@b.example }\nexpectations:\n  - { outcome: bounced }\n",
    );
    const { io, lines } = capture();
    expect(await runInThread(file, { seed: "abc" }, io)).toBe(1);
    expect(lines.at(-2)).toMatch(/^out FAILED: 1 of 8 checks failed/);
    expect(lines.at(-1)).toBe(`err reproduce: mailscope run ${file} --seed abc`);
  });

  it("bad input is exit 2 with the same lines: a scenario error, a bad --set, a missing file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-thread-"));
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "name: bad\ndomains:\n  a.example:\n    mailboxes: [alice]\n    G18: sometimes\n");
    for (const [scenario, options] of [
      [file, {}],
      ["scenarios/happy-path.yaml", { set: ["G7=bogus"] }],
      [join(dir, "missing.yaml"), {}],
    ] as const) {
      const here = capture();
      const there = capture();
      expect(await runCommandAction(scenario, options, here.io)).toBe(2);
      expect(await runInThread(scenario, options, there.io)).toBe(2);
      expect(there.lines).toEqual(here.lines);
      expect(there.lines.length).toBeGreaterThan(0);
    }
  });

  it("a large scenario file runs in the thread, a small one (every file of scenarios/) and a missing one here", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-run-thread-"));
    writeFileSync(join(dir, "large.yaml"), " ".repeat(RUN_THREAD_MIN_BYTES));
    writeFileSync(join(dir, "small.yaml"), " ".repeat(RUN_THREAD_MIN_BYTES - 1));
    expect(await runsInThread(join(dir, "large.yaml"))).toBe(true);
    expect(await runsInThread(join(dir, "small.yaml"))).toBe(false);
    expect(await runsInThread(join(dir, "missing.yaml"))).toBe(false);
    for (const file of readdirSync("scenarios")) expect(await runsInThread(join("scenarios", file))).toBe(false);
  });

  it("the thread is made with the bounded young generation", async () => {
    const thread = startRunThread(new URL("data:text/javascript,"), undefined);
    expect(thread.resourceLimits).toMatchObject(RUN_THREAD_RESOURCE_LIMITS);
    await thread.terminate();
  });

  it("STATE-6: check in the thread prints and writes what check prints and writes here (table, --json, JUnit, --coverage)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-check-thread-"));
    const broken = join(dir, "broken.yaml");
    writeFileSync(broken, "name: broken\ndomains:\n  a.example: { mailbox: [alice] }\n");
    const paths = ["scenarios/state-6-give-up-after-5-days.yaml", broken];
    // Wall times are the one thing that differs between two checks.
    const wall = (text: string): string =>
      text
        .replace(/\d+\.\d\d s\b/g, "… s")
        .replace(/"wallMs": [\d.e+-]+/g, '"wallMs": …')
        .replace(/time="[\d.]+"/g, 'time="…"');
    for (const options of [{ coverage: true }, { json: true, coverage: true }]) {
      const here = capture();
      const there = capture();
      const codeHere = await checkCommandAction(paths, { ...options, junit: join(dir, "here.xml") }, here.io);
      const codeThere = await checkInThread(paths, { ...options, junit: join(dir, "there.xml") }, there.io);
      expect(codeHere).toBe(1);
      expect(codeThere).toBe(codeHere);
      expect(there.lines.map(wall)).toEqual(here.lines.map(wall));
      // The located error of the bad scenario comes through the thread.
      expect(there.lines.join("\n")).toContain(`${broken}:3:16: domains[`);
      expect(wall(readFileSync(join(dir, "there.xml"), "utf8"))).toBe(
        wall(readFileSync(join(dir, "here.xml"), "utf8")),
      );
    }
  });

  it("check plays in the thread when one of its scenario files is large; the scenarios/ library stays here", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-check-thread-"));
    writeFileSync(join(dir, "a.yaml"), " ".repeat(RUN_THREAD_MIN_BYTES - 1));
    expect(await checksInThread([dir])).toBe(false);
    writeFileSync(join(dir, "b.yaml"), " ".repeat(RUN_THREAD_MIN_BYTES));
    expect(await checksInThread([dir])).toBe(true);
    expect(await checksInThread([join(dir, "missing.yaml")])).toBe(false);
    expect(await checksInThread(["scenarios"])).toBe(false);
  });
});
