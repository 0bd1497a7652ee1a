import { describe, expect, it } from "vitest";
import { StopFinder } from "./breakpoints.ts";
import {
  annotationPoints,
  firstSentence,
  noteBreakpoints,
  noteOfBreakpoint,
  ordinal,
  readAnnotations,
} from "./lesson.ts";
import { parse } from "yaml";
import { runScenarioText } from "./runScenario.ts";
import { parseScenarioText } from "./scenario.ts";

/** b.example refuses connections for 3 hours: SMTP after the 2-hour window, at the attempt at +2:03:00 (STATE-3). */
const DOWN = `name: down
readings: { G16: jitter=off }
domains:
  a.example: { mailboxes: [alice] }
  b.example: { mailboxes: [bob] }
messages:
  - { id: m1, from: alice@a.example, to: bob@b.example }
faults:
  network:
    - { kind: connection-refused, host: mx.b.example, until: 3h }
annotations:
  - { at: 2h, note: the window ends }
  - { on: smtp.handoff, note: handed over }
  - { on: attempt.judged, nth: 8, note: the eighth attempt, pause: false }
  - { on: delivery.bounced, note: never happens here }
  - { at: "2026-01-01T00:01:00Z", note: an ISO time }
`;

describe("lessons: summaries and annotations", () => {
  it("the summary is the description's first sentence; dots inside words do not end it", () => {
    expect(firstSentence("alice@a.example sends one message to bob@b.example over the service. It arrives.")).toBe(
      "alice@a.example sends one message to bob@b.example over the service.",
    );
    // A heading-like first sentence takes the next one with it.
    expect(firstSentence("Row 1 of the states table (STATE-2). b.example's receiver is overloaded. Then")).toBe(
      "Row 1 of the states table (STATE-2). b.example's receiver is overloaded.",
    );
    expect(firstSentence('Gap G12: "one POST per recipient domain" (POST-22) cannot hold. Next')).toBe(
      'Gap G12: "one POST per recipient domain" (POST-22) cannot hold.',
    );
    expect(firstSentence("  no full stop at all  ")).toBe("no full stop at all");
    expect(firstSentence("A limit, e.g. 100 recipients, holds for every receiver of the run. More.")).toBe(
      "A limit, e.g. 100 recipients, holds for every receiver of the run.",
    );
    const long = firstSentence(`${"word ".repeat(60)}end. Next.`);
    expect(long.length).toBeLessThanOrEqual(180);
    expect(long.endsWith("…")).toBe(true);
  });

  it("ordinals read as words say them", () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal)).toEqual([
      "first",
      "2nd",
      "3rd",
      "4th",
      "11th",
      "12th",
      "13th",
      "21st",
      "22nd",
      "101st",
    ]);
  });

  it("STATE-3: annotations are placed on the run from its events: a time, the first hand-off, the 8th attempt judged", async () => {
    const outcome = await runScenarioText(DOWN, { file: "down.yaml" });
    if (!outcome.ok) throw new Error(outcome.errors.map((e) => e.message).join("\n"));
    const { trace } = outcome.run;
    const start = trace.startedAtMs;
    const parsed = parseScenarioText(DOWN);
    if (!parsed.ok) throw new Error("DOWN parses");
    const annotations = parsed.scenario.annotations;
    // The lenient reader (the library's, an opened trace's) reads them alike.
    expect(readAnnotations(parse(DOWN).annotations)).toEqual(annotations);
    const points = annotationPoints(annotations, trace.events, start);
    const handoff = trace.events.find((e) => e.name === "smtp.handoff");
    const eighth = trace.events.filter((e) => e.name === "attempt.judged")[7];
    expect(points.map((p) => [p.about, p.timeMs === undefined ? undefined : p.timeMs - start, p.seq])).toEqual([
      ["at +2:00:00", 7_200_000, undefined],
      ["at the first smtp.handoff", 7_380_000, handoff?.seq],
      ["at the 8th attempt.judged", 7_380_000, eighth?.seq],
      ["at the first delivery.bounced", undefined, undefined],
      ["at +0:01:00", 60_000, undefined],
    ]);
    // Before the hand-off happened, its annotation is not placed yet.
    const early = annotationPoints(annotations, trace.events.slice(0, 10), start);
    expect(early[1]?.timeMs).toBeUndefined();
    // Played as a lesson, the notes with pause are breakpoints: the 8th attempt's has pause: false.
    const breakpoints = noteBreakpoints(annotations, start);
    expect(breakpoints.map((b) => [b.id, b.condition])).toEqual([
      ["note-1", { kind: "annotation", note: "the window ends", atMs: start + 7_200_000 }],
      ["note-2", { kind: "annotation", note: "handed over", on: "smtp.handoff", nth: 1 }],
      ["note-4", { kind: "annotation", note: "never happens here", on: "delivery.bounced", nth: 1 }],
      ["note-5", { kind: "annotation", note: "an ISO time", atMs: start + 60_000 }],
    ]);
    expect(breakpoints.map((b) => noteOfBreakpoint(b.id))).toEqual([0, 1, 3, 4]);
    expect(noteOfBreakpoint("bp-1")).toBeUndefined();
    // A note on an event kind stops at that event itself, the first of its kind (not at every one).
    const finder = new StopFinder();
    finder.setBreakpoints(breakpoints);
    expect(finder.nextTime(start)).toEqual({ id: "note-5", atMs: start + 60_000 });
    expect(finder.nextTime(start + 60_000)).toEqual({ id: "note-1", atMs: start + 7_200_000 });
    expect(finder.next(trace.events)).toEqual({ kind: "breakpoint", id: "note-2", seq: handoff?.seq });
    expect(finder.next(trace.events)).toBeUndefined();
  });
});
