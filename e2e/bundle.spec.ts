import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { EML_BYTES, EML_SCENARIO } from "../app/sim/testing.ts";
import { writeDifferingBundle } from "./differingBundle.ts";

/** Issue 15, "Bug bundle and images": export a bug bundle, reopen it, re-run and compare; images of the views. */

const SHOTS = "test-results/screenshots";

test.use({ viewport: { width: 1440, height: 1000 } });

async function noSeriousViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

async function runToEnd(page: Page, name: string, recipient: string, outcome: string): Promise<void> {
  await page.goto("/");
  await page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name }).click();
  await expect(page.getByRole("heading", { level: 2, name })).toBeVisible();
  await expect(page.getByTestId("phase")).toContainText("Ready");
  await page.getByRole("button", { name: "Speed max" }).click();
  await page.getByRole("button", { name: "Play", exact: true }).click();
  await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
  await expect(row(page, recipient).getByRole("cell").nth(2)).toHaveText(outcome, { timeout: 30_000 });
}

const outcomes = (page: Page) => page.getByRole("table");
const row = (page: Page, recipient: string) => outcomes(page).getByRole("row").filter({ hasText: recipient });

test.describe("bug bundles", () => {
  test("export a bundle, reopen it: the same outcomes without running; re-run: reproduced", async ({ page }, info) => {
    const name = "state-1-temporary-failure-retried";
    await runToEnd(page, name, "bob@b.example", "accepted");
    const table = await outcomes(page).innerText();
    const checks = await page.getByRole("region", { name: "Checks" }).innerText();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("group", { name: "Export" }).getByRole("button", { name: "Bug bundle" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${name}.msbundle`);
    const file = info.outputPath(`${name}.msbundle`);
    await download.saveAs(file);
    const bundle = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(bundle).toMatchObject({
      format: "mailscope-bundle",
      version: 1,
      scenario: { name, file: `scenarios/${name}.yaml` },
      seed: 11,
      readings: { G16: "jitter=off, fallback-window=2h" },
      recordBodies: true,
      trace: { format: "mailscope-trace", version: 2, redactions: ["bodies", "private-keys"] },
    });
    expect(bundle["report"]).toMatch(/^# Mailscope run: state-1-temporary-failure-retried/);

    // The terminal reproduces what the app bundled: same scenario, seed and readings → the same trace hash.
    const cli = spawnSync(process.execPath, ["bin/mailscope.mjs", "replay", file], { encoding: "utf8" });
    expect(cli.stderr).toBe("");
    expect(cli.stdout).toContain("reproduced: the re-run's trace hash is the bundle's");
    expect(cli.status).toBe(0);

    // Reopened: the run is drawn from the bundled trace, nothing runs.
    await page.goto("/");
    await page.getByLabel("Open trace…").setInputFiles(file);
    const panel = page.getByRole("region", { name: "Bug bundle" });
    await expect(panel).toBeVisible();
    await expect(panel).toContainText(`${name}.msbundle`);
    await expect(panel).toContainText("Seed11");
    await expect(page.getByText("opened trace")).toBeVisible();
    await expect(page.getByTestId("phase")).toContainText("Finished");
    await expect(row(page, "bob@b.example").getByRole("cell").nth(2)).toHaveText("accepted");
    expect(await outcomes(page).innerText()).toBe(table);
    expect(await page.getByRole("region", { name: "Checks" }).innerText()).toBe(checks);
    await expect(page.getByRole("button", { name: "Play", exact: true })).toHaveCount(0);
    // Listed under "Opened", with nothing to edit: a bundle is a recorded run, there is no scenario text of its own to edit.
    const opened = page.getByRole("navigation", { name: "Scenarios" }).getByRole("region", { name: "Opened" });
    await expect(opened.getByRole("button", { name: `${name}.msbundle` })).toBeVisible();
    await expect(opened.getByRole("button", { name: "Edit" })).toHaveCount(0);
    await page.screenshot({ path: `${SHOTS}/bundle-opened.png`, fullPage: true });
    await noSeriousViolations(page);

    // Re-run and compare, in a worker session: reproduced.
    await panel.getByRole("button", { name: "Re-run and compare" }).click();
    const verdict = page.getByTestId("replay-verdict");
    await expect(verdict).toHaveAttribute("data-reproduced", "true", { timeout: 60_000 });
    await expect(verdict).toContainText("Reproduced: the re-run's trace hash is the bundle's");
    await panel.screenshot({ path: `${SHOTS}/bundle-reproduced.png` });
    await noSeriousViolations(page);

    // A bundle whose trace was changed after export is refused, and says where.
    const doc = JSON.parse(readFileSync(file, "utf8")) as { trace: { events: { domain?: string }[] } };
    (doc.trace.events[3] as { domain?: string }).domain = "elsewhere.example";
    await page.getByLabel("Open trace…").setInputFiles({
      name: "edited.mailscope-bundle.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(doc)),
    });
    await expect(page.getByRole("alert")).toContainText(
      "edited.mailscope-bundle.json cannot be opened as a bug bundle",
    );
    await expect(page.getByRole("alert")).toContainText("$.traceHash: the bundled trace hashes to");
    // Nothing of the bundle before stays under the error, as if it were about it.
    await expect(page.getByRole("region", { name: "Bug bundle" })).toHaveCount(0);
    await expect(page.getByText("Reproduced")).toHaveCount(0);

    // One whose scenario text was edited, the trace untouched: the first line that differs, each side's.
    const edited = JSON.parse(readFileSync(file, "utf8")) as { scenario: { text: string } };
    edited.scenario.text = edited.scenario.text.replace(/^seed: 11$/m, "seed: 12");
    const line = edited.scenario.text.split("\n").indexOf("seed: 12") + 1;
    expect(line).toBeGreaterThan(0);
    await page.getByLabel("Open trace…").setInputFiles({
      name: "text-edited.mailscope-bundle.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify(edited)),
    });
    await expect(page.getByRole("alert")).toContainText(
      `text-edited.mailscope-bundle.json cannot be opened as a bug bundle: $.scenario.text: line ${line}: the bundle says "seed: 12" but its trace recorded "seed: 11"`,
    );
    await page.screenshot({ path: `${SHOTS}/bundle-text-edited.png` });
  });

  test("a bundle whose scenario runs differently: not reproduced, and the first differing event", async ({
    page,
  }, info) => {
    const file = info.outputPath("differs.mailscope-bundle.json");
    // A consistent bundle of a run this scenario text does not make: the text says the receiver is unavailable
    // 3 times, the trace shows 2, and the hash is recomputed so that the bundle reads.
    writeDifferingBundle(file);

    await page.goto("/");
    await page.getByLabel("Open trace…").setInputFiles(file);
    const panel = page.getByRole("region", { name: "Bug bundle" });
    await panel.getByRole("button", { name: "Re-run and compare" }).click();
    const verdict = page.getByTestId("replay-verdict");
    await expect(verdict).toHaveAttribute("data-reproduced", "false", { timeout: 60_000 });
    await expect(verdict).toContainText("Not reproduced");
    await expect(verdict).toContainText(/first differing event: \$\.events\[\d+\]/);
    await expect(verdict).toContainText("bundle: #");
    await expect(verdict).toContainText("re-run: #");
    await panel.screenshot({ path: `${SHOTS}/bundle-not-reproduced.png` });

    // The terminal says the same.
    const replay = spawnSync(process.execPath, ["bin/mailscope.mjs", "replay", file], { encoding: "utf8" });
    expect(replay.status).toBe(1);
    expect(replay.stdout).toMatch(/first differing event: \$\.events\[\d+\]/);
  });

  test("a scenario with an eml: message: opened, it says the app does not read eml: files; its CLI bundle re-runs: reproduced", async ({
    page,
  }, info) => {
    const dir = info.outputPath("eml");
    mkdirSync(`${dir}/mail`, { recursive: true });
    writeFileSync(`${dir}/mail/hello.eml`, EML_BYTES);
    writeFileSync(`${dir}/raw.yaml`, EML_SCENARIO);
    const file = `${dir}/raw.mailscope-bundle.json`;
    const cli = spawnSync(process.execPath, ["bin/mailscope.mjs", "run", `${dir}/raw.yaml`, "--bundle", file], {
      encoding: "utf8",
    });
    expect(cli.status).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ version: 2, emls: { "mail/hello.eml": /^Rn/ } });

    // The scenario itself: the page reads no file it names, and says so at the message's eml field; no Compare.
    await page.goto("/");
    await page.getByLabel("Open scenario…").setInputFiles(`${dir}/raw.yaml`);
    const errors = page.getByRole("alert").filter({ hasText: "This scenario has errors" });
    await expect(errors).toContainText(
      "raw.yaml:6:62: messages[0].eml: cannot read mail/hello.eml: its bytes were not given with the scenario: the app does not read eml: files",
    );
    await expect(page.getByRole("button", { name: "Compare…" })).toHaveCount(0);
    await page.screenshot({ path: `${SHOTS}/eml-scenario-opened.png`, fullPage: true });

    // Its bundle, from the terminal: re-run in a worker session with the bundled bytes, reproduced.
    await page.getByLabel("Open trace…").setInputFiles(file);
    const panel = page.getByRole("region", { name: "Bug bundle" });
    await expect(row(page, "bob@b.example").getByRole("cell").nth(2)).toHaveText("accepted");
    await panel.getByRole("button", { name: "Re-run and compare" }).click();
    const verdict = page.getByTestId("replay-verdict");
    await expect(verdict).toHaveAttribute("data-reproduced", "true", { timeout: 60_000 });
    await page.screenshot({ path: `${SHOTS}/eml-bundle-reproduced.png`, fullPage: true });

    // Exported again from the app, the bundle keeps the file's bytes, and the terminal reproduces it.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("group", { name: "Export" }).getByRole("button", { name: "Bug bundle" }).click(),
    ]);
    const again = info.outputPath("again.msbundle");
    await download.saveAs(again);
    expect(JSON.parse(readFileSync(again, "utf8"))).toMatchObject({
      version: 2,
      emls: JSON.parse(readFileSync(file, "utf8")).emls,
    });
    const replay = spawnSync(process.execPath, ["bin/mailscope.mjs", "replay", again], { encoding: "utf8" });
    expect(replay.stdout).toContain("reproduced: the re-run's trace hash is the bundle's");
    expect(replay.status).toBe(0);
  });
});

test.describe("images of the views", () => {
  test("timeline, sequence diagram and statechart as SVG and PNG", async ({ page }, info) => {
    await runToEnd(page, "receiver-down-past-fallback-window", "bob@b.example", "smtp (fallback)");
    mkdirSync(SHOTS, { recursive: true });
    const views = [
      { region: "Delivery timeline", view: "timeline", marks: "[data-mark-id]", text: "m1 → b.example" },
      {
        region: "Sequence diagram",
        view: "sequence",
        marks: "[data-seq]",
        text: "SMTP hand-off (fallback): bob@b.example",
      },
      { region: "Delivery machine", view: "statechart", marks: "[data-state-id]", text: "fallBackToSmtpAfterWindow" },
    ];
    for (const v of views) {
      const region = page.getByRole("region", { name: v.region });
      const [svgDownload] = await Promise.all([
        page.waitForEvent("download"),
        region.getByRole("button", { name: "Export SVG" }).click(),
      ]);
      expect(svgDownload.suggestedFilename()).toMatch(
        new RegExp(`^receiver-down-past-fallback-window-${v.view}.*\\.svg$`),
      );
      const svgPath = info.outputPath(`${v.view}.svg`);
      await svgDownload.saveAs(svgPath);
      const svg = readFileSync(svgPath, "utf8");
      // The SVG parses as XML, is the view's, and has its marks and its words.
      const parsed = await page.evaluate(
        ({ text, marks }) => {
          const doc = new DOMParser().parseFromString(text, "image/svg+xml");
          const root = doc.documentElement;
          return {
            error: doc.querySelector("parsererror")?.textContent ?? null,
            root: root.localName,
            view: root.getAttribute("data-view"),
            marks: root.querySelectorAll(marks).length,
            text: root.textContent ?? "",
            width: Number(root.getAttribute("width")),
            height: Number(root.getAttribute("height")),
          };
        },
        { text: svg, marks: v.marks },
      );
      expect(parsed.error).toBeNull();
      expect(parsed).toMatchObject({ root: "svg", view: v.view });
      expect(parsed.marks).toBeGreaterThan(0);
      expect(parsed.text).toContain(v.text);
      expect(parsed.width).toBeGreaterThan(200);
      expect(parsed.height).toBeGreaterThan(60);
      // Issue 22: saved, it says what it left out, as every export of the run does.
      await expect(region.getByTestId("image-export-note")).toHaveText("Left out: message bodies and keys.");
      await expect(region.getByTestId("image-export-note")).toHaveAttribute("title", svgDownload.suggestedFilename());

      const [pngDownload] = await Promise.all([
        page.waitForEvent("download"),
        region.getByRole("button", { name: "Export PNG" }).click(),
      ]);
      expect(pngDownload.suggestedFilename()).toMatch(
        new RegExp(`^receiver-down-past-fallback-window-${v.view}.*\\.png$`),
      );
      const pngPath = `${SHOTS}/export-${v.view}.png`;
      await pngDownload.saveAs(pngPath);
      const png = readFileSync(pngPath);
      expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
      // Drawn at 2×: twice the SVG's size.
      expect(png.readUInt32BE(16)).toBe(Math.ceil(parsed.width * 2));
      expect(png.readUInt32BE(20)).toBe(Math.ceil(parsed.height * 2));
    }
    // The buttons, where each view has them.
    for (const [region, view] of [
      ["Delivery timeline", "timeline"],
      ["Sequence diagram", "sequence"],
      ["Delivery machine", "statechart"],
    ] as const) {
      const head = page.getByRole("region", { name: region }).getByRole("group", { name: /as an image$/ });
      await head.scrollIntoViewIfNeeded();
      await head.locator("xpath=..").screenshot({ path: `${SHOTS}/export-buttons-${view}.png` });
    }
    await noSeriousViolations(page);
  });
});
