import { describe, expect, it } from "vitest";
import { formatOffset, readableRecordedText, recordedOffset } from "./offset.ts";

describe("a recorded check's times, as a person reads them", () => {
  it("STATE-4: a time past a day reads as every other time on screen, the same instant", () => {
    const fiveDays = 5 * 86_400_000;
    const recorded = `handed to SMTP for no common version at ${recordedOffset(fiveDays, 0)}, but the last attempt showed none [STATE-4]`;
    expect(recorded).toContain("+120:00:00");
    expect(readableRecordedText(recorded)).toBe(
      "handed to SMTP for no common version at +5d 0:00:00, but the last attempt showed none [STATE-4]",
    );
  });

  it("keeps times under a day, milliseconds, negatives and text that is no time as they are", () => {
    for (const ms of [0, 59_000, 3_600_000 * 23 + 59_999, 86_400_000 + 1, 86_400_000 * 400 + 3_723_004, -90_000_000]) {
      expect(readableRecordedText(`at ${recordedOffset(ms, 0)}.`)).toBe(`at ${formatOffset(ms, 0)}.`);
    }
    for (const text of ["+23:59:59", "v1:30:00", "10:99:00", "+120:00", "2026-11-28T120:00:00Z", "x+120:00:00"]) {
      expect(readableRecordedText(text)).toBe(text);
    }
    expect(readableRecordedText("from +25:00:00 to +49:30:00")).toBe("from +1d 1:00:00 to +2d 1:30:00");
  });
});
