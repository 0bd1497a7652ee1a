import { describe, it, expect } from "vitest";
import { rules, ruleById, rulesBySection, sections } from "./rules.ts";
import type { Rule, RuleStrength } from "./rules.ts";
import { gapById } from "./gaps.ts";

const all: readonly Rule[] = rules;

/** Prefix → the SPEC.md section its rules come from. */
const prefixSection: Readonly<Record<string, string>> = {
  SVC: sections.svc,
  MBX: sections.mbx,
  ENV: sections.env,
  DLR: sections.dlr,
  RCP: sections.rcp,
  CAP: sections.cap,
  PRB: sections.prb,
  STATE: sections.state,
  RETRY: sections.retry,
  POST: sections.post,
  GET: sections.get,
  AUTH: sections.auth,
  EVT: sections.evt,
  ERR: sections.err,
  LIM: sections.lim,
  VER: sections.ver,
};

/**
 * Every sentence (or sentence part) of SPEC.md carrying an RFC 2119 keyword,
 * extracted by hand from the spec (18 keyword occurrences on 16 lines). Each
 * must be represented by a rule of the same section and strength whose text
 * holds all the key phrases.
 */
const keywordSentences: readonly {
  readonly spec: string;
  readonly section: string;
  readonly strength: RuleStrength;
  readonly phrases: readonly string[];
}[] = [
  {
    spec: "The receiver SHOULD validate as much as possible before returning 2xx: recipient exists, quota, policy.",
    section: sections.svc,
    strength: "SHOULD",
    phrases: ["SHOULD validate as much as possible before returning 2xx", "recipient exists, quota, policy"],
  },
  {
    spec: "from … Domain MUST equal the signing domain.",
    section: sections.env,
    strength: "MUST",
    phrases: ["`from`", "MUST equal the signing domain"],
  },
  {
    spec: "(Envelope) Unknown fields MUST be ignored.",
    section: sections.env,
    strength: "MUST",
    phrases: ["Unknown fields", "MUST be ignored"],
  },
  {
    spec: "(DeliveryResult) Unknown fields MUST be ignored.",
    section: sections.dlr,
    strength: "MUST",
    phrases: ["Unknown fields", "MUST be ignored"],
  },
  {
    spec: "status … Senders MUST treat any unknown value as `deferred`.",
    section: sections.rcp,
    strength: "MUST",
    phrases: ["Senders MUST treat any unknown", "as `deferred`"],
  },
  {
    spec: "discovery_pin_max_age … Receivers SHOULD advertise 604800 (7 days).",
    section: sections.cap,
    strength: "SHOULD",
    phrases: ["Receivers SHOULD advertise", "604800 (7 days)"],
  },
  {
    spec: "Members MUST NOT announce optional protocol behavior;",
    section: sections.cap,
    strength: "MUST NOT",
    phrases: ["MUST NOT announce optional protocol behavior"],
  },
  {
    spec: "Unknown members MUST be ignored.",
    section: sections.cap,
    strength: "MUST",
    phrases: ["Unknown", "members MUST be ignored"],
  },
  {
    spec: "(Problem) Unknown fields MUST be ignored.",
    section: sections.prb,
    strength: "MUST",
    phrases: ["Unknown fields", "MUST be ignored"],
  },
  {
    spec: "Jitter: each delay SHOULD be randomized by +/-20 %",
    section: sections.retry,
    strength: "SHOULD",
    phrases: ["each retry delay SHOULD be randomized by +/-20 %"],
  },
  {
    spec: "Fallback window: SHOULD be 2 hours;",
    section: sections.retry,
    strength: "SHOULD",
    phrases: ["fallback window", "SHOULD be 2 hours"],
  },
  {
    spec: "Fallback window: … MUST be within 1 to 4 hours in production use",
    section: sections.retry,
    strength: "MUST",
    phrases: ["fallback window", "MUST be within 1 to 4 hours in production use"],
  },
  {
    spec: "Caching: Receivers SHOULD send `Cache-Control: max-age=3600`.",
    section: sections.get,
    strength: "SHOULD",
    phrases: ["Receivers SHOULD send `Cache-Control: max-age=3600`"],
  },
  {
    spec: "3. The domain of the envelope `from` MUST equal the signing domain (a null `from` is allowed).",
    section: sections.auth,
    strength: "MUST",
    phrases: ["The domain of the envelope `from` MUST equal the signing domain (a null `from` is allowed)"],
  },
  {
    spec: "4. Path under an unknown major version: `unsupported_version`, and the problem MUST carry `versions` listing all major versions served.",
    section: sections.err,
    strength: "MUST",
    phrases: ["`unsupported_version`", "MUST carry `versions` listing all major versions served"],
  },
  {
    spec: "7. Exception: … the sender MAY fall back to SMTP immediately, even while a pin is valid.",
    section: sections.err,
    strength: "MAY",
    phrases: ["no common major version", "the sender MAY fall back to SMTP immediately, even while a pin is valid"],
  },
  {
    spec: "2. … Receivers and senders MUST ignore unknown JSON fields and unknown capability members.",
    section: sections.ver,
    strength: "MUST",
    phrases: ["Receivers and senders MUST ignore unknown JSON fields and unknown capability members"],
  },
  {
    spec: "4. Senders use the highest version common to both sides and MUST NOT probe version paths.",
    section: sections.ver,
    strength: "MUST NOT",
    phrases: ["Senders MUST NOT probe version paths"],
  },
];

const idPattern = /^([A-Z]+)-([1-9][0-9]*)$/;

describe("rules catalogue", () => {
  it("has more than 100 rules", () => {
    expect(all.length).toBeGreaterThan(100);
  });

  it("has unique IDs of the form PREFIX-N", () => {
    const ids = all.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(idPattern);
  });

  it("numbers each prefix 1, 2, 3 … in order, and keeps it to its own section", () => {
    const next = new Map<string, number>();
    for (const r of all) {
      const m = idPattern.exec(r.id);
      const prefix = m?.[1] ?? "";
      const n = Number(m?.[2]);
      expect(Object.keys(prefixSection), r.id).toContain(prefix);
      expect(n, r.id).toBe((next.get(prefix) ?? 0) + 1);
      next.set(prefix, n);
      expect(r.section, r.id).toBe(prefixSection[prefix]);
    }
  });

  it("has every prefix", () => {
    const prefixes = new Set(all.map((r) => r.id.split("-")[0]));
    for (const p of Object.keys(prefixSection)) expect(prefixes, p).toContain(p);
  });

  it("keeps the prefixes in document order", () => {
    const order = Object.keys(prefixSection);
    const seen = all.map((r) => order.indexOf(r.id.split("-")[0] ?? ""));
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });

  it("gives every rule a self-contained text and at least one party", () => {
    for (const r of all) {
      expect(r.text.trim(), r.id).toBe(r.text);
      expect(r.text.length, r.id).toBeGreaterThan(10);
      expect(r.applies.length, r.id).toBeGreaterThan(0);
      expect(r.text, r.id).not.toMatch(/\b(it|this|these) (above|below)\b/i);
    }
  });

  it("writes the keyword of every keyword rule in its text, in capitals", () => {
    for (const r of all) {
      if (r.strength === "FACT" || r.strength === "REQUIRED") continue;
      expect(r.text, r.id).toMatch(new RegExp(`\\b${r.strength}\\b`));
    }
  });

  it("marks no FACT or REQUIRED rule whose text carries an RFC 2119 keyword", () => {
    for (const r of all) {
      if (r.strength !== "FACT" && r.strength !== "REQUIRED") continue;
      expect(r.text, r.id).not.toMatch(/\b(MUST|SHOULD|MAY)\b/);
    }
  });

  it("cites only gaps that exist in the gaps table", () => {
    for (const r of all) {
      for (const g of r.gaps ?? []) {
        expect(g, r.id).toMatch(/^G[1-9][0-9]*$/);
        expect(gapById(g), `${r.id} cites ${g}`).toBeDefined();
      }
    }
  });

  it("represents every SPEC.md sentence with MUST, SHOULD or MAY", () => {
    expect(keywordSentences).toHaveLength(18);
    for (const s of keywordSentences) {
      const match = all.find(
        (r) => r.section === s.section && r.strength === s.strength && s.phrases.every((p) => r.text.includes(p)),
      );
      expect(match, s.spec).toBeDefined();
    }
  });

  it("has one keyword rule per keyword occurrence, no more", () => {
    // The spec repeats itself (ENV-2 and AUTH-4; the ignore-unknown rules and
    // VER-3), and the catalogue keeps each occurrence as its own rule, so the
    // keyword rules and the keyword sentences pair off one to one.
    const keywordRules = all.filter((r) => r.strength !== "FACT" && r.strength !== "REQUIRED");
    expect(keywordRules).toHaveLength(keywordSentences.length);
  });

  it("splits the Envelope `to` row into its four rules", () => {
    const texts = ["ENV-5", "ENV-6", "ENV-7", "ENV-8"].map((id) => ruleById(id)?.text ?? "");
    expect(texts[0]).toContain("at least 1 item");
    expect(texts[1]).toContain("unique");
    expect(texts[2]).toContain("one domain");
    expect(texts[3]).toContain("max_recipients");
  });

  it("has one STATE rule per row of the states table, after the status-values sentence", () => {
    expect(all.filter((r) => r.id.startsWith("STATE-"))).toHaveLength(9);
    expect(ruleById("STATE-1")?.text).toContain("`accepted`, `rejected` and `deferred`");
    expect(ruleById("STATE-7")?.text).toContain("5 days");
  });
});

describe("ruleById", () => {
  it("finds a rule by its ID", () => {
    expect(ruleById("MBX-6")?.text).toContain("64 octets");
    expect(ruleById("ERR-26")?.strength).toBe("MAY");
  });

  it("returns undefined for an unknown ID", () => {
    expect(ruleById("MBX-999")).toBeUndefined();
    expect(ruleById("")).toBeUndefined();
  });
});

describe("rulesBySection", () => {
  it("holds every rule once, in document order", () => {
    const flat = [...rulesBySection.values()].flat();
    expect(flat.map((r) => r.id)).toEqual(all.map((r) => r.id));
  });

  it("lists the sections in document order", () => {
    expect([...rulesBySection.keys()]).toEqual(Object.values(sections));
  });
});
