/**
 * The capabilities cases (GET /v1/capabilities: the document, its caching
 * and each member, CAP-*, GET-*) and the version cases (a path under a major
 * version the receiver does not serve, VER-*). What the document says is
 * read on for the cases after it: the versions served, max_message_size and
 * max_recipients.
 */
import { MIN_MAX_MESSAGE_SIZE, DEFAULT_MAX_RECIPIENTS } from "../protocol/resources.ts";
import { VERSION_PATTERN } from "../protocol/versions.ts";
import { answerText, expectProblem, type Judged, type Sent } from "./answers.ts";
import { idsOf, runs, type ProbeContext } from "./context.ts";
import { plainRequest, send } from "./exchange.ts";
import { record } from "./verdicts.ts";

/** What the capabilities document says that later cases use (the spec's defaults where it says nothing usable). */
export interface CapabilitiesRead {
  readonly versions: readonly string[];
  /** Undefined without a positive integer. */
  readonly maxMessageSize: number | undefined;
  readonly maxRecipients: number;
}

/** The defaults: only v1, no max_message_size known, max_recipients 100. */
export const NO_CAPABILITIES: CapabilitiesRead = {
  versions: ["v1"],
  maxMessageSize: undefined,
  maxRecipients: DEFAULT_MAX_RECIPIENTS,
};

type On = (id: string, judged: Judged) => void;

/** GET /v1/capabilities, and every capabilities case judged on its answer. */
export async function capabilitiesCases(ctx: ProbeContext, origin: string): Promise<CapabilitiesRead> {
  const caps = await send(
    ctx,
    idsOf(ctx, (c) => c.step === "capabilities"),
    () => Promise.resolve(plainRequest("GET", `${origin}/v1/capabilities`)),
    true,
  );
  const a = caps.answer;
  const doc =
    a.kind === "response" && a.status === 200 && typeof a.json === "object" && a.json !== null && !Array.isArray(a.json)
      ? (a.json as Record<string, unknown>)
      : undefined;
  const on: On = (id, judged) => record(ctx, id, judged, [caps]);
  const noDoc = (): Judged => ({
    result: "FAIL",
    actual: answerText(a),
    why: "no capabilities document to read (GET /v1/capabilities)",
  });
  on(
    "capabilities-200",
    a.kind === "response" && a.status === 200 && a.mediaType === "application/json" && doc !== undefined
      ? { result: "PASS", actual: `200 application/json (${Object.keys(doc).join(", ")})` }
      : {
          result: "FAIL",
          actual:
            a.kind === "response"
              ? `${a.status} ${a.mediaType || "(no Content-Type)"}${doc === undefined ? ", not a JSON object" : ""}`
              : answerText(a),
        },
  );
  const cacheControl = a.kind === "response" && a.status === 200 ? a.headers.get("cache-control") : null;
  on(
    "capabilities-cache-control",
    a.kind !== "response" || a.status !== 200
      ? noDoc()
      : cacheControl !== null
        ? { result: "PASS", actual: `Cache-Control: ${cacheControl}` }
        : { result: "FAIL", actual: "no Cache-Control header" },
  );
  on(
    "capabilities-max-age",
    a.kind !== "response" || a.status !== 200
      ? noDoc()
      : cacheControl !== null && /(^|,)\s*max-age\s*=\s*"?3600"?\s*(,|$)/i.test(cacheControl)
        ? { result: "PASS", actual: `Cache-Control: ${cacheControl}` }
        : {
            result: "FAIL",
            actual: cacheControl === null ? "no Cache-Control header" : `Cache-Control: ${cacheControl}`,
          },
  );
  if (doc !== undefined) return documentCases(doc, on);
  const read = new Set(["capabilities-200", "capabilities-cache-control", "capabilities-max-age"]);
  for (const id of idsOf(ctx, (c) => c.step === "capabilities" && !read.has(c.id))) on(id, noDoc());
  return NO_CAPABILITIES;
}

/** The cases on the document's members, and what of them later cases use. */
function documentCases(doc: Readonly<Record<string, unknown>>, on: On): CapabilitiesRead {
  const size = doc["max_message_size"];
  on(
    "capabilities-max-message-size",
    Number.isInteger(size)
      ? { result: "PASS", actual: `max_message_size: ${String(size)}` }
      : {
          result: "FAIL",
          actual: size === undefined ? "no max_message_size" : `max_message_size: ${JSON.stringify(size)}`,
        },
  );
  on(
    "capabilities-max-message-size-bound",
    typeof size !== "number"
      ? {
          result: "SKIP",
          actual: `max_message_size: ${JSON.stringify(size) ?? "absent"}`,
          why: "no number to compare (capabilities-max-message-size)",
        }
      : size >= MIN_MAX_MESSAGE_SIZE
        ? { result: "PASS", actual: `max_message_size: ${size}` }
        : { result: "FAIL", actual: `max_message_size: ${size}, below ${MIN_MAX_MESSAGE_SIZE}` },
  );
  const recipients = doc["max_recipients"];
  on(
    "capabilities-max-recipients",
    recipients === undefined
      ? { result: "PASS", actual: "absent (100)" }
      : Number.isInteger(recipients) && (recipients as number) >= 100
        ? { result: "PASS", actual: `max_recipients: ${String(recipients)}` }
        : { result: "FAIL", actual: `max_recipients: ${JSON.stringify(recipients)}` },
  );
  const versions = versionsCase(doc["versions"], on);
  pinCases(doc["discovery_pin_max_age"], on);
  const abuse = doc["abuse_contact"];
  on(
    "capabilities-abuse-contact",
    abuse === undefined
      ? { result: "PASS", actual: "not advertised (optional)" }
      : typeof abuse === "string" && /^mailto:[^?]+$/.test(abuse)
        ? { result: "PASS", actual: `abuse_contact: ${abuse}` }
        : { result: "FAIL", actual: `abuse_contact: ${JSON.stringify(abuse)}` },
  );
  return {
    versions: versions ?? NO_CAPABILITIES.versions,
    maxMessageSize: Number.isInteger(size) && typeof size === "number" && size > 0 ? size : undefined,
    maxRecipients:
      Number.isInteger(recipients) && (recipients as number) >= 1
        ? (recipients as number)
        : NO_CAPABILITIES.maxRecipients,
  };
}

/** capabilities-versions; the list when every item is a string. */
function versionsCase(v: unknown, on: On): readonly string[] | undefined {
  const list = Array.isArray(v) ? v : undefined;
  const versionsOk =
    v === undefined ||
    (list !== undefined &&
      list.length > 0 &&
      list.every((x) => typeof x === "string" && VERSION_PATTERN.test(x)) &&
      new Set(list).size === list.length &&
      list.includes("v1"));
  on(
    "capabilities-versions",
    versionsOk
      ? { result: "PASS", actual: v === undefined ? 'absent (["v1"])' : `versions: ${JSON.stringify(v)}` }
      : { result: "FAIL", actual: `versions: ${JSON.stringify(v)}` },
  );
  return list !== undefined && list.every((x): x is string => typeof x === "string") ? list : undefined;
}

/** capabilities-pin-max-age and capabilities-pin-advertised. */
function pinCases(pin: unknown, on: On): void {
  on(
    "capabilities-pin-max-age",
    pin === undefined || (Number.isInteger(pin) && (pin as number) >= 0)
      ? { result: "PASS", actual: pin === undefined ? "absent" : `discovery_pin_max_age: ${String(pin)}` }
      : { result: "FAIL", actual: `discovery_pin_max_age: ${JSON.stringify(pin)}` },
  );
  on(
    "capabilities-pin-advertised",
    pin === 604800
      ? { result: "PASS", actual: "discovery_pin_max_age: 604800" }
      : {
          result: "FAIL",
          actual: pin === undefined ? "not advertised" : `discovery_pin_max_age: ${JSON.stringify(pin)}`,
        },
  );
}

/** The major versions a path may not use for `unsupported-version`: the first vN not served. */
function unservedVersion(served: readonly string[]): string {
  for (let n = 2; ; n++) if (!served.includes(`v${n}`)) return `v${n}`;
}

/** The version cases: a GET and a POST under the first major version not served. */
export async function versionCases(ctx: ProbeContext, origin: string, versions: readonly string[]): Promise<void> {
  const unserved = unservedVersion(versions);
  if (runs(ctx, "unsupported-version") || runs(ctx, "unsupported-version-versions")) {
    const sent = await send(
      ctx,
      ["unsupported-version", "unsupported-version-versions"],
      () => Promise.resolve(plainRequest("GET", `${origin}/${unserved}/capabilities`)),
      true,
    );
    record(ctx, "unsupported-version", expectProblem(sent.answer, 404, "unsupported_version"), [sent]);
    record(ctx, "unsupported-version-versions", versionsListed(sent, versions), [sent]);
  }
  if (runs(ctx, "unsupported-version-post")) {
    const sent = await send(
      ctx,
      ["unsupported-version-post"],
      () => Promise.resolve(plainRequest("POST", `${origin}/${unserved}/messages`)),
      false,
    );
    record(ctx, "unsupported-version-post", expectProblem(sent.answer, 404, "unsupported_version"), [sent]);
  }
}

/** unsupported-version-versions: the problem lists the versions the capabilities list. */
function versionsListed(sent: Sent, versions: readonly string[]): Judged {
  const a = sent.answer;
  const listed = a.kind === "response" ? a.problem?.versions : undefined;
  return a.kind !== "response" || a.problem?.identifier !== "unsupported_version"
    ? {
        result: "SKIP",
        actual: answerText(a),
        why: "no unsupported_version problem to read (unsupported-version)",
      }
    : !Array.isArray(listed)
      ? {
          result: "FAIL",
          actual: a.problem.hasVersions ? `versions: ${JSON.stringify(listed)}` : "no versions member",
        }
      : sameSet(listed, versions)
        ? { result: "PASS", actual: `versions: ${JSON.stringify(listed)}` }
        : {
            result: "FAIL",
            actual: `versions: ${JSON.stringify(listed)}`,
            why: `the capabilities list ${JSON.stringify(versions)}`,
          };
}

/** The same items, each counted once (a list with a repeat is another case's: capabilities-versions). */
function sameSet(a: readonly unknown[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...right].every((x) => left.has(x));
}
