import { expect, test } from "@playwright/test";

test.describe("the app shell in the browser", () => {
  test("shows the title, the scenario library and the shell it runs in", async ({ page }) => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto("/");
    await expect(page).toHaveTitle("Mailscope");
    await expect(page.getByRole("heading", { level: 1, name: "Mailscope" })).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Scenarios" })).toBeVisible();
    await expect(page.getByTestId("shell")).toContainText("browser");
    // The scenario library is listed by name; choosing one shows its description, read as YAML.
    await page.getByRole("button", { name: "rate-limited-then-down" }).click();
    await expect(page.getByRole("heading", { level: 2, name: "rate-limited-then-down" })).toBeVisible();
    const run = page.getByRole("region", { name: "rate-limited-then-down" });
    await expect(run).toContainText("429 rate_limited");
    await expect(run).not.toContainText(">-");
    expect(errors).toEqual([]);
  });

  test("the page is served under a Content-Security-Policy without unsafe-eval", async ({ page }) => {
    await page.goto("/");
    const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute("content");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-eval");
    // Code from strings is refused by the policy (DevTools' own evaluate is exempt, so test what the page does).
    await page.evaluate(() => {
      const timer = setTimeout as unknown as (code: string, ms: number) => void;
      timer("document.body.dataset.evaluated = 'yes'", 0);
      const inline = document.createElement("script");
      inline.textContent = "document.body.dataset.inline = 'yes'";
      document.body.append(inline);
    });
    await page.waitForTimeout(100);
    expect(await page.evaluate(() => document.body.dataset["evaluated"])).toBeUndefined();
    expect(await page.evaluate(() => document.body.dataset["inline"])).toBeUndefined();
  });

  test("the rules view lists the catalogue and filters it", async ({ page }) => {
    await page.goto("/");
    await page.getByRole("button", { name: "Rules" }).click();
    const count = page.getByTestId("rule-count");
    await expect(count).toContainText("rules");
    const total = Number((await count.textContent())?.match(/of (\d+) rules/)?.[1]);
    expect(total).toBeGreaterThan(100);
    await page.getByLabel("Search rules").fill("RETRY");
    await expect(page.getByRole("cell", { name: "RETRY-1", exact: true })).toBeVisible();
    await expect(page.getByRole("cell", { name: "MBX-1", exact: true })).toHaveCount(0);
  });
});
