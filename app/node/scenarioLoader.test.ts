import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findScenarioFiles, loadScenarioFile } from "./scenarioLoader.ts";

describe("scenario files on disk", () => {
  it("POST-9: an eml path is read relative to the scenario's folder, byte for byte", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-loader-"));
    mkdirSync(join(dir, "mail"));
    const eml = Buffer.from("Message-ID: <x@a.example>\r\nSubject: hi\r\n\r\n\xff\r\n", "latin1");
    writeFileSync(join(dir, "mail", "x.eml"), eml);
    const file = join(dir, "s.yaml");
    writeFileSync(
      file,
      "name: s\ndomains:\n  a.example: { mailboxes: [alice] }\nmessages:\n  - { from: alice@a.example, to: alice@a.example, eml: mail/x.eml }\n  - { from: alice@a.example, to: alice@a.example, eml: mail/missing.eml }\n",
    );
    const result = await loadScenarioFile(file);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([expect.objectContaining({ file, line: 6, column: 56, field: "messages[1].eml" })]);
    expect(result.errors[0]?.message).toContain("cannot read mail/missing.eml: no such file");
    writeFileSync(
      file,
      "name: s\ndomains:\n  a.example: { mailboxes: [alice] }\nmessages:\n  - { from: alice@a.example, to: alice@a.example, eml: mail/x.eml }\n",
    );
    const ok = await loadScenarioFile(file);
    expect(ok.ok).toBe(true);
    if (ok.ok) expect(Buffer.from(ok.loaded.emls.get("mail/x.eml") ?? []).equals(eml)).toBe(true);
  });

  it("finds *.yaml and *.yml under folders, recursively and sorted, skipping dot-folders; keeps files as given", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-find-"));
    mkdirSync(join(dir, "sub"));
    mkdirSync(join(dir, ".hidden"));
    for (const f of ["b.yaml", "a.yml", "notes.md", "sub/c.yaml", ".hidden/d.yaml"]) writeFileSync(join(dir, f), "");
    expect(await findScenarioFiles([dir, "other.yaml"])).toEqual([
      join(dir, "a.yml"),
      join(dir, "b.yaml"),
      join(dir, "sub", "c.yaml"),
      "other.yaml",
    ]);
  });

  it("eml: /dev/zero, and /dev/zero as the scenario, are refused at their limits, not read to the end", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-zero-"));
    const file = join(dir, "s.yaml");
    writeFileSync(
      file,
      "name: s\ndomains:\n  a.example: { mailboxes: [alice] }\nmessages:\n  - { from: alice@a.example, to: alice@a.example, eml: /dev/zero }\n",
    );
    const result = await loadScenarioFile(file);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.errors).toEqual([
        {
          file,
          line: 5,
          column: 56,
          field: "messages[0].eml",
          message: "cannot read /dev/zero: larger than 104857600 bytes (the limit for messages)",
        },
      ]);
    }
    const zero = await loadScenarioFile("/dev/zero");
    expect(zero.ok).toBe(false);
    if (!zero.ok) {
      expect(zero.errors[0]?.message).toBe("cannot be read: larger than 33554432 bytes (the limit for scenarios)");
    }
  });

  it("a folder given as a scenario is one error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-dir-"));
    const result = await loadScenarioFile(dir);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]?.message).toBe("cannot be read: it is a folder");
  });
});
