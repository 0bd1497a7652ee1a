import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { readFileSync } from "node:fs";

/**
 * Issue 12: the browser build opens files with the File System Access API's picker where the browser
 * has one (Chromium does; the test stands in for the user's choice), else with `<input type=file>`;
 * opened files are listed under "Opened" and kept between visits.
 */

const SHOTS = "test-results/screenshots";

test.use({ viewport: { width: 1440, height: 1000 } });

async function noSeriousViolations(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

/** Stands in for the picker: it records what was asked and "chooses" the files given, in turn. */
async function standInPicker(page: Page, files: { name: string; text: string }[]): Promise<void> {
  await page.addInitScript((chosen) => {
    const w = window as unknown as { showOpenFilePicker: unknown; pickerAsked: unknown[] };
    w.pickerAsked = [];
    let next = 0;
    w.showOpenFilePicker = async (options: unknown) => {
      w.pickerAsked.push(options);
      const f = chosen[next++];
      if (f === undefined) throw new DOMException("The user aborted a request.", "AbortError");
      return [{ getFile: async () => new File([f.text], f.name) }];
    };
  }, files);
}

test.describe("opening files in the browser", () => {
  test("the open buttons use the File System Access API; what is opened is listed under Opened, also after a reload", async ({
    page,
  }) => {
    const scenario = readFileSync("scenarios/happy-path.yaml", "utf8").replace(
      "name: happy-path",
      "name: picked-happy-path",
    );
    await standInPicker(page, [{ name: "picked.yaml", text: scenario }]);
    await page.goto("/");
    await page.getByText("Open scenario…").click();
    await expect(page.getByRole("heading", { level: 2, name: "picked-happy-path" })).toBeVisible();
    await expect(page.getByTestId("phase")).toContainText("Ready");
    expect(await page.evaluate(() => (window as unknown as { pickerAsked: unknown[] }).pickerAsked)).toEqual([
      expect.objectContaining({
        types: [expect.objectContaining({ accept: { "application/yaml": [".yaml", ".yml"] } })],
      }),
    ]);
    const library = page.getByRole("navigation", { name: "Scenarios" });
    await expect(library.getByRole("heading", { level: 3, name: "Opened" })).toBeVisible();

    // A cancelled picker opens nothing and says nothing.
    await page.getByText("Open trace…").click();
    await expect(page.getByRole("alert")).toHaveCount(0);
    await expect(page.getByRole("heading", { level: 2, name: "picked-happy-path" })).toBeVisible();

    // Kept between visits: after a reload it is still listed, and runs from the list.
    await page.reload();
    await library.getByRole("button", { name: "picked-happy-path" }).click();
    await expect(page.getByRole("heading", { level: 2, name: "picked-happy-path" })).toBeVisible();
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished", { timeout: 60_000 });
    await expect(page.getByRole("table").getByRole("row").filter({ hasText: "bob@b.example" })).toContainText(
      "accepted",
    );
    await expect(library.getByRole("button", { name: /picked-happy-path/ })).toHaveAttribute("aria-current", "true");
    await page.screenshot({ path: `${SHOTS}/library-opened.png` });
    await noSeriousViolations(page);
  });

  test("without the picker, the file input opens files", async ({ page }) => {
    await page.addInitScript(() => {
      delete (window as unknown as { showOpenFilePicker?: unknown }).showOpenFilePicker;
    });
    await page.goto("/");
    const chooser = page.waitForEvent("filechooser");
    await page.getByText("Open scenario…").click();
    await (
      await chooser
    ).setFiles({
      name: "chosen.yaml",
      mimeType: "application/yaml",
      buffer: Buffer.from(
        readFileSync("scenarios/happy-path.yaml", "utf8").replace("name: happy-path", "name: chosen-happy-path"),
      ),
    });
    await expect(page.getByRole("heading", { level: 2, name: "chosen-happy-path" })).toBeVisible();
    await expect(
      page.getByRole("navigation", { name: "Scenarios" }).getByRole("button", { name: "chosen-happy-path" }),
    ).toBeVisible();
  });
});
