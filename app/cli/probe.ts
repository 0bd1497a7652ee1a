/**
 * `mailscope probe <https://origin | recipient-domain>`: checks a real
 * receiver against the spec from outside (docs/probe.md). The engine and its
 * cases are the core's (`app/probe/`); this file reads the options and files,
 * hands the engine the real network — TLS 1.3 fetch and `--resolve` as `send`
 * has them (`senderPorts.ts`), a TLS handshake of its own for the version and
 * certificate cases, DNS — prints the plan before the first request, and
 * writes the table, JSON, JUnit, Markdown and the trace.
 *
 * Exit codes: 0 no MUST case failed, 1 one did (an unreachable origin, a key
 * the receiver does not trust included), 2 bad input.
 */
import { Command, Option } from "commander";
import { writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import type { Resolver } from "../ports.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import { buildKeyRecord, exportPublicKeyRaw } from "../protocol/profile.ts";
import { subtle } from "../protocol/webCrypto.ts";
import { selectCases, unknownSelectors } from "../probe/cases.ts";
import { runProbe, type ProbeIdentity, type ProbePlan, type ProbeRun } from "../probe/probe.ts";
import { junitXml, markdownReport, planLines, reportJson, tableLines } from "../probe/report.ts";
import { dataOf } from "../trace/eventReader.ts";
import { exportJson } from "../trace/exportJson.ts";
import { createDnsResolver, parseNameserver } from "../node/dnsResolver.ts";
import { checkOutputPaths } from "../node/outputPaths.ts";
import { cryptoRandom, systemClock } from "../node/systemPorts.ts";
import { tlsHandshake } from "../node/tlsHandshake.ts";
import { consoleIo, type CliIo } from "./io.ts";
import { mailscopeVersion } from "./run.ts";
import { parseDuration } from "./send.ts";
import {
  collect,
  createSenderNetwork,
  guarded,
  offlineResolver,
  parseResolve,
  readCa,
  readSigningKey,
  usage,
  type ResolveEntry,
} from "./senderPorts.ts";

/** What `probe` is told (commander's options). */
export interface ProbeCommandOptions {
  readonly from?: string;
  readonly key?: string;
  readonly keyid?: string;
  readonly mailbox?: readonly string[];
  readonly absent?: string;
  readonly resolve?: readonly string[];
  readonly ca?: string;
  readonly nameserver?: string;
  readonly dns?: boolean;
  readonly rate?: string;
  readonly timeout?: string;
  readonly only?: readonly string[];
  readonly skip?: readonly string[];
  readonly problemBase?: string;
  readonly json?: boolean;
  readonly junit?: string;
  readonly report?: string;
  readonly trace?: string;
}

/** Ports a test may put in place of the real ones. */
export interface ProbeOverrides {
  /** Answers what `--resolve` does not, instead of real DNS. */
  readonly resolver?: Resolver;
}

/** The default and the largest `--rate`. */
export const DEFAULT_RATE = 5;
export const MAX_RATE = 1000;
/** The default per-request timeout, and the longest. */
export const DEFAULT_PROBE_TIMEOUT = "10s";
export const MAX_PROBE_TIMEOUT_MS = 300_000;

function split(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/** The target as the engine takes it: an origin without path, or a domain. @throws UsageError */
export function checkTarget(target: string): string {
  const text = target.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      usage(`${target}: not a URL`);
    }
    if (url.protocol === "http:") usage(`${target}: TLS 1.3 is mandatory (SVC-6, AUTH-8): give the https:// origin`);
    if (url.protocol !== "https:") usage(`${target}: not an https:// origin`);
    if (url.pathname !== "/" || url.search !== "" || url.hash !== "")
      usage(`${target}: give the origin alone (https://host[:port]): the probe knows the paths (/v1/…)`);
    return url.origin;
  }
  const domain = text.toLowerCase().replace(/\.$/, "");
  if (!parseMailbox(`probe@${domain}`).ok || isIP(domain) !== 0)
    usage(`${target}: neither an https:// origin nor a recipient domain`);
  return domain;
}

interface Prepared {
  readonly target: string;
  readonly identity?: ProbeIdentity;
  readonly mailboxes: string[];
  readonly absent?: string;
  readonly resolve: ResolveEntry[];
  readonly ca?: Buffer;
  readonly rate: number;
  readonly timeoutMs: number;
  readonly only: string[];
  readonly skip: string[];
}

async function prepare(target: string, options: ProbeCommandOptions): Promise<Prepared> {
  const checked = checkTarget(target);
  const domainTarget = checked.startsWith("https://") ? undefined : checked;
  const mailboxes: string[] = [];
  for (const text of split(options.mailbox)) {
    const parsed = parseMailbox(text);
    if (!parsed.ok) usage(`--mailbox ${text}: ${parsed.violations.map((v) => v.message).join("; ")}`);
    if (!mailboxes.includes(parsed.value.address)) mailboxes.push(parsed.value.address);
  }
  let absent: string | undefined;
  if (options.absent !== undefined) {
    const parsed = parseMailbox(options.absent.replace("{n}", "1"));
    if (!parsed.ok) usage(`--absent ${options.absent}: ${parsed.violations.map((v) => v.message).join("; ")}`);
    const one = parseMailbox(options.absent.replace("{n}", ""));
    if (one.ok && mailboxes.includes(one.value.address))
      usage(`--absent ${options.absent}: also given as --mailbox; it must name a recipient that does not exist`);
    absent = options.absent.trim();
  }
  const domains = new Set(
    [...mailboxes, ...(absent !== undefined ? [absent] : [])].map((m) => m.slice(m.lastIndexOf("@") + 1).toLowerCase()),
  );
  if (domainTarget !== undefined) domains.add(domainTarget);
  if (domains.size > 1)
    usage(
      `--mailbox and --absent must be in one domain${domainTarget !== undefined ? `, ${domainTarget}` : ""} (ENV-7): got ${[...domains].join(", ")}`,
    );

  let identity: ProbeIdentity | undefined;
  if ((options.from === undefined) !== (options.key === undefined))
    usage(
      options.from === undefined
        ? "--key needs --from (the envelope sender it signs for)"
        : "--from needs --key (the key it signs with)",
    );
  if (options.from !== undefined && options.key !== undefined) {
    const from = parseMailbox(options.from);
    if (!from.ok) usage(`--from ${options.from}: ${from.violations.map((v) => v.message).join("; ")}`);
    const signing = await readSigningKey(options.key, {
      keyOption: "--key",
      keyidOption: "--keyid",
      ...(options.keyid !== undefined && { keyid: options.keyid }),
      signer: "probe signs its deliveries",
    });
    if (signing.domain !== from.value.domain)
      usage(`--keyid ${signing.keyid} signs for ${signing.domain}, but --from is in ${from.value.domain} (AUTH-4)`);
    // The public half, for the TXT record a 401 is explained with.
    const jwk = await subtle.exportKey("jwk", signing.signingKey);
    const publicKey = await subtle.importKey(
      "jwk",
      { kty: jwk.kty, crv: jwk.crv, x: jwk.x },
      { name: "Ed25519" },
      true,
      ["verify"],
    );
    identity = {
      from: from.value.address,
      keyid: signing.keyid,
      privateKey: signing.signingKey,
      keyRecord: buildKeyRecord(await exportPublicKeyRaw(publicKey)),
    };
  }
  const rate = Number(options.rate ?? DEFAULT_RATE);
  if (!Number.isFinite(rate) || rate <= 0 || rate > MAX_RATE)
    usage(`--rate ${options.rate ?? ""}: requests per second, above 0 and at most ${MAX_RATE}`);
  const timeoutMs = parseDuration(options.timeout ?? DEFAULT_PROBE_TIMEOUT);
  if (timeoutMs === undefined || timeoutMs <= 0) usage(`--timeout ${options.timeout ?? ""}: not a duration (e.g. 10s)`);
  if (timeoutMs > MAX_PROBE_TIMEOUT_MS) usage(`--timeout ${options.timeout ?? ""}: at most 5m`);
  const only = split(options.only);
  const skip = split(options.skip);
  const unknown = unknownSelectors([...only, ...skip]);
  if (unknown.length > 0)
    usage(
      `--only/--skip ${unknown.join(", ")}: names no case (a case id, a rule ID such as AUTH-5, or a prefix such as CAP: docs/probe.md lists the cases)`,
    );
  if (options.problemBase !== undefined && !URL.canParse(options.problemBase))
    usage(`--problem-base ${options.problemBase}: not an absolute URI`);
  if (options.nameserver !== undefined && parseNameserver(options.nameserver) === undefined)
    usage(`--nameserver ${options.nameserver}: not an IP address with an optional port`);
  const unwritable = await checkOutputPaths([
    ["--junit", options.junit],
    ["--report", options.report],
    ["--trace", options.trace],
  ]);
  if (unwritable !== undefined) usage(unwritable);
  const ca = options.ca === undefined ? undefined : await readCa(options.ca);
  return {
    target: checked,
    ...(identity !== undefined && { identity }),
    mailboxes,
    ...(absent !== undefined && { absent }),
    resolve: (options.resolve ?? []).map(parseResolve),
    ...(ca !== undefined && { ca }),
    rate,
    timeoutMs,
    only,
    skip,
  };
}

/**
 * The plan of a `probe.started` event, read by the catalogue, when it has every part (the probe's own always
 * does); undefined for another event.
 */
function planOf(event: {
  readonly name: string;
  readonly data?: Readonly<Record<string, unknown>>;
}): ProbePlan | undefined {
  const plan = dataOf(event, "probe.started")?.plan ?? {};
  const { cases, requests, handshakes, messages, messagesAtMost, mailboxes, requestsPerSecond } = plan;
  if (
    cases === undefined ||
    requests === undefined ||
    handshakes === undefined ||
    messages === undefined ||
    messagesAtMost === undefined ||
    mailboxes === undefined ||
    requestsPerSecond === undefined
  )
    return undefined;
  return { cases, requests, handshakes, messages, messagesAtMost, mailboxes, requestsPerSecond };
}

/**
 * Probes `target` and writes what `options` ask for; resolves with the run.
 * The plan goes out before the first request (on `io.out`, or `io.err` with
 * `--json`, so that stdout holds only the JSON).
 *
 * @throws UsageError for bad input: an http:// or malformed target, a key
 * that is not an Ed25519 private JWK, a mailbox, an option out of range.
 */
export async function runProbeCommand(
  target: string,
  options: ProbeCommandOptions,
  io: CliIo,
  overrides: ProbeOverrides = {},
): Promise<ProbeRun> {
  const input = await prepare(target, options);
  const say = options.json === true ? io.err : io.out;
  const dnsEnabled = overrides.resolver === undefined && options.dns !== false;
  const dns =
    overrides.resolver ??
    (dnsEnabled
      ? createDnsResolver(options.nameserver !== undefined ? { nameserver: options.nameserver } : {})
      : offlineResolver);
  const network = createSenderNetwork({
    resolve: input.resolve,
    ...(input.ca !== undefined && { ca: input.ca }),
    timeoutMs: input.timeoutMs,
    fallback: dns,
  });
  const cases = selectCases(input.only, input.skip);
  let planned = false;
  const run = await runProbe(
    {
      target: input.target,
      mailscope: mailscopeVersion(),
      ...(input.identity !== undefined && { identity: input.identity }),
      mailboxes: input.mailboxes,
      ...(input.absent !== undefined && { absent: input.absent }),
      ...(options.problemBase !== undefined && { problemBase: options.problemBase }),
      cases,
      requestsPerSecond: input.rate,
      lookupKey: dnsEnabled || overrides.resolver !== undefined,
      onEvent: (event) => {
        const plan = planOf(event);
        if (plan === undefined || planned) return;
        planned = true;
        for (const line of planLines(plan, input.target)) say(line);
      },
    },
    {
      clock: systemClock,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      random: cryptoRandom,
      resolver: network.resolver,
      fetch: network.fetch,
      tls: (origin, version) => {
        const url = new URL(origin);
        const port = url.port === "" ? 443 : Number(url.port);
        const entry = input.resolve.find((e) => e.domain === url.hostname.toLowerCase());
        return tlsHandshake({
          host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
          port,
          ...(entry !== undefined && { connectTo: { host: entry.host, port: entry.port } }),
          ...(input.ca !== undefined && { ca: input.ca }),
          version,
          timeoutMs: input.timeoutMs,
        });
      },
    },
  );
  if (options.json === true) io.out(JSON.stringify(reportJson(run), null, 2));
  else for (const line of tableLines(run, process.stdout.columns ?? 160)) io.out(line);
  if (options.trace !== undefined) await writeFile(options.trace, exportJson(run.trace, { full: true }));
  if (options.junit !== undefined) await writeFile(options.junit, junitXml(run));
  if (options.report !== undefined) await writeFile(options.report, markdownReport(run));
  return run;
}

/** `mailscope probe`, for the program. */
export function probeCommand(): Command {
  return new Command("probe")
    .description(
      "check a real receiver against the spec from outside: one case per receiver-side rule (MUST/SHOULD/MAY), as a table, JSON, JUnit, Markdown and a trace",
    )
    .argument("<target>", "the receiver's https:// origin, or a recipient domain (found through SVCB at _svc.<domain>)")
    .option("--from <mailbox>", "the envelope sender the probe signs for; its domain is the signing domain (AUTH-4)")
    .option("--key <key.jwk>", "Ed25519 private key as a JWK (mailscope keygen); the receiver must trust it")
    .option("--keyid <keyid>", "<selector>._svckey.<domain> (G4); default: the key's kid")
    .option(
      "--mailbox <mailbox[,mailbox]>",
      "recipients that exist and may be given the probe's messages; repeatable",
      collect,
    )
    .option(
      "--absent <mailbox>",
      "a recipient that does not exist; {n} in it (nobody{n}@b.example) makes as many as too-many-recipients needs",
    )
    .option(
      "--resolve <domain=host:port>",
      "connect to host:port for the domain (like curl --resolve); repeatable",
      collect,
    )
    .option("--ca <cert.pem>", "trust this CA or self-signed certificate instead of the system's")
    .option("--nameserver <ip[:port]>", "DNS server to ask (default: the first of /etc/resolv.conf)")
    .option("--no-dns", "ask no DNS server: only --resolve answers")
    .option("--rate <n>", "requests started per second at most", String(DEFAULT_RATE))
    .option("--timeout <duration>", "how long one request (or handshake) may take", DEFAULT_PROBE_TIMEOUT)
    .option(
      "--only <rule|case[,…]>",
      "run only these cases: ids, rule IDs (AUTH-5) or prefixes (CAP); repeatable",
      collect,
    )
    .option("--skip <rule|case[,…]>", "leave these cases out; repeatable", collect)
    .option("--problem-base <uri>", "the receiver's {problem_base}; default: the base of the first problem it answers")
    .addOption(new Option("--json", "print the report as JSON (with the trace) on stdout; the plan goes to stderr"))
    .option("--junit <out.xml>", "also write the report as JUnit XML")
    .option("--report <out.md>", "also write the report as Markdown")
    .option(
      "--trace <out.mstrace>",
      "also write every exchange as a Mailscope trace (JSON; .mstrace opens in the desktop app by double-click)",
    )
    .action(async (target: string, options: ProbeCommandOptions) => {
      await guarded("probe", async () => (await runProbeCommand(target, options, consoleIo)).exitCode);
    });
}
