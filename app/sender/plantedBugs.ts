/**
 * Known bugs a test harness can plant in the sender, to show that `mailscope
 * explore` finds each one and shrinks it to a small scenario
 * (docs/explore.md "Planted bugs").
 *
 * Test-only: no scenario field, no command-line option, no environment
 * variable and no control of the app turns one on. Only code that calls
 * `createWorld` / `runLoadedScenario` with `plantedBug` does — app/explore's
 * tests and `npm run bench explore`, through the explorer's harness argument.
 * A scenario file cannot reach this switch by any spelling, so a user's run
 * is always the correct sender.
 */

/** Each planted bug and what it breaks. */
export const PLANTED_BUGS = {
  "rate-limited-fallback-eligible":
    "a 429 rate_limited answer is counted as fallback-eligible, so the sender falls back to SMTP after it (breaks ERR-23, STATE-3)",
  "replay-new-key":
    "a request-level retry of a delivery goes out with a new Idempotency-Key instead of the same one (breaks POST-24)",
  "retry-after-give-up":
    "the 5-day give-up is judged an hour late, so attempts go on after it (breaks STATE-7, RETRY-6)",
  "window-end-exclusive":
    "the fallback window's end is compared with > instead of >=, so an attempt exactly at the end is retried over the service instead of handed to SMTP (breaks STATE-3)",
} as const;

/** The name of a planted bug. */
export type PlantedBug = keyof typeof PLANTED_BUGS;

/** The planted bugs, in order. */
export const PLANTED_BUG_NAMES = Object.keys(PLANTED_BUGS) as PlantedBug[];

/** How late `retry-after-give-up` judges the give-up. */
export const PLANTED_GIVE_UP_DELAY_MS = 3_600_000;
