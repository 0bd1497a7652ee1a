import { expect, test, type Page } from "@playwright/test";
import { noSeriousViolations, SHOTS } from "./support.ts";

/**
 * Issue 24, item 1: a new user is led through the lessons — titles and one-line summaries in the library,
 * the "Start here" path first, the welcome pane pointing at it, each lesson's "what to watch for", its notes
 * placed on the run and paused at as it plays, and the next lesson at its end.
 */

const library = (page: Page) => page.getByRole("navigation", { name: "Scenarios" });

test.describe("the start-here path", () => {
  for (const scheme of ["light", "dark"] as const) {
    test(`the library lists titles and summaries, Start here first; the welcome pane points at it (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto("/");
      const groups = library(page).getByRole("heading", { level: 3 });
      await expect(groups.first()).toHaveText("Start here");
      const start = library(page).getByRole("region", { name: "Start here" });
      const lessons = start.getByRole("listitem");
      await expect(lessons).toHaveCount(6);
      // In the order, each by its title and its file's name, with its one-line summary shown (not a tooltip).
      const first = start.getByRole("button", { name: /^1\. A message delivered at once happy-path$/ });
      await expect(first).toBeVisible();
      await expect(first).toHaveAccessibleDescription(/^alice@a\.example sends one message to bob@b\.example\./);
      await expect(lessons.first()).toContainText("alice@a.example sends one message to bob@b.example.");
      const names = await lessons.locator(".entry-file").allTextContents();
      expect(names).toEqual([
        "happy-path",
        "receiver-down-past-fallback-window",
        "rate-limited-then-down",
        "teach-mixed-recipient-results",
        "teach-failure-after-acceptance",
        "state-6-give-up-after-5-days",
      ]);
      // Listed once: the lessons are not under Teaching, State table or Others again.
      await expect(library(page).getByRole("button", { name: /state-6-give-up-after-5-days/ })).toHaveCount(1);
      await expect(
        library(page).getByRole("button", { name: /State 2: SMTP after the fallback window/ }),
      ).toHaveAccessibleDescription(/^Row 2 of the states table \(STATE-3\)\. b\.example's endpoint/);
      // A search finds a scenario by its title's words.
      await library(page).getByRole("searchbox", { name: "Search scenarios" }).fill("four fates");
      // Found alone, a lesson keeps its number in the path.
      await expect(
        library(page).getByRole("button", { name: /^4\. One POST, four recipients, four fates teach-mixed/ }),
      ).toBeVisible();
      await expect(library(page).getByRole("listitem")).toHaveCount(1);
      await library(page).getByRole("searchbox", { name: "Search scenarios" }).fill("");

      const welcome = page.getByRole("region", { name: "Welcome" });
      const startHere = welcome.getByRole("region", { name: "New here? Start here" });
      await expect(startHere).toContainText(
        "6 lessons, in order, from “A message delivered at once” to “State 6: the give-up after 5 days”",
      );
      await expect(startHere.getByRole("listitem")).toHaveCount(6);
      await noSeriousViolations(page);
      await page.screenshot({ path: `${SHOTS}/learn-welcome-${scheme}.png` });

      await startHere.getByRole("button", { name: "Start the first lesson" }).click();
      await expect(
        page.getByRole("heading", { level: 2, name: "A message delivered at once happy-path" }),
      ).toBeVisible();
      const lesson = page.getByRole("region", { name: "Lesson 1 of 6" });
      await expect(lesson.getByRole("list", { name: "What to watch for" }).getByRole("listitem")).toHaveCount(4);
      await expect(lesson.getByRole("list", { name: "Notes on this run" }).getByRole("listitem")).toHaveCount(3);
      await expect(lesson.getByRole("checkbox", { name: "Pause at each note" })).toBeChecked();
      await noSeriousViolations(page);
    });
  }

  test("a lesson pauses at each of its notes as it plays, and leads to the next lesson at its end", async ({
    page,
  }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto("/");
    // Opened from the lesson path (the welcome pane's list), it is played as a lesson: paused at its notes.
    await page
      .getByRole("region", { name: "Welcome" })
      .getByRole("button", { name: "Receiver down past the fallback window" })
      .click();
    await expect(page.getByTestId("phase")).toContainText("Ready");
    const lesson = page.getByRole("region", { name: "Lesson 2 of 6" });
    await expect(lesson.getByRole("checkbox", { name: "Pause at each note" })).toBeChecked();
    const notes = lesson.getByRole("list", { name: "Notes on this run" });
    // Before the run, the notes on events wait for them; the one at a time has its time.
    await expect(notes.getByRole("listitem").nth(0)).toContainText("at the first attempt.judged: not reached yet");
    await expect(notes.getByRole("listitem").nth(1)).toContainText("+2:00:00");
    await page.getByRole("button", { name: "Speed 3600×" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    const reached = lesson.getByTestId("lesson-reached");
    const stop = page.getByTestId("stop");
    // The first note, on the first attempt.judged: the run pauses at that event itself, the clock at its time.
    await expect(reached).toContainText("Paused at a note, +0:00:00: Attempt 1 ends at the capabilities request");
    await expect(page.getByTestId("phase")).toContainText("Paused");
    await expect(notes.locator("li[aria-current=step]")).toHaveAttribute("data-note", "0");
    // The bar, in view while one reads the log, says the note's words too.
    await expect(stop).toHaveText(
      /^Stopped at lesson note 1 \(#\d+ attempt\.judged at \+0:00:00[^)]*\): Attempt 1 ends at the capabilities request/,
    );
    const judgedSeq = Number(/#(\d+)/.exec((await stop.textContent()) ?? "")?.[1]);
    // Nothing after the note's event is in the log.
    const logged = await page
      .getByRole("log", { name: "Event log" })
      .locator("[data-testid=log-row]")
      .evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-seq"))));
    expect(logged.every((seq) => seq <= judgedSeq)).toBe(true);
    // The notes are breakpoints, listed with the user's: ticked, one hit.
    await page.getByRole("button", { name: /^Breakpoints/ }).click();
    const list = page.getByRole("region", { name: "Breakpoints" });
    await expect(list.getByRole("listitem")).toHaveCount(3);
    await expect(list.getByRole("listitem").nth(0)).toContainText(
      "lesson note at the first attempt.judged: Attempt 1 ends",
    );
    await expect(list.getByRole("listitem").nth(0)).toContainText("hit once");
    await expect(list.getByRole("listitem").nth(0)).toContainText("stopped here");
    await expect(list.getByRole("listitem").nth(1)).toContainText("lesson note at +2:00:00: The 2-hour fallback");
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await noSeriousViolations(page);
      await page.screenshot({ path: `${SHOTS}/learn-paused-at-note-${scheme}.png` });
    }
    await page.emulateMedia({ colorScheme: "light" });
    // A step after the pause goes on to the next event, not to the note again.
    await page.getByRole("button", { name: "Step", exact: true }).click();
    await expect(stop).toHaveText(new RegExp(`^Stepped to the next event: #${judgedSeq + 1} `));
    // At 3600× the window's end: paused with the clock at +2:00:00 exactly.
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(reached).toContainText("Paused at a note, +2:00:00: The 2-hour fallback window ends now.");
    await expect(page.getByTestId("phase")).toContainText("Paused");
    await expect(page.getByTestId("clock")).toHaveText("+2:00:00");
    await expect(stop).toHaveText(
      "Stopped at lesson note 2 (the clock at +2:00:00): The 2-hour fallback window ends now. Nothing happens yet: the next attempt decides.",
    );
    // Back before it (a jump stops at no note) and on again: paused at it once more, its hits those of the run shown.
    await page.getByRole("textbox", { name: "Jump to" }).fill("+1:00:00");
    await page.getByRole("button", { name: "Go", exact: true }).click();
    await expect(page.getByTestId("clock")).toHaveText("+1:00:00");
    await expect(list.getByRole("listitem").nth(1)).not.toContainText("hit");
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("clock")).toHaveText("+2:00:00");
    await expect(list.getByRole("listitem").nth(1)).toContainText("hit once");
    await reached.getByRole("button", { name: "Continue" }).click();
    // The hand-off: paused at its event; Continue ends the run.
    await expect(reached).toContainText(
      "Paused at a note, +2:03:00: Attempt 8, the first at or after the window's end",
    );
    await expect(stop).toHaveText(/^Stopped at lesson note 3 \(#\d+ smtp\.handoff at \+2:03:00[^)]*\): Attempt 8/);
    await reached.getByRole("button", { name: "Continue" }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished");
    // Each note stopped the run once in the run shown (note 2 once, though it was reached twice).
    await expect(list.getByRole("listitem").filter({ hasText: "hit once" })).toHaveCount(3);
    // The list closed again, the bar is short: the pictures below are not under it.
    await page.getByRole("button", { name: /^Breakpoints/ }).click();
    await expect(list).toHaveCount(0);
    // The notes on the timeline's axis: numbered flags in time order (+0:00:00, +2:00:00, +2:03:00), words on hover.
    const flags = page.getByTestId("timeline-notes").locator(".axis-note");
    await expect(flags).toHaveCount(3);
    const xs = await flags.evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-x"))));
    expect(xs[0]).toBeLessThan(xs[1]!);
    expect(xs[1]).toBeLessThan(xs[2]!);
    await expect(flags.nth(1).locator("title")).toHaveText(/^Note 2, \+2:00:00: The 2-hour fallback window ends now\./);
    // The legend names only what this run draws: no accepted dot, no "SMTP ruled out".
    await expect(page.getByRole("list", { name: "Legend" }).getByRole("listitem")).toHaveText([
      "temporary failure, fallback-eligible",
      "fallback window",
      "fault",
      "◆ SMTP hand-off",
      "deliveries in flight (overview)",
    ]);
    await page.mouse.move(0, 0); // no hover text over the picture
    await page
      .getByRole("region", { name: "Delivery timeline" })
      .screenshot({ path: `${SHOTS}/learn-timeline-notes.png` });
    // The note's event in the log.
    await notes.getByRole("button", { name: /smtp\.handoff in the log \(the note at \+2:03:00\)/ }).click();
    await expect(page.locator("[data-testid=log-row][data-evidence]")).toContainText("handed bob@b.example to SMTP");
    const end = lesson.getByTestId("lesson-end");
    await expect(end).toContainText("End of lesson 2.");
    await noSeriousViolations(page);
    await lesson.screenshot({ path: `${SHOTS}/learn-lesson-end.png` });
    await end.getByRole("button", { name: "Next lesson: Rate limited, then down until the give-up →" }).click();
    await expect(
      page.getByRole("heading", { level: 2, name: /Rate limited, then down until the give-up/ }),
    ).toBeVisible();
    // The next lesson is played as one too.
    await expect(
      page.getByRole("region", { name: "Lesson 3 of 6" }).getByRole("checkbox", { name: "Pause at each note" }),
    ).toBeChecked();
  });

  test("picked in the library, a lesson plays through: its notes are shown as the run reaches them", async ({
    page,
  }) => {
    await page.goto("/");
    await library(page)
      .getByRole("button", { name: /happy-path/ })
      .click();
    const lesson = page.getByRole("region", { name: "Lesson 1 of 6" });
    await expect(lesson.getByRole("checkbox", { name: "Pause at each note" })).not.toBeChecked();
    await page.getByRole("button", { name: "Speed max" }).click();
    await page.getByRole("button", { name: "Play", exact: true }).click();
    await expect(page.getByTestId("phase")).toContainText("Finished");
    await expect(lesson.getByTestId("lesson-reached")).toContainText("Note, +0:00:00: bob is accepted");
    await expect(lesson.getByRole("button", { name: "Continue" })).toHaveCount(0);
  });
});
