import { describe, expect, it } from "vitest";
import schemaJson from "../../../schemas/scenario.schema.json" with { type: "json" };
import { formatScenarioError, parseScenarioText } from "../../../app/sim/scenario.ts";
import { offsetOf, problemCount, scenarioDiagnostics } from "./editorDiagnostics.ts";
import {
  BLANK_TEMPLATE,
  copyName,
  duplicateDoc,
  fileDoc,
  isDirty,
  newDoc,
  saveAsName,
  savedDoc,
  withScenarioName,
} from "./editorDoc.ts";
import { completeAt, hoverAt, ITEM, pathText, schemaAt, type SchemaNode } from "./editorSchema.ts";

/** Completion and hover from schemas/scenario.schema.json, diagnostics from the parser. */

const schema = schemaJson as unknown as SchemaNode;
const texts = import.meta.glob<string>("../../../scenarios/*.yaml", { query: "?raw", import: "default", eager: true });
const scenario = (file: string) => {
  const text = texts[`../../../scenarios/${file}`];
  if (text === undefined) throw new Error(`no scenarios/${file}`);
  return text;
};

/** The text with `|` taken out, and where it stood. */
function at(marked: string): [string, number] {
  const i = marked.indexOf("|");
  return [marked.slice(0, i) + marked.slice(i + 1), i];
}

const labels = (marked: string) => {
  const [text, offset] = at(marked);
  return completeAt(schema, text, offset)?.options.map((o) => o.label);
};

describe("completion from the scenario schema", () => {
  it("offers the top-level fields not yet written, required ones first", () => {
    const [text, offset] = at("name: x\nseed: 1\n|\n");
    const c = completeAt(schema, text, offset)!;
    expect(c.path).toEqual([]);
    const keys = c.options.map((o) => o.label);
    expect(keys).toEqual(expect.arrayContaining(["domains", "messages", "faults", "expectations", "readings"]));
    expect(keys).not.toContain("name");
    expect(keys).not.toContain("seed");
    const domains = c.options.find((o) => o.label === "domains")!;
    expect(domains.detail).toMatch(/required/);
    expect(domains.boost).toBe(1);
    // A mapping's key opens the next line at its indentation; a list of mappings, an item.
    expect(domains.apply).toBe("domains:\n  ");
    expect(c.options.find((o) => o.label === "messages")?.apply).toBe("messages:\n  - ");
    expect(c.options.find((o) => o.label === "horizon")?.apply).toBe("horizon: ");
  });

  it("replaces the word typed so far", () => {
    const [text, offset] = at("name: x\nexp|\n");
    const c = completeAt(schema, text, offset)!;
    expect(text.slice(c.from, c.to)).toBe("exp");
    expect(c.options.map((o) => o.label)).toContain("expectations");
  });

  it("knows the keys of a fault by the path of its mapping (faults.network[])", () => {
    const text = "faults:\n  network:\n    - kind: connection-refused\n      |\n";
    const [t, o] = at(text);
    const c = completeAt(schema, t, o)!;
    expect(pathText(c.path)).toBe("faults.network[]");
    expect(c.options.map((x) => x.label)).toEqual(expect.arrayContaining(["host", "from", "until", "probability"]));
    expect(c.options.map((x) => x.label)).not.toContain("kind");
    // The discriminator picks the branch: connection-refused has no phase, connection-reset has.
    expect(c.options.map((x) => x.label)).not.toContain("phase");
    expect(labels("faults:\n  network:\n    - kind: connection-reset\n      |\n")).toContain("phase");
    expect(c.options.find((x) => x.label === "probability")?.info).toMatch(/Chance in \[0, 1\]/);
  });

  it("offers every fault kind as the value of kind, and enum values of readings", () => {
    const kinds = labels("faults:\n  network:\n    - kind: conn|\n")!;
    expect(kinds).toEqual(expect.arrayContaining(["connection-refused", "connection-reset", "timeout", "tls-failure"]));
    const [text, offset] = at("faults:\n  network:\n    - kind: conn|\n");
    const c = completeAt(schema, text, offset)!;
    expect(text.slice(c.from, c.to)).toBe("conn");
    expect(labels("readings:\n  G7: |\n")).toEqual(["enforced", "ignored"]);
    expect(labels("readings:\n  G19: |\n")).toEqual(["401", "403"]);
    expect(labels("domains:\n  b.example:\n    catchAll: |\n")).toEqual(["true", "false"]);
    expect(labels("expectations:\n  - outcome: |\n")).toEqual([
      "accepted",
      "rejected",
      "smtp",
      "bounced",
      "dsn-received",
    ]);
    expect(labels("readings:\n  |\n")).toEqual(expect.arrayContaining(["G3", "G7", "G16", "G47"]));
  });

  it("goes through domain names (any key) into a domain's fields", () => {
    const c = labels("domains:\n  b.example:\n    mailboxes: [bob]\n    |\n")!;
    expect(c).toEqual(expect.arrayContaining(["capabilities", "policy", "endpoint", "catchAll"]));
    expect(c).not.toContain("mailboxes");
    expect(labels("domains:\n  b.example:\n    capabilities:\n      |\n")).toEqual(
      expect.arrayContaining(["versions", "max_message_size"]),
    );
  });

  it("reads compact lists (items at their key's indentation) and a new item's first key", () => {
    expect(labels("messages:\n- id: m1\n  |\n")).toEqual(expect.arrayContaining(["from", "to", "at"]));
    expect(labels("messages:\n  - id: m1\n    to: bob@b.example\n  - |\n")).toEqual(
      expect.arrayContaining(["id", "from", "to"]),
    );
  });

  it("completes a lesson's fields and its annotations: at or on, the trace's event kinds, nth, note, pause", () => {
    expect(labels("name: x\n|\n")).toEqual(expect.arrayContaining(["title", "lesson", "annotations"]));
    expect(labels("lesson:\n  |\n")).toEqual(["order", "watchFor"]);
    expect(labels("annotations:\n  - |\n")).toEqual(expect.arrayContaining(["at", "on", "nth", "note", "pause"]));
    expect(labels("annotations:\n  - note: hi\n    |\n")).not.toContain("note");
    const kinds = labels("annotations:\n  - on: smtp|\n")!;
    expect(kinds).toEqual(expect.arrayContaining(["smtp.handoff", "attempt.judged", "delivery.bounced", "dsn.sent"]));
    expect(labels("annotations:\n  - pause: |\n")).toEqual(["true", "false"]);
    const [text, offset] = at("annotations:\n  - o|n: smtp.handoff\n");
    expect(hoverAt(schema, text, offset)?.description).toMatch(/event kind the note is about/);
  });

  it("says nothing where the schema knows nothing", () => {
    expect(completeAt(schema, "name: |x", 6)).toBeUndefined();
    expect(labels("domains:\n  b.example:\n    nonsense:\n      |\n")).toBeUndefined();
  });

  it("resolves paths through unions and lists", () => {
    expect(schemaAt(schema, ["faults", "network", ITEM, "probability"])?.maximum).toBe(1);
    expect(schemaAt(schema, ["domains", "x.example", "policy", "rateLimits", ITEM, "max"])?.type).toBe("integer");
  });
});

describe("hover docs from the scenario schema", () => {
  it("gives the path, the type and the description of the key under the pointer", () => {
    const text = scenario("rate-limited-then-down.yaml");
    const fault = "faults:\n  network:\n    - kind: timeout\n      probability: 0.5\n";
    const p = hoverAt(schema, fault, fault.indexOf("probability") + 2)!;
    expect(p.title).toBe("faults.network[].probability");
    expect(p.type).toBe("number in [0, 1]");
    expect(p.description).toMatch(/^Chance in \[0, 1\]/);
    const seed = hoverAt(schema, text, text.indexOf("seed:") + 1)!;
    expect(seed).toMatchObject({ title: "seed", required: false, type: "integer ≥ 0 or string" });
    expect(seed.description).toMatch(/--seed overrides it/);
    expect(text.slice(seed.from, seed.to)).toBe("seed");
    const name = hoverAt(schema, text, text.indexOf("name:"))!;
    expect(name).toMatchObject({ title: "name", required: true, type: "string" });
  });

  it("on a value, documents its key; a fault's kind lists the kinds", () => {
    const text = "faults:\n  network:\n    - kind: timeout\n      host: b.example\n";
    const h = hoverAt(schema, text, text.indexOf("timeout") + 2)!;
    expect(h.title).toBe("faults.network[].kind");
    expect(h.type).toMatch(/"connection-refused"/);
    expect(h.required).toBe(true);
    expect(hoverAt(schema, text, text.indexOf("host") + 1)?.title).toBe("faults.network[].host");
  });

  it("has nothing for keys the schema does not know", () => {
    const text = "domains:\n  b.example:\n    nonsense: 1\n";
    expect(hoverAt(schema, text, text.indexOf("nonsense"))).toBeUndefined();
  });
});

describe("diagnostics from the engine's scenario parser", () => {
  const broken = (kind: string) => `name: x
domains:
  a.example:
    mailboxes: [alice]
  b.example:
    mailboxes: [bob]
messages:
  - id: m1
    at: 0
    from: alice@a.example
    to: bob@b.example
faults:
  network:
    - kind: ${kind} # the outage
      from: 0
`;

  it("an unknown fault kind is marked at its line, with the CLI's file:line:column: field: message", () => {
    const text = broken("conection-refused");
    const ds = scenarioDiagnostics(text, "mine.yaml");
    expect(ds).toHaveLength(1);
    const d = ds[0]!;
    expect(d).toMatchObject({ line: 14, column: 13, field: "faults.network[0].kind" });
    expect(d.text).toMatch(
      /^mine\.yaml:14:13: faults\.network\[0\]\.kind: unknown kind "conection-refused"; the kinds are /,
    );
    // The same text as the parser gives the CLI.
    const parsed = parseScenarioText(text, "mine.yaml");
    expect(parsed.ok ? [] : parsed.errors.map(formatScenarioError)).toEqual([d.text]);
    // The mark covers the value, not its comment.
    expect(text.slice(d.from, d.to)).toBe("conection-refused");
    expect(scenarioDiagnostics(broken("connection-refused"), "mine.yaml")).toEqual([]);
  });

  it("YAML syntax errors, unknown fields and missing ones have positions too", () => {
    const syntax = scenarioDiagnostics("name: x\ndomains: [\n", "s.yaml");
    expect(syntax.length).toBeGreaterThan(0);
    expect(syntax[0]!.field).toBe("(yaml)");
    const unknown = scenarioDiagnostics("name: x\nmesages: []\ndomains: {}\n", "s.yaml");
    const m = unknown.find((d) => d.message.startsWith('unknown field "mesages"'))!;
    expect(m).toMatchObject({ line: 2, column: 1 });
    expect("name: x\nmesages: []\ndomains: {}\n".slice(m.from, m.to)).toBe("mesages: []");
    const empty = scenarioDiagnostics("", "s.yaml");
    expect(empty[0]).toMatchObject({ line: 1, column: 1, field: "(file)", from: 0, to: 0 });
  });

  it("every library scenario reads without a problem", () => {
    for (const file of ["happy-path.yaml", "teach-no-common-version.yaml", "rate-limited-then-down.yaml"]) {
      expect(scenarioDiagnostics(scenario(file), file)).toEqual([]);
    }
    expect(scenarioDiagnostics(BLANK_TEMPLATE, "my-scenario.yaml")).toEqual([]);
  });

  it("places line and column, clamped to the text", () => {
    expect(offsetOf("ab\ncd\n", 2, 2)).toBe(4);
    expect(offsetOf("ab\ncd", 9, 1)).toBe(5);
    expect(offsetOf("ab\r\ncd", 1, 9)).toBe(2);
    expect(problemCount(0)).toBe("No problems");
    expect(problemCount(1)).toBe("1 problem");
    expect(problemCount(3)).toBe("3 problems");
  });
});

describe("the editor's document", () => {
  it("a teaching scenario duplicates into an unsaved copy, renamed", () => {
    const text = scenario("teach-no-common-version.yaml");
    const doc = duplicateDoc("teach-no-common-version.yaml", text);
    expect(doc.name).toBe("teach-no-common-version-copy.yaml");
    expect(doc.untitled).toBe(true);
    expect(doc.text).toMatch(/^name: teach-no-common-version-copy$/m);
    expect(doc.text.replace(/^name:.*$/m, "")).toBe(text.replace(/^name:.*$/m, ""));
    expect(scenarioDiagnostics(doc.text, doc.name)).toEqual([]);
    expect(isDirty(doc, doc.text)).toBe(false);
    expect(isDirty(doc, `${doc.text}# more\n`)).toBe(true);
  });

  it("names, saves and unsaved changes", () => {
    expect(copyName("scenarios/a.yml")).toBe("a-copy.yml");
    expect(copyName("noext")).toBe("noext-copy.yaml");
    expect(withScenarioName("# c\nseed: 1\n", "n")).toBe("# c\nname: n\nseed: 1\n");
    expect(saveAsName(" ../dir/Outage ")).toBe("Outage.yaml");
    expect(saveAsName("a.YML")).toBe("a.YML");
    expect(saveAsName("  ")).toBeUndefined();
    expect(saveAsName("..")).toBeUndefined();
    const doc = newDoc();
    expect(isDirty(doc, doc.text)).toBe(false);
    const saved = savedDoc(doc, "name: y\n", "y.yaml", "/home/u/y.yaml");
    expect(saved).toMatchObject({ name: "y.yaml", path: "/home/u/y.yaml", untitled: false, savedText: "name: y\n" });
    expect(isDirty(saved, "name: y\n")).toBe(false);
    expect(isDirty(saved, "name: z\n")).toBe(true);
    const opened = fileDoc("o.yaml", "name: o\n", "/o.yaml");
    expect(isDirty(opened, "name: o\n")).toBe(false);
    expect(savedDoc(opened, "x", "p.yaml").path).toBeUndefined();
  });

  it("an opened file keeps the eml: files main read next to it for its runs, while it is saved where it was", () => {
    const emlFiles = { emls: { "mail/x.eml": new Uint8Array([1]) }, emlErrors: { "mail/y.eml": "no such file" } };
    const opened = fileDoc("o.yaml", "name: o\n", "/s/o.yaml", emlFiles);
    expect(opened.emlFiles).toBe(emlFiles);
    expect(savedDoc(opened, "name: p\n", "o.yaml", "/s/o.yaml").emlFiles).toBe(emlFiles);
    // Saved elsewhere, its relative eml: paths name other files, which main has not read.
    expect(savedDoc(opened, "name: p\n", "o.yaml", "/t/o.yaml").emlFiles).toBeUndefined();
    expect(savedDoc(opened, "name: p\n", "o.yaml").emlFiles).toBeUndefined();
    expect(fileDoc("o.yaml", "name: o\n").emlFiles).toBeUndefined();
  });
});
