import { describe, expect, it } from "vitest";
import { summarizeScenario } from "../../../app/sim/scenarioSummary.ts";
import type { RecordedEvent } from "../../../app/trace/schema.ts";
import { dueNotes, noteWhen, notesOfRun, annotationsOfText, pausedAtNote } from "./lesson.ts";
import { groupLibrary, lessonPath, lessonPlace } from "./library.ts";
import { scenarioText, scenarioTrace } from "./testing.ts";

const texts = import.meta.glob<string>("../../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });
const library = Object.entries(texts).map(([path, text]) =>
  summarizeScenario(path.slice(path.lastIndexOf("/") + 1), text),
);

const LESSONS = [
  "happy-path",
  "receiver-down-past-fallback-window",
  "rate-limited-then-down",
  "teach-mixed-recipient-results",
  "teach-failure-after-acceptance",
  "state-6-give-up-after-5-days",
];

describe("the start-here path", () => {
  it("every bundled scenario has a title and a one-line summary; the lessons are the issue's six, in order", () => {
    expect(library.length).toBeGreaterThan(40);
    for (const s of library) {
      expect(s.title, s.file).not.toBe(s.name);
      expect(s.summary, s.file).not.toBe("");
      expect(s.summary.length, s.file).toBeLessThanOrEqual(180);
    }
    expect(lessonPath(library).map((s) => s.name)).toEqual(LESSONS);
    const groups = groupLibrary(library);
    expect(groups.map((g) => g.title)).toEqual(["Start here", "Teaching", "State table", "Errors table", "Gaps"]);
    // Each scenario once: a lesson only under Start here.
    expect(groups.flatMap((g) => g.entries).length).toBe(library.length);
    // A search reads the titles too.
    expect(groupLibrary(library, "four fates").flatMap((g) => g.entries.map((e) => e.name))).toEqual([
      "teach-mixed-recipient-results",
    ]);
  });

  it("a lesson's place: its number, the lessons before and after; a teacher's own lesson takes its place by order", () => {
    const first = lessonPlace(library, { name: "happy-path", file: "happy-path.yaml" });
    expect(first).toMatchObject({ number: 1, total: 6, next: { name: "receiver-down-past-fallback-window" } });
    expect(first?.previous).toBeUndefined();
    expect(first?.lesson.watchFor.length).toBeGreaterThan(0);
    const last = lessonPlace(library, {
      name: "state-6-give-up-after-5-days",
      file: "state-6-give-up-after-5-days.yaml",
    });
    expect(last).toMatchObject({ number: 6, total: 6, previous: { name: "teach-failure-after-acceptance" } });
    expect(last?.next).toBeUndefined();
    expect(lessonPlace(library, { name: "gap-G7-ignored", file: "gap-G7-ignored.yaml" })).toBeUndefined();
    const mine = lessonPlace(library, {
      name: "my-lesson",
      file: "/home/me/my-lesson.yaml",
      lesson: { order: 2.5, watchFor: ["the pin"] },
    });
    expect(mine).toMatchObject({
      number: 3,
      total: 7,
      previous: { name: "receiver-down-past-fallback-window" },
      next: { name: "rate-limited-then-down" },
    });
  });

  // Each note is a claim about the run: it is placed on the run's events, and the event it names says what the note says.
  const at = (e: RecordedEvent | undefined, startMs: number) => (e === undefined ? undefined : e.timeMs - startMs);
  for (const name of LESSONS) {
    it(`${name}: every note of the lesson is placed on its run`, async () => {
      const trace = await scenarioTrace(name);
      const start = trace.startedAtMs;
      const notes = notesOfRun(annotationsOfText(scenarioText(name)), trace.events, start);
      expect(notes.length).toBeGreaterThanOrEqual(3);
      for (const n of notes) expect(n.timeMs, `${name}: ${n.note}`).toBeDefined();
      const bySeq = (seq: number | undefined) => trace.events.find((e) => e.seq === seq);
      switch (name) {
        case "receiver-down-past-fallback-window": {
          // ERR-21, STATE-3: attempt 1 ends at the capabilities request; the hand-off is attempt 8's at +2:03:00.
          expect(bySeq(notes[0]?.seq)?.data).toMatchObject({
            attempt: 1,
            stage: "capabilities",
            fallbackEligible: true,
          });
          expect(notes.map((n) => noteWhen(n, start, true))).toEqual(["+0:00:00", "+2:00:00", "+2:03:00"]);
          expect(bySeq(notes[2]?.seq)?.data).toMatchObject({ reason: "fallback", rule: "STATE-3" });
          break;
        }
        case "rate-limited-then-down": {
          // ERR-23: the 429 rules SMTP out; STATE-7 at 5 days; EVT-3.
          expect(bySeq(notes[0]?.seq)?.data).toMatchObject({
            attempt: 1,
            status: 429,
            allAttemptsFallbackEligible: false,
          });
          expect(at(bySeq(notes[2]?.seq), start)).toBe(5 * 86_400_000);
          expect(bySeq(notes[3]?.seq)?.data).toMatchObject({ to: "alice@a.example", reason: "bounced" });
          break;
        }
        case "teach-mixed-recipient-results": {
          // STATE-6: the retry is m1's delivery #2, for carol and dave, 9 minutes after m1 (RETRY-7).
          expect(bySeq(notes[1]?.seq)?.data).toMatchObject({ reason: "rejected", recipients: ["nobody@b.example"] });
          const retry = bySeq(notes[2]?.seq);
          expect(retry?.data).toMatchObject({
            deliveryId: "m1@a.example→b.example#2",
            recipients: ["carol@b.example", "dave@b.example"],
          });
          expect(at(retry, start)).toBe(10 * 60_000);
          expect(bySeq(notes[3]?.seq)?.data).toMatchObject({ recipients: ["dave@b.example"] });
          break;
        }
        case "teach-failure-after-acceptance": {
          // STATE-8, ENV-3: the DSN submitted with a null from, delivered to alice's mailbox.
          expect(bySeq(notes[0]?.seq)?.data).toMatchObject({ recipient: "bob@b.example", outcome: "accepted" });
          expect(bySeq(notes[2]?.seq)?.data).toMatchObject({ from: null, to: ["alice@a.example"] });
          expect(bySeq(notes[3]?.seq)?.data).toMatchObject({ mailbox: "alice@a.example" });
          break;
        }
        case "state-6-give-up-after-5-days": {
          // ERR-9, STATE-7: deferred mailbox_full; bounced at exactly 5 days.
          expect(bySeq(notes[0]?.seq)?.data).toMatchObject({ recipient: "bob@b.example", status: "deferred" });
          expect(String(bySeq(notes[0]?.seq)?.data?.["problem"])).toMatch(/mailbox_full$/);
          expect(at(bySeq(notes[2]?.seq), start)).toBe(5 * 86_400_000);
          break;
        }
        case "happy-path": {
          expect(bySeq(notes[2]?.seq)?.data).toMatchObject({ recipient: "bob@b.example", outcome: "accepted" });
          break;
        }
      }
    });
  }

  it("the notes due at a playhead: those reached and not seen, in time order; a note not reached says so", async () => {
    const name = "receiver-down-past-fallback-window";
    const trace = await scenarioTrace(name);
    const start = trace.startedAtMs;
    const annotations = annotationsOfText(scenarioText(name));
    const early = notesOfRun(annotations, trace.events.slice(0, 30), start);
    expect(noteWhen(early[2]!, start, false)).toBe("at the first smtp.handoff: not reached yet");
    expect(noteWhen(early[2]!, start, true)).toBe("at the first smtp.handoff: not in this run");
    const notes = notesOfRun(annotations, trace.events, start);
    expect(dueNotes(notes, new Set(), start).map((n) => n.index)).toEqual([0]);
    expect(dueNotes(notes, new Set([0]), start + 7_200_000).map((n) => n.index)).toEqual([1]);
    expect(dueNotes(notes, new Set([0]), start + 7_380_000).map((n) => n.index)).toEqual([1, 2]);
    expect(dueNotes(notes, new Set([0, 1, 2]), start + 9_000_000)).toEqual([]);
  });
});

describe("the note the playback is paused at", () => {
  it("is the note whose breakpoint made the stop; the user's breakpoints and steps are no note", () => {
    expect(pausedAtNote({ kind: "breakpoint", id: "note-3", seq: 96 })).toBe(2);
    expect(pausedAtNote({ kind: "time", id: "note-2", atMs: 7_200_000 })).toBe(1);
    expect(pausedAtNote({ kind: "breakpoint", id: "bp-1", seq: 5 })).toBeUndefined();
    expect(pausedAtNote({ kind: "step", level: "event", seq: 5 })).toBeUndefined();
    expect(pausedAtNote(undefined)).toBeUndefined();
  });
});
