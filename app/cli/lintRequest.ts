/**
 * `mailscope lint-request FILE`: reads a raw HTTP/1.1 request (as captured,
 * or hand-written) and runs the receiver's checks of POST /v1/messages on it
 * in G10's order (`app/receiver/checks.ts`), one line per check: pass or fail,
 * the rule, and the answer a receiver would give.
 *
 * The checks are the core's (`app/receiver/lintChecks.ts`), the same the
 * app's inspector shows for a request recorded in a trace; this file reads
 * the request, the keys and the configuration from files, and prints.
 */
import { type CliIo } from "./io.ts";
import { Command, CommanderError } from "commander";
import type { ProblemIdentifier } from "../protocol/errors.ts";
import type { ReceiverConfig } from "../receiver/config.ts";
import { lintAnswer, lintChecks, NOT_LINTED, type LintLine, type LintStatus } from "../receiver/lintChecks.ts";
import { combineKeys, jwksKeys, keyRecordKeys, type LintKeys } from "../receiver/lintKeys.ts";
import {
  formatRawHttpProblems,
  parseRawHttpRequest,
  type RawHttpProblem,
  type RawHttpRequest,
} from "../node/rawHttp.ts";
import { formatConfigError, loadReceiverConfigFile } from "../node/receiverConfigFile.ts";
import { FileTooLargeError, readBounded, readBoundedText, readErrorReason } from "../node/boundedRead.ts";
import { maxOf } from "../protocol/lists.ts";

export type { LintLine, LintStatus } from "../receiver/lintChecks.ts";

/** What the lines say when a key or the configuration is missing: the options that give them. */
const HINTS = {
  unknownKey: "; give the key with --keys jwks.json or the keyRecords of --config",
  noConfig: " (give --config)",
} as const;

// ── Report ────────────────────────────────────────────────────────────

/** The whole result, as `--json` prints it. */
export interface LintReport {
  readonly file: string;
  readonly request: { readonly method: string; readonly url: string; readonly bodyBytes: number };
  readonly nowS: number;
  /** True when no check failed. */
  readonly ok: boolean;
  /** What a receiver would answer: the first failing check's answer; absent when all pass. */
  readonly answer?: { readonly status: number; readonly problem: ProblemIdentifier; readonly check: string };
  readonly warnings: readonly RawHttpProblem[];
  readonly checks: readonly LintLine[];
  readonly notChecked: string;
}

/** The report of a linted request. */
export function lintReport(
  file: string,
  parsed: RawHttpRequest,
  nowS: number,
  checks: readonly LintLine[],
): LintReport {
  const answer = lintAnswer(checks);
  return {
    file,
    request: { method: parsed.method, url: parsed.url, bodyBytes: parsed.body.length },
    nowS,
    ok: !checks.some((c) => c.status === "fail"),
    ...(answer !== undefined && { answer }),
    warnings: parsed.warnings,
    checks,
    notChecked: NOT_LINTED,
  };
}

/** The report as terminal lines: one per check, then a summary. */
export function formatLintReport(report: LintReport): string {
  const out: string[] = [];
  out.push(
    `${report.file}: ${report.request.method} ${report.request.url}, ${report.request.bodyBytes}-byte body, checked at ${new Date(report.nowS * 1000).toISOString().replace(".000Z", "Z")}`,
  );
  for (const line of formatRawHttpProblems(report.file, report.warnings))
    out.push(line.replace(/^([^:]*:\d+): /, "$1: warning: "));
  const width = maxOf(report.checks.map((c) => c.check.length));
  for (const c of report.checks) {
    const mark = c.status === "pass" ? "PASS" : c.status === "fail" ? "FAIL" : "SKIP";
    const answer = c.status === "fail" && c.answer !== undefined ? `  → ${c.answer.status} ${c.answer.problem}` : "";
    out.push(`${mark}  ${c.check.padEnd(width)}  ${c.rule.padEnd(7)}  ${c.detail}${answer}`);
  }
  const count = (s: LintStatus): number => report.checks.filter((c) => c.status === s).length;
  out.push(`${count("pass")} passed, ${count("fail")} failed, ${count("skip")} not run.`);
  out.push(
    report.answer === undefined
      ? "A receiver would go on to its own checks; nothing here stops the request."
      : `A receiver answers the first failure: ${report.answer.status} ${report.answer.problem} (${report.answer.check}).`,
  );
  out.push(`Not checked here: ${report.notChecked}.`);
  return out.join("\n");
}

const RFC3339 = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)$/;

/** Seconds since the epoch of an RFC 3339 time, or `undefined` when it is not one. */
export function parseRfc3339(value: string): number | undefined {
  if (!RFC3339.test(value)) return undefined;
  const ms = Date.parse(value.replace(" ", "T"));
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The options of the command. */
interface CommandOptions {
  readonly keys?: string;
  readonly now?: string;
  readonly json?: boolean;
  readonly config?: string;
}

/** Exit codes: 0 every check passes, 1 some check fails, 2 the input (or an option's file) cannot be read. */
export const EXIT = { ok: 0, failed: 1, unreadable: 2 } as const;

/**
 * Runs the command's work and returns its exit code (never throws for bad input).
 */
export async function runLintRequest(file: string, options: CommandOptions, io: CliIo): Promise<number> {
  const unreadable = (message: string): number => {
    io.err(`mailscope lint-request: ${message}`);
    return EXIT.unreadable;
  };
  let nowS = Math.floor(Date.now() / 1000);
  if (options.now !== undefined) {
    const parsedNow = parseRfc3339(options.now);
    if (parsedNow === undefined)
      return unreadable(`--now ${JSON.stringify(options.now)} is not an RFC 3339 time (e.g. 2021-04-20T02:07:55Z)`);
    nowS = parsedNow;
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readBounded(file, "requests"));
  } catch (error) {
    if (error instanceof FileTooLargeError) return unreadable(error.message);
    return unreadable(`${file}: cannot be read (${readErrorReason(error)})`);
  }
  const keySets: LintKeys[] = [];
  if (options.keys !== undefined) {
    try {
      keySets.push(jwksKeys(await readBoundedText(options.keys, "keys"), options.keys));
    } catch (error) {
      if (error instanceof FileTooLargeError) return unreadable(error.message);
      const code = (error as NodeJS.ErrnoException).code;
      return unreadable(
        code !== undefined ? `${options.keys}: cannot be read (${readErrorReason(error)})` : (error as Error).message,
      );
    }
  }
  let config: ReceiverConfig | undefined;
  if (options.config !== undefined) {
    const loaded = await loadReceiverConfigFile(options.config);
    if (!loaded.ok) {
      for (const e of loaded.errors) io.err(formatConfigError(e));
      return unreadable(`${options.config}: not a valid receiver configuration`);
    }
    config = loaded.value;
    keySets.push(keyRecordKeys(config.keyRecords, options.config));
  }
  const parsed = parseRawHttpRequest(bytes);
  if (!parsed.ok) {
    for (const line of formatRawHttpProblems(file, parsed.errors)) io.err(line);
    return unreadable(`${file}: not a readable HTTP/1.1 request`);
  }
  let checks: LintLine[];
  try {
    checks = await lintChecks(parsed.value, {
      nowS,
      keys: combineKeys(keySets),
      ...(config !== undefined && { config }),
      hints: HINTS,
    });
  } catch (error) {
    // A key that cannot be imported is a bad --keys file.
    return unreadable((error as Error).message);
  }
  const report = lintReport(file, parsed.value, nowS, checks);
  io.out(options.json === true ? JSON.stringify(report, null, 2) : formatLintReport(report));
  return report.ok ? EXIT.ok : EXIT.failed;
}

/** `mailscope lint-request FILE [--keys jwks.json] [--now RFC3339] [--config receiver.yaml] [--json]`. */
export function lintRequestCommand(): Command {
  return new Command("lint-request")
    .description(
      "run the receiver's checks of POST /v1/messages on a raw HTTP/1.1 request, one line per check in the receiver's order (G10), with the rule and the answer a receiver would give",
    )
    .argument("<file>", "the request as raw HTTP/1.1 text (CRLF or LF line ends)")
    .option("--keys <jwks.json>", "verification keys by keyid, as a JWKS (e.g. examples/rfc9421-keys.json)")
    .option("--now <rfc3339>", "the receiver's clock, for the created check (default: now)")
    .option("--config <receiver.yaml>", "a receiver configuration: limits, served domains, G3 tolerance, keyRecords")
    .option("--json", "print the report as JSON")
    .addHelpText(
      "after",
      "\nExit status: 0 when every check passes, 1 when one fails, 2 when the input cannot be read.",
    )
    .action(async (file: string, options: CommandOptions) => {
      const code = await runLintRequest(file, options, {
        out: (t) => console.log(t),
        err: (t) => console.error(t),
      });
      if (code !== EXIT.ok) throw new CommanderError(code, "mailscope.lintRequest", "");
    });
}
