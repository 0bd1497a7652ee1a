/**
 * The README's pictures come from one place, `npm run screenshots` (e2e/readme.screenshots.ts), and
 * `npm test` writes no tracked file. The docs and that file name the same pictures; no end-to-end test writes
 * into docs/.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const SHOTS = "docs/screenshots";
const MAKER = "e2e/readme.screenshots.ts";

/** The Markdown files of the project that may show a picture: the README and docs/. */
function markdown(): string[] {
  const docs = readdirSync("docs", { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

describe("the README's screenshots", () => {
  const shown = new Set(
    markdown().flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/docs\/screenshots\/([\w.-]+\.png)/g)].map((m) => m[1] as string),
    ),
  );
  const made = new Set(
    [...readFileSync(MAKER, "utf8").matchAll(/test\(\s*"([\w.-]+\.png)"/g)].map((m) => m[1] as string),
  );
  const kept = new Set(readdirSync(SHOTS).filter((f) => f.endsWith(".png")));

  it("every picture the docs show is made by npm run screenshots, and is in docs/screenshots", () => {
    expect(shown.size).toBeGreaterThan(10);
    expect([...shown].filter((f) => !made.has(f))).toEqual([]);
    expect([...shown].filter((f) => !kept.has(f))).toEqual([]);
  });

  it("npm run screenshots makes no picture the docs do not show, and docs/screenshots holds no other", () => {
    expect([...made].filter((f) => !shown.has(f))).toEqual([]);
    expect([...kept].filter((f) => !shown.has(f))).toEqual([]);
  });

  it("no end-to-end test writes into docs/ (npm test leaves the tree as it found it)", () => {
    const specs = readdirSync("e2e").filter((f) => /\.spec\.ts$/.test(f));
    expect(specs.length).toBeGreaterThan(5);
    const writers = specs.filter((f) => /path:\s*[`"']docs\//.test(readFileSync(`e2e/${f}`, "utf8")));
    expect(writers).toEqual([]);
  });
});
