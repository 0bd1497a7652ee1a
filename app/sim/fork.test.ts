/**
 * The fork's scenario text — the changed fault cut
 * at the fork time, a new fault or message from it — and located errors for
 * a fork that cannot be made.
 */
import { describe, expect, it } from "vitest";
import g16Default from "../../scenarios/gap-G16-fallback-window-2h.yaml?raw";
import { durationText, forkScenario } from "./fork.ts";
import { parseScenarioText } from "./scenario.ts";

const THIRTY_MINUTES = 30 * 60_000;

function forked(...args: Parameters<typeof forkScenario>) {
  const fork = forkScenario(...args);
  if (!fork.ok) throw new Error(JSON.stringify(fork.errors));
  const parsed = parseScenarioText(fork.text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return { ...fork, scenario: parsed.scenario };
}

describe("forkScenario", () => {
  it("end a fault: its until becomes the fork time; the name and description say so; expectations are left out", () => {
    const fork = forked(g16Default, THIRTY_MINUTES, { kind: "end-fault", fault: "b-down" });
    expect(fork.scenario.faults.network[0]?.until).toBe("30m");
    expect(fork.name).toBe("gap-G16-fallback-window-2h-fork-30m");
    expect(fork.scenario.description).toMatch(
      /^Forked from gap-G16-fallback-window-2h at \+0:30:00: ended fault b-down\./,
    );
    expect(fork.scenario.expectations).toEqual([]);
    // The rest of the file is kept as it was written: its schema comment, its flow lists.
    expect(fork.text).toMatch(/^# yaml-language-server: \$schema=/);
    expect(fork.text).toContain("mailboxes: [alice]");
  });

  it("change a probability: the fault ends at the fork time and a copy with the new probability goes on from it", () => {
    const fork = forked(g16Default, THIRTY_MINUTES, { kind: "set-probability", fault: "b-down", probability: 0.5 });
    const [before, after] = fork.scenario.faults.network;
    expect(before?.until).toBe("30m");
    expect(after).toMatchObject({
      id: "b-down-from-30m",
      kind: "connection-refused",
      from: "30m",
      until: "2h30m",
      probability: 0.5,
    });
  });

  it("start a fault and submit a message at the fork time", () => {
    const started = forked(g16Default, 90 * 60_000, {
      kind: "start-fault",
      faultKind: "timeout",
      host: "mx.b.example",
      forMs: 3_600_000,
    });
    expect(started.scenario.faults.network[1]).toMatchObject({
      id: "fork-timeout",
      kind: "timeout",
      host: "mx.b.example",
      from: "1h30m",
      until: "2h30m",
    });
    const submitted = forked(g16Default, THIRTY_MINUTES, {
      kind: "submit",
      from: "alice@a.example",
      to: ["bob@b.example"],
    });
    expect(submitted.scenario.messages[1]).toMatchObject({
      id: "m2",
      at: "30m",
      from: "alice@a.example",
      to: ["bob@b.example"],
    });
  });

  it("bad forks are located errors: an unknown fault, one not active then, a bad probability, an unknown kind", () => {
    const unknown = forkScenario(g16Default, THIRTY_MINUTES, { kind: "end-fault", fault: "nope" });
    expect(unknown).toMatchObject({
      ok: false,
      errors: [{ field: "(fork)", message: "no fault nope in the scenario (its faults: b-down)" }],
    });
    const late = forkScenario(g16Default, 3 * 3_600_000, { kind: "end-fault", fault: "b-down" }, "g16.yaml");
    expect(late.ok).toBe(false);
    if (!late.ok) {
      expect(late.errors[0]).toMatchObject({ file: "g16.yaml", field: "faults.network[0]" });
      expect(late.errors[0]?.line).toBeGreaterThan(1);
      expect(late.errors[0]?.message).toBe("fault b-down is not active at +3:00:00 (it is from the start to +2:30:00)");
    }
    const p = forkScenario(g16Default, THIRTY_MINUTES, { kind: "set-probability", fault: "b-down", probability: 2 });
    expect(p.ok || p.errors[0]?.message).toBe("a probability is from 0 to 1 (got 2)");
    const kind = forkScenario(g16Default, THIRTY_MINUTES, {
      kind: "start-fault",
      faultKind: "gremlins",
      host: "mx.b.example",
    });
    expect(kind.ok).toBe(false);
    const broken = forkScenario("name: [", THIRTY_MINUTES, { kind: "end-fault", fault: "x" });
    expect(broken.ok).toBe(false);
  });

  it("durationText writes times as a scenario does", () => {
    expect(durationText(30 * 60_000)).toBe("30m");
    expect(durationText(2 * 3_600_000 + 3 * 60_000)).toBe("2h3m");
    expect(durationText(86_400_000 + 1000)).toBe("1d1s");
    expect(durationText(1500)).toBe("1500");
    expect(durationText(0)).toBe("0s");
  });
});
