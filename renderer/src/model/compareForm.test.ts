/**
 * Compare's form as data: the request each way of comparing makes, and what the form says of fields a user
 * gets wrong (an empty seed, a time that is not one, a fork's time with nothing to change, a probability out
 * of 0…1). G16: the fallback window's readings.
 */
import { describe, expect, it } from "vitest";
import { forkChoices } from "./compare.ts";
import {
  compareFormReducer,
  controlOf,
  initialCompareForm,
  requestOfForm,
  type CompareForm,
  type CompareFormAction,
} from "./compareForm.ts";
import { readingControls } from "./readings.ts";
import { compareBaseOf } from "./testing.ts";

const base = compareBaseOf("gap-G16-fallback-window-4h", {
  readings: { G16: "jitter=off, fallback-window=4h" },
  playheadOffsetMs: 30 * 60_000,
});
const controls = readingControls(base.readings);
const form = (...actions: CompareFormAction[]): CompareForm =>
  actions.reduce(compareFormReducer, initialCompareForm(base, controls));
const request = (f: CompareForm) => requestOfForm(f, base, controls, forkChoices(base.text, 30 * 60_000));

describe("Compare's form", () => {
  it("opens on the first reading (its value in the run as A, another as B), the run's seed and the next, forked at the playhead", () => {
    const f = form();
    const control = controlOf(f, controls);
    expect(f).toMatchObject({ mode: "readings", valueA: control?.value, seedA: "16", seedB: "17", forkAt: "+0:30:00" });
    expect(f.valueB).not.toBe(f.valueA);
    expect(control?.options).toContain(f.valueB);
  });

  it("G16: two readings make sides A and B under them; two seeds, the run under each", () => {
    const readings = request(form());
    expect(readings.ok && readings.request.sides.map((s) => s.label)).toEqual(["A", "B"]);
    const seeds = request(form({ type: "mode", mode: "seeds" }, { type: "field", field: "seedB", value: "99" }));
    expect(seeds.ok && seeds.request.sides.map((s) => s.seed)).toEqual([16, 99]);
    expect(seeds.ok && seeds.request.fork).toBeUndefined();
  });

  it("says what is wrong with a field: an empty seed, a time that is not one, a probability out of 0…1", () => {
    expect(request(form({ type: "mode", mode: "seeds" }, { type: "field", field: "seedA", value: " " }))).toEqual({
      ok: false,
      errors: ["Give both seeds (a number, or any text)."],
    });
    expect(request(form({ type: "mode", mode: "fork" }, { type: "field", field: "forkAt", value: "soon" }))).toEqual({
      ok: false,
      errors: ['Fork at: "soon" is not a time (try +0:30:00 or 30m).'],
    });
    const choices = forkChoices(base.text, 30 * 60_000);
    const weighed = choices.find((c) => c.probability === true);
    if (weighed !== undefined) {
      const f = form(
        { type: "mode", mode: "fork" },
        { type: "field", field: "choiceValue", value: weighed.value },
        { type: "field", field: "probability", value: "1.5" },
      );
      expect(request(f)).toEqual({ ok: false, errors: ['Probability: "1.5" is not a number from 0 to 1.'] });
    }
    expect(requestOfForm(form({ type: "mode", mode: "fork" }), base, controls, [])).toEqual({
      ok: false,
      errors: ["Nothing to change at +0:30:00: no fault is active then."],
    });
    expect(requestOfForm(form(), base, [], [])).toEqual({ ok: false, errors: ["No reading to compare."] });
  });

  it("a fork: the run against its fork at the time, with the fork's text to save", () => {
    const made = request(form({ type: "mode", mode: "fork" }));
    expect(made.ok && made.request.sides[0].title).toBe("original");
    expect(made.ok && made.request.fork?.atMs).toBe(30 * 60_000);
    expect(made.ok && made.request.fork?.text).toMatch(/^name: /m);
  });
});
