import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseScenarioText, recipientsOf, type ScenarioInput } from "../sim/scenario.ts";
import { formatDuration, generateWorld, scenarioYaml, worldSize } from "./generate.ts";
import { withPart } from "./genome.ts";
import { exploreOptions, FEATURE_NAMES } from "./options.ts";

const DEFAULTS = exploreOptions();
const world = (base: number, options = DEFAULTS) => generateWorld({ base, overrides: {} }, options);

describe("swarm generation of worlds", () => {
  it("makes the same world from the same seed and options", () => {
    expect(scenarioYaml(world(7).scenario)).toBe(scenarioYaml(world(7).scenario));
    expect(scenarioYaml(world(7).scenario)).not.toBe(scenarioYaml(world(8).scenario));
  });

  it("makes valid scenarios, as YAML a person opens (150 seeds)", () => {
    for (let base = 0; base < 150; base++) {
      const text = scenarioYaml(world(base).scenario);
      const parsed = parseScenarioText(text, `w${base}.yaml`);
      expect(parsed.ok, `seed ${base}: ${parsed.ok ? "" : JSON.stringify(parsed.errors[0])}`).toBe(true);
      expect(parse(text)).toEqual(JSON.parse(JSON.stringify(world(base).scenario)));
    }
  });

  it("keeps within the options' ranges", () => {
    const small = exploreOptions({
      domains: { max: 2 },
      messages: { min: 2, max: 3 },
      recipients: { max: 4 },
      networkFaults: { max: 1 },
    });
    for (let base = 0; base < 200; base++) {
      const s = world(base, small).scenario;
      const size = worldSize(s);
      expect(size.domains).toBeLessThanOrEqual(2);
      expect(size.messages).toBeGreaterThanOrEqual(2);
      expect(size.messages).toBeLessThanOrEqual(3);
      for (const m of s.messages ?? []) expect(recipientsOf(m).length).toBeLessThanOrEqual(4);
      expect(s.faults?.network?.length ?? 0).toBeLessThanOrEqual(1);
    }
  });

  it("draws each run's features (swarm): different runs turn on different ones, and an option turns one off", () => {
    const seen = new Set<string>();
    for (let base = 0; base < 50; base++) seen.add([...world(base).swarm.features].sort().join(","));
    expect(seen.size).toBe(50);
    const none = exploreOptions({ features: Object.fromEntries(FEATURE_NAMES.map((f) => [f, false])) });
    for (let base = 0; base < 50; base++) {
      const w = world(base, none);
      expect(w.swarm.features.size).toBe(0);
      expect(worldSize(w.scenario).faults).toBe(0);
      expect(w.scenario.readings).toBeUndefined();
    }
  });

  it("reaches the issue's knobs: many recipients, SMTP-only domains, late submissions, readings, faults of every layer", () => {
    const found = {
      many: false,
      smtpOnly: false,
      late: false,
      readings: false,
      network: false,
      dns: false,
      changes: false,
    };
    for (let base = 0; base < 300; base++) {
      const s: ScenarioInput = world(base).scenario;
      found.many ||= (s.messages ?? []).some((m) => recipientsOf(m).length > 100);
      found.smtpOnly ||= Object.values(s.domains).some((d) => d.receiver === "none");
      found.late ||= (s.messages ?? []).some((m) => typeof m.at === "string" && m.at.includes("d"));
      found.readings ||= Object.keys(s.readings ?? {}).length > 0;
      found.network ||= (s.faults?.network?.length ?? 0) > 0;
      found.dns ||= (s.faults?.dns?.length ?? 0) > 0;
      found.changes ||= (s.faults?.dnsChanges?.length ?? 0) > 0;
    }
    expect(found).toEqual({
      many: true,
      smtpOnly: true,
      late: true,
      readings: true,
      network: true,
      dns: true,
      changes: true,
    });
  });

  it("redraws only the part a mutation names", () => {
    const base = { base: 11, overrides: {} };
    const a = generateWorld(base, DEFAULTS).scenario;
    const b = generateWorld(withPart(base, "faults", 99), DEFAULTS).scenario;
    expect(b.domains).toEqual(a.domains);
    expect(b.messages).toEqual(a.messages);
    expect(b.seed).toBe(a.seed);
  });

  it("writes durations as a person would", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(5_400_000)).toBe("1h30m");
    expect(formatDuration(4 * 86_400_000 + 1500)).toBe("4d1s500ms");
  });
});
