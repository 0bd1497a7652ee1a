/**
 * A bug bundle: one JSON file that holds everything needed to see a run and
 * to reproduce it — the scenario's text and name, the seed, the readings in
 * force, the Mailscope version, the trace (as `exportJson` writes it) and the
 * Markdown report (`exportMarkdown`) — and, for a scenario that takes a
 * message from an `eml:` file, that file's bytes (`emls`, base64, version 2).
 * docs/bundle-format.md describes it;
 * docs/decisions/0018-bug-bundle-as-json.md says why one JSON file, not a zip.
 *
 * `traceHash` is the SHA-256 of the bundled trace's canonical JSON (the trace
 * as the bundle holds it: redacted as exported). Reading a bundle checks it,
 * so a trace changed after the export is caught; replaying one re-runs the
 * scenario with the same seed, readings and body recording, exports the new
 * trace the same way and compares the hashes, and when they differ finds the
 * first event (or member) that does.
 *
 * Pure: web-standard APIs only (runs in Node, a Worker, the page). Violations
 * name Mailscope's own rules `BUNDLE-FORMAT`, `BUNDLE-VERSION`,
 * `BUNDLE-SCHEMA`, `BUNDLE-HASH` (a problem of the trace inside keeps its
 * `TRACE-*` rule, with its path under `$.trace`).
 */
import { parse } from "yaml";
import * as z from "zod";
import { bytesToBase64 } from "../protocol/base64.ts";
import { childPath, fail, failWith, ok, type Parsed, type Violation } from "../protocol/result.ts";
import { MAX_MESSAGE_BYTES } from "../protocol/resources.ts";
import { describeEvent } from "./describe.ts";
import {
  canonicalJson,
  exportJson,
  exportJsonChunks,
  redactEvent,
  redactedEvents,
  traceHash,
  withoutEvents,
} from "./exportJson.ts";
import { exportMarkdown } from "./exportMarkdown.ts";
import { importTraceValue } from "./importer.ts";
import { formatOffset } from "./offset.ts";
import type { RecordedEvent, Trace } from "./schema.ts";
import { eventsOf, holdEvents } from "./store.ts";
import { pushAll } from "../protocol/lists.ts";

/** The `format` member of every bundle. */
export const BUNDLE_FORMAT = "mailscope-bundle";
/**
 * The newest bundle version, which this Mailscope writes when the bundle
 * carries `emls`: version 2 added them. A bundle without them is written as
 * version 1, which every Mailscope reads; this one reads both.
 */
export const BUNDLE_VERSION = 2;
/** The bundle versions this Mailscope reads. */
export const BUNDLE_VERSIONS_READ: readonly number[] = [1, 2];
/**
 * The most bytes of one `eml:` file a bundle holds: the largest message a
 * scenario reads (app/sim/scenario.ts `MAX_MESSAGE_BYTES`, 100 MiB). Its
 * base64 is at most a third longer.
 */
export const MAX_EML_BYTES: number = MAX_MESSAGE_BYTES;
/** The file name ending the app and the docs suggest (`.msbundle`, fileNames.ts). */
export { BUNDLE_SUFFIX } from "./fileNames.ts";

/** Zod schema of a bundle's members besides the trace (checked by the trace importer). */
export const bundleHeadSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  version: z.union([z.literal(1), z.literal(2)]),
  mailscope: z.string().min(1),
  scenario: z.object({
    name: z.string().min(1),
    file: z.string().optional(),
    text: z.string().min(1),
  }),
  seed: z.union([z.int().min(0).max(Number.MAX_SAFE_INTEGER), z.string()]),
  readings: z.record(z.string(), z.string()),
  recordBodies: z.boolean(),
  traceHash: z.string().regex(/^[0-9a-f]{64}$/, "a SHA-256 in lowercase hex (64 characters)"),
  passed: z.boolean().optional(),
  report: z.string(),
  /** The bytes of the scenario's `eml:` files, base64, by the path as the scenario writes it (version 2). */
  emls: z.record(z.string(), z.string()).optional(),
});

/** A bug bundle, as read and as written. */
export interface Bundle extends z.output<typeof bundleHeadSchema> {
  readonly trace: Trace;
}

/** Options of {@link createBundle}. */
export interface CreateBundleOptions {
  /** Whether the run recorded whole HTTP bodies (a replay records them alike). */
  readonly recordBodies: boolean;
  /** Keep the bodies in the bundled trace (only when recorded). Default false. */
  readonly full?: boolean;
  /** The scenario file, when the trace does not name one (for the report's command). */
  readonly file?: string;
  /** Whether every check passed; default: read off the trace's checks. */
  readonly passed?: boolean;
  /** The bytes of the scenario's `eml:` files, by the path as the scenario writes it (a replay needs them). */
  readonly emls?: Readonly<Record<string, Uint8Array>>;
}

/** Why a trace cannot be bundled (it has no scenario text). */
export class BundleError extends Error {
  override readonly name = "BundleError";
}

/**
 * The bundle of a run's trace. The trace must carry its scenario's text (every
 * run does; a trace from an older file may not).
 *
 * @throws BundleError when the trace has no scenario text.
 */
export async function createBundle(trace: Trace, options: CreateBundleOptions): Promise<Bundle> {
  const full = bundledBodies(trace, options);
  const exported = JSON.parse(exportJson(trace, { full })) as Trace;
  return { ...(await bundleHead(trace, options, exported, exported)), trace: exported };
}

/**
 * {@link bundleText} of {@link createBundle}'s bundle, in pieces (`writeFile(path, await bundleTextChunks(…))`):
 * the trace exported one event at a time from a recorder's store when it holds them, and hashed the same way,
 * never all of its events as objects nor its whole text at once (decision 0225). Joined, the pieces are the
 * bundle's text, byte for byte.
 *
 * @throws BundleError when the trace has no scenario text.
 */
export async function bundleTextChunks(trace: Trace, options: CreateBundleOptions): Promise<Iterable<string>> {
  const full = bundledBodies(trace, options);
  // The members but the events, as the export writes them (its order, private keys redacted).
  const exportedHead = JSON.parse(exportJson({ ...withoutEvents(trace), events: [] }, { full })) as Trace;
  // The exported trace as its hash reads it: those members, and each event redacted as the export has it.
  const hashed = { ...exportedHead };
  const events = eventsOf(trace);
  const redacted = redactedEvents(events, !full);
  holdEvents(hashed, {
    length: events.length,
    at: (index) => {
      const event = events.at(index);
      return event === undefined ? undefined : redactEvent(event, !full);
    },
    [Symbol.iterator]: () => redacted[Symbol.iterator](),
  });
  const head = await bundleHead(trace, options, exportedHead, hashed);
  const marker = "\u0000trace\u0000";
  const text = bundleText({ ...head, trace: marker as unknown as Trace });
  const at = text.indexOf(JSON.stringify(marker));
  const after = text.slice(at + JSON.stringify(marker).length);
  return {
    *[Symbol.iterator]() {
      yield text.slice(0, at);
      // The export's text one level in, as JSON.stringify writes the trace member: each line after the first
      // two spaces further in, and without the export's closing newline.
      let previous: string | undefined;
      for (const piece of exportJsonChunks(trace, { full })) {
        if (previous !== undefined) yield previous.replaceAll("\n", "\n  ");
        previous = piece;
      }
      yield (previous ?? "").replace(/\n$/, "").replaceAll("\n", "\n  ");
      yield after;
    },
  };
}

/** Whether the bundled trace keeps the bodies: asked for, and recorded. Throws when the trace cannot be bundled. */
function bundledBodies(trace: Trace, options: CreateBundleOptions): boolean {
  const text = trace.scenario.source;
  if (text === undefined || text === "") {
    throw new BundleError(
      `the trace of ${trace.scenario.name} does not hold its scenario's text, so a bundle could not re-run it`,
    );
  }
  return options.full === true && options.recordBodies;
}

/** The bundle's members but its trace: `exported` is the export's document (its events not read), `hashed` it whole. */
async function bundleHead(
  trace: Trace,
  options: CreateBundleOptions,
  exported: Trace,
  hashed: Trace,
): Promise<Omit<Bundle, "trace">> {
  const checks = [...(trace.invariants ?? []), ...(trace.expectations ?? [])];
  // Sorted by path: the same files make the same bundle text.
  const emls = Object.entries(options.emls ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, bytes]) => [path, bytesToBase64(bytes)] as const);
  return {
    format: BUNDLE_FORMAT,
    // Version 1 when there is nothing version 2 added: an older Mailscope still opens and replays it.
    version: emls.length > 0 ? 2 : 1,
    mailscope: trace.mailscope,
    scenario: {
      name: trace.scenario.name,
      ...(trace.scenario.file !== undefined && { file: trace.scenario.file }),
      // The text as the trace exports it (private keys, if any, redacted), so that bundle and trace agree.
      text: exported.scenario.source ?? trace.scenario.source ?? "",
    },
    seed: trace.seed,
    readings: exported.readings,
    recordBodies: options.recordBodies,
    traceHash: await traceHash(hashed),
    passed: options.passed ?? checks.every((c) => c.passed),
    report: exportMarkdown(trace, options.file !== undefined ? { file: options.file } : {}),
    ...(emls.length > 0 && { emls: Object.fromEntries(emls) }),
  };
}

/** The bundle as its file's text: members in a fixed order, the trace last. */
export function bundleText(bundle: Bundle): string {
  const { trace, ...head } = bundle;
  const ordered = {
    format: head.format,
    version: head.version,
    mailscope: head.mailscope,
    scenario: head.scenario,
    seed: head.seed,
    readings: head.readings,
    recordBodies: head.recordBodies,
    ...(head.passed !== undefined && { passed: head.passed }),
    traceHash: head.traceHash,
    report: head.report,
    ...(head.emls !== undefined && { emls: head.emls }),
    // exportJson's key order, kept: the parsed export went in.
    trace,
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** Whether parsed JSON looks like a bundle (its `format` says so): the open paths tell bundles from traces by it. */
export function isBundleValue(json: unknown): boolean {
  return typeof json === "object" && json !== null && (json as Record<string, unknown>)["format"] === BUNDLE_FORMAT;
}

/** Parses and validates a bundle from its text, its trace's hash included. Never throws. */
export async function readBundle(text: string): Promise<Parsed<Bundle>> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return fail({
      path: "$",
      rule: "BUNDLE-FORMAT",
      message: `the file is not JSON (${(error as Error).message}), so it is not a Mailscope bug bundle`,
    });
  }
  return readBundleValue(json);
}

/** As {@link readBundle}, for a value already parsed from JSON. */
export async function readBundleValue(json: unknown): Promise<Parsed<Bundle>> {
  const parsed = checkBundleValue(json);
  if (!parsed.ok) return parsed;
  const bundle = parsed.value;
  const hash = await traceHash(bundle.trace);
  if (hash !== bundle.traceHash) {
    return fail({
      path: "$.traceHash",
      rule: "BUNDLE-HASH",
      message: `the bundled trace hashes to ${hash.slice(0, 12)}…, not the ${bundle.traceHash.slice(0, 12)}… recorded: the trace was changed after the bundle was written`,
    });
  }
  return ok(bundle);
}

/** The synchronous checks of {@link readBundleValue}: format, version, members, the trace, and that they agree. */
export function checkBundleValue(json: unknown): Parsed<Bundle> {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return fail({ path: "$", rule: "BUNDLE-FORMAT", message: "a Mailscope bug bundle is a JSON object" });
  }
  const doc = json as Record<string, unknown>;
  if (doc["format"] !== BUNDLE_FORMAT) {
    const found =
      doc["format"] === "mailscope-trace"
        ? 'it is a trace ("mailscope-trace"), not a bundle: open it as a trace'
        : doc["format"] === undefined
          ? "it has no format member"
          : `its format is ${JSON.stringify(doc["format"])}`;
    return fail({
      path: "$.format",
      rule: "BUNDLE-FORMAT",
      message: `not a Mailscope bug bundle: ${found}, expected "${BUNDLE_FORMAT}"`,
    });
  }
  const version = doc["version"];
  if (typeof version !== "number" || !BUNDLE_VERSIONS_READ.includes(version)) {
    const writer = typeof doc["mailscope"] === "string" ? `, written by Mailscope ${doc["mailscope"]}` : "";
    const newer = typeof version === "number" && Number.isInteger(version) && version > BUNDLE_VERSION;
    const reads = `this Mailscope reads bundle versions ${BUNDLE_VERSIONS_READ.join(" and ")}`;
    return fail({
      path: "$.version",
      rule: "BUNDLE-VERSION",
      message: newer
        ? `this bundle is version ${version}${writer}; ${reads}. Open it with a newer Mailscope.`
        : `the bundle version is ${JSON.stringify(version) ?? "missing"}; ${reads}`,
    });
  }
  const violations: Violation[] = [];
  const head = bundleHeadSchema.safeParse(doc);
  if (!head.success) {
    for (const issue of head.error.issues) {
      let path = "$";
      for (const key of issue.path) path = childPath(path, typeof key === "number" ? key : String(key));
      violations.push({ path, rule: "BUNDLE-SCHEMA", message: issue.message });
    }
  }
  if (!("trace" in doc)) {
    violations.push({ path: "$.trace", rule: "BUNDLE-SCHEMA", message: "the trace is missing" });
    return failWith(violations);
  }
  if (head.success && head.data.emls !== undefined) pushAll(violations, emlProblems(head.data.emls));
  const trace = importTraceValue(doc["trace"]);
  if (!trace.ok) {
    for (const v of trace.violations) violations.push({ ...v, path: `$.trace${v.path.slice(1)}` });
  }
  if (!head.success || !trace.ok) return failWith(violations);
  // The trace as it came (its members in the file's order, and any a later minor version added): the hash covers it all.
  const bundle: Bundle = { ...head.data, trace: doc["trace"] as Trace };
  // What the bundle says at its top must be what its trace recorded.
  const agree: [string, unknown, unknown][] = [
    ["$.scenario.name", bundle.scenario.name, bundle.trace.scenario.name],
    ["$.seed", bundle.seed, bundle.trace.seed],
    ["$.readings", canonicalJson(bundle.readings), canonicalJson(bundle.trace.readings)],
    ["$.mailscope", bundle.mailscope, bundle.trace.mailscope],
    ["$.scenario.text", bundle.scenario.text, bundle.trace.scenario.source ?? bundle.scenario.text],
  ];
  for (const [path, top, inTrace] of agree) {
    if (top !== inTrace) {
      const [says, recorded, where] = whereTheyDiffer(top, inTrace);
      violations.push({
        path,
        rule: "BUNDLE-SCHEMA",
        message: `${where}the bundle says ${says} but its trace recorded ${recorded}`,
      });
    }
  }
  return violations.length > 0 ? failWith(violations) : ok(bundle);
}

/** The re-run's settings: what a replay passes to the simulation. */
export interface ReplaySettings {
  readonly text: string;
  readonly file: string;
  readonly seed: number | string;
  /** Every reading in force, and the draft's numbers that departed from SPEC.md's, as `--set` pairs (they override the scenario's, to the same values). */
  readonly readings: readonly (readonly [string, string])[];
  readonly recordBodies: boolean;
  /** The bytes of the scenario's `eml:` files, by the path as the scenario writes it (empty when it has none). */
  readonly emls: Readonly<Record<string, Uint8Array>>;
}

/**
 * How to re-run a bundle, or why it cannot be: the scenario takes a message
 * from an `eml:` file whose bytes the bundle does not hold (a version 1
 * bundle of such a scenario), each at `$.emls["path"]`, or holds a file the
 * scenario does not name. A scenario that does not parse is left to the
 * re-run's loading, which says where.
 */
export function replaySettings(bundle: Bundle): Parsed<ReplaySettings> {
  const emls = bundle.emls ?? {};
  const violations: Violation[] = [];
  const named = emlPaths(bundle.scenario.text);
  if (named !== undefined) {
    for (const [path, index] of named) {
      if (Object.hasOwn(emls, path)) continue;
      violations.push({
        path: childPath("$.emls", path),
        rule: "BUNDLE-SCHEMA",
        message: `missing: the scenario's messages[${index}] takes its message from ${path}, and the bundle does not hold that file's bytes`,
      });
    }
    for (const path of Object.keys(emls)) {
      if (named.has(path)) continue;
      violations.push({
        path: childPath("$.emls", path),
        rule: "BUNDLE-SCHEMA",
        message: `no message of the scenario takes its message from ${path}`,
      });
    }
  }
  if (violations.length > 0) return failWith(violations);
  return ok({
    text: bundle.scenario.text,
    file: bundle.scenario.file ?? `${bundle.scenario.name}.yaml`,
    seed: bundle.seed,
    // The draft's numbers the run departed to ride with the readings, as --set takes them.
    readings: [...Object.entries(bundle.readings), ...Object.entries(bundle.trace.constants ?? {})],
    recordBodies: bundle.recordBodies,
    emls: bundleEmls(bundle),
  });
}

/** The bytes of the bundle's `eml:` files (none for a version 1 bundle), by the path as the scenario writes it. */
export function bundleEmls(bundle: Bundle): Record<string, Uint8Array> {
  return Object.fromEntries(Object.entries(bundle.emls ?? {}).map(([path, base64]) => [path, fromBase64(base64)]));
}

/**
 * The `eml:` paths of a scenario's messages, each with the first message that
 * names it; undefined when the text does not parse (YAML, or JSON: YAML
 * reads it too). Only the paths: the scenario itself is the re-run's to check.
 */
function emlPaths(text: string): Map<string, number> | undefined {
  let doc: unknown;
  try {
    // A generated scenario is JSON, which JSON.parse reads far faster than the YAML parser (the same value).
    doc = /^\s*\{/.test(text) ? jsonOrYaml(text) : parse(text);
  } catch {
    return undefined;
  }
  const messages = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>)["messages"] : undefined;
  if (!Array.isArray(messages)) return new Map();
  const paths = new Map<string, number>();
  messages.forEach((m: unknown, i) => {
    const eml = typeof m === "object" && m !== null ? (m as Record<string, unknown>)["eml"] : undefined;
    if (typeof eml === "string" && !paths.has(eml)) paths.set(eml, i);
  });
  return paths;
}

function jsonOrYaml(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return parse(text);
  }
}

/** The longest base64 text of an `eml:` file of {@link MAX_EML_BYTES}. */
const MAX_EML_BASE64 = Math.ceil(MAX_EML_BYTES / 3) * 4;

/** What is wrong with a bundle's `emls`: a file over the limit, or text that is not base64. */
function emlProblems(emls: Readonly<Record<string, string>>): Violation[] {
  const problems: Violation[] = [];
  for (const [path, base64] of Object.entries(emls)) {
    const at = childPath("$.emls", path);
    // The size first, from the length alone: an oversized entry is refused before any of it is looked at.
    const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
    const bytes = Math.floor(base64.length / 4) * 3 - padding;
    if (base64.length > MAX_EML_BASE64 || bytes > MAX_EML_BYTES) {
      problems.push({
        path: at,
        rule: "BUNDLE-SCHEMA",
        message: `larger than ${MAX_EML_BYTES} bytes (the limit for messages)`,
      });
    } else if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) {
      problems.push({
        path: at,
        rule: "BUNDLE-SCHEMA",
        message: "not base64: a file's bytes are written as base64 (RFC 4648 §4, with padding)",
      });
    }
  }
  return problems;
}

/** The bytes of base64 text that {@link emlProblems} accepted (RFC 4648 §4, padded). */
function fromBase64(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Where a re-run first departs from the bundle. */
export interface ReplayDifference {
  /** JSONPath in the trace: `$.events[12]`, `$.mailscope`, `$.events` (a count). */
  readonly path: string;
  /** The event's seq, when it is an event. */
  readonly seq?: number;
  /** What the bundle has there, and what the re-run has, in words. */
  readonly bundled: string;
  readonly rerun: string;
}

/** The verdict of a replay. */
export type ReplayComparison =
  | { readonly reproduced: true; readonly hash: string }
  | {
      readonly reproduced: false;
      readonly hash: string;
      readonly expectedHash: string;
      readonly difference: ReplayDifference;
    };

/**
 * Compares a re-run's trace (as recorded) with the bundle: exports it as the
 * bundle's trace was exported (with or without bodies), hashes it, and when
 * the hash differs finds the first event, or else the first member, that differs.
 */
export async function compareReplay(bundle: Bundle, rerun: Trace): Promise<ReplayComparison> {
  const full = !(bundle.trace.redactions ?? []).includes("bodies");
  const exported = JSON.parse(exportJson(rerun, { full })) as Trace;
  const hash = await traceHash(exported);
  if (hash === bundle.traceHash) return { reproduced: true, hash };
  return {
    reproduced: false,
    hash,
    expectedHash: bundle.traceHash,
    difference: firstDifference(bundle.trace, exported),
  };
}

/** The first place two traces differ: an event (by position), the number of events, or a member. */
export function firstDifference(bundled: Trace, rerun: Trace): ReplayDifference {
  const a = bundled.events;
  const b = rerun.events;
  const startMs = bundled.startedAtMs;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as RecordedEvent;
    const y = b[i] as RecordedEvent;
    if (canonicalJson(x) !== canonicalJson(y)) {
      return { path: `$.events[${i}]`, seq: i, bundled: eventWords(x, startMs), rerun: eventWords(y, startMs) };
    }
  }
  if (a.length !== b.length) {
    const extra = a.length > b.length ? a[b.length] : b[a.length];
    const what = extra !== undefined ? `; the first extra one is ${eventWords(extra, startMs)}` : "";
    return {
      path: "$.events",
      seq: Math.min(a.length, b.length),
      bundled: `${a.length} events${a.length > b.length ? what : ""}`,
      rerun: `${b.length} events${b.length > a.length ? what : ""}`,
    };
  }
  const x = bundled as unknown as Record<string, unknown>;
  const y = rerun as unknown as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
    if (key === "events") continue;
    if (canonicalJson(x[key]) !== canonicalJson(y[key])) return memberDifference(childPath("$", key), x[key], y[key]);
  }
  return { path: "$", bundled: "(the same)", rerun: "(the same)" };
}

/** `#12 +0:02:36 a.example attempt.started: attempt 2 of m1 …`. */
export function eventWords(event: RecordedEvent, startMs: number): string {
  const words = describeEvent(event, { flavour: "timeline", full: true, startMs });
  return `#${event.seq} ${formatOffset(event.timeMs, startMs)}${event.domain !== undefined ? ` ${event.domain}` : ""} ${event.name}${words !== undefined ? `: ${words}` : ""}`;
}

/** The one-line summary of a replay verdict, as the CLI prints it and the app shows it. */
export function replaySummary(comparison: ReplayComparison): string[] {
  if (comparison.reproduced) return [`reproduced: the re-run's trace hash is the bundle's (${comparison.hash})`];
  const d = comparison.difference;
  return [
    `not reproduced: the re-run's trace hash ${comparison.hash.slice(0, 12)}… is not the bundle's ${comparison.expectedHash.slice(0, 12)}…`,
    d.seq !== undefined && d.path !== "$.events"
      ? `first differing event: ${d.path}`
      : `first difference: ${d.path}${d.seq !== undefined ? ` (from event ${d.seq})` : ""}`,
    `  bundle: ${d.bundled}`,
    `  re-run: ${d.rerun}`,
  ];
}

/** The most of a line a message quotes. */
const QUOTED = 160;

/**
 * Where two values of one member differ, descending into objects and arrays to the first member that does
 * (`$.scenario.source`), then, in a text, to its first line that does.
 */
function memberDifference(path: string, a: unknown, b: unknown): ReplayDifference {
  if (isContainer(a) && isContainer(b) && Array.isArray(a) === Array.isArray(b)) {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(ra), ...Object.keys(rb)])];
    if (!Array.isArray(a)) keys.sort();
    for (const key of keys) {
      if (canonicalJson(ra[key]) === canonicalJson(rb[key])) continue;
      return memberDifference(childPath(path, Array.isArray(a) ? Number(key) : key), ra[key], rb[key]);
    }
  }
  const [bundled, rerun, where] = whereTheyDiffer(a, b);
  return { path, bundled: `${where}${bundled}`, rerun: `${where}${rerun}` };
}

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/**
 * Two values that differ, as a message quotes them: whole when short; for texts of several lines, the
 * first line that differs (`line 12: `, then each side's line, cut around where it differs). Never two
 * quotes that read the same.
 */
export function whereTheyDiffer(a: unknown, b: unknown): [a: string, b: string, where: string] {
  const ta = typeof a === "string" ? a : (JSON.stringify(a) ?? "nothing");
  const tb = typeof b === "string" ? b : (JSON.stringify(b) ?? "nothing");
  const quote = (text: string): string =>
    typeof a === "string" || typeof b === "string" ? JSON.stringify(text) : text;
  if (ta.length <= QUOTED && tb.length <= QUOTED && !ta.includes("\n") && !tb.includes("\n")) {
    return [quote(ta), quote(tb), ""];
  }
  const la = ta.split("\n");
  const lb = tb.split("\n");
  let line = 0;
  while (line < la.length && line < lb.length && la[line] === lb[line]) line++;
  const sa = la[line];
  const sb = lb[line];
  // Cut both lines at the same place: from a little before the first character that differs.
  let column = 0;
  while (sa !== undefined && sb !== undefined && column < sa.length && sa[column] === sb[column]) column++;
  const from = Math.max(0, column - 40);
  const cut = (text: string | undefined): string => {
    if (text === undefined) return "(no such line)";
    const part = text.slice(from, from + QUOTED);
    return quote(`${from > 0 ? "…" : ""}${part}${from + QUOTED < text.length ? "…" : ""}`);
  };
  const where = la.length > 1 || lb.length > 1 ? `line ${line + 1}: ` : from > 0 ? `from character ${from + 1}: ` : "";
  return [cut(sa), cut(sb), where];
}
