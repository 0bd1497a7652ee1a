/**
 * `mailscope send` and `mailscope keygen`: real mode. `send` delivers one
 * message over the real network with the same sender the simulator runs
 * (`app/sender/sender.ts`), handed real ports: the system clock (its retry
 * timers run in real time), crypto randomness, DNS (SVCB at `_svc.<domain>`,
 * G5) and fetch over TLS 1.3 (SVC-6). `keygen` makes the Ed25519 key a sender
 * signs with and prints the TXT record that publishes it (G1, G4).
 *
 * `--resolve domain=host:port` stands in for DNS, as curl's `--resolve` does
 * (see `senderPorts.ts`, which the outbound side of `mailscope serve` shares).
 *
 * There is no SMTP client here: a hand-off to SMTP (no SVCB record, fallback,
 * no common version) is recorded and printed, and the recipient's outcome is
 * `smtp`. DSNs the sender makes for failed recipients are shown but not
 * waited for: `send` ends with the message's own outcome.
 */
import { type CliIo } from "./io.ts";
import { Command, CommanderError, Option } from "commander";
import { access, writeFile } from "node:fs/promises";
import type { Clock, Random, Resolver, SmtpHandOff, TraceEvent } from "../ports.ts";
import { parseMailbox } from "../protocol/mailbox.ts";
import {
  buildKeyRecord,
  exportPublicKeyRaw,
  exportSigningKeyJwk,
  generateSigningKey,
  keyidFor,
  signingDomainOfKeyid,
} from "../protocol/profile.ts";
import { deliveryActorId } from "../sender/deliveryContext.ts";
import type { RecipientOutcome } from "../sender/deliveryContext.ts";
import { createSender } from "../sender/sender.ts";
import {
  attemptFailure,
  capabilitiesFailure,
  describeEvent,
  isoSeconds,
  noSmtpClient,
  shortProblem,
} from "../trace/describe.ts";
import { createDnsResolver, parseNameserver } from "../node/dnsResolver.ts";
import {
  CLOCK_SCALE_HINT,
  createScaledClock,
  cryptoRandom,
  parseClockScale,
  systemClock,
} from "../node/systemPorts.ts";
import { DEFAULT_TLS_FETCH_TIMEOUT_MS } from "../node/tlsFetch.ts";
import {
  collect,
  createSenderNetwork,
  guarded,
  describeDnsEvent,
  offlineResolver,
  parseResolve,
  readCa,
  readInput,
  readSigningKey,
  recordingSmtpRelay,
  usage,
  type Jwk,
  type SigningIdentity,
} from "./senderPorts.ts";

export { UsageError, parseResolve } from "./senderPorts.ts";
export type { ResolveEntry } from "./senderPorts.ts";

/** Exit codes of `send` (and `keygen`): 0 every recipient accepted, 1 not all, 2 bad input. */
export const EXIT = { accepted: 0, notAccepted: 1, badInput: 2 } as const;

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration like `10m`, `90s`, `1h`, `500ms`, `2d` (a bare number is seconds), in ms; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * (DURATION_UNITS_MS[match[2] ?? "s"] ?? 1_000));
}

/** The longest `--max-wait`: a week (retries give up after 5 days); Node's timers also end at 24.8 days. */
export const MAX_WAIT_MS = 7 * 86_400_000;
/** The longest `--timeout` of a connection: an hour. */
export const MAX_TIMEOUT_MS = 3_600_000;

/** What `send` is told (the command's options). */
export interface SendOptions {
  readonly from: string;
  /** Recipients; each entry may hold several, comma-separated. */
  readonly to: readonly string[];
  /** The .eml file, sent byte for byte (POST-9). */
  readonly message: string;
  /** The private Ed25519 JWK (from `mailscope keygen`). */
  readonly key: string;
  /** Default: the JWK's `kid`. */
  readonly keyid?: string;
  readonly resolve?: readonly string[];
  /** PEM file of the CA (or self-signed certificate) to trust instead of the system's. */
  readonly ca?: string;
  /** Stop waiting after this long (`10m`) and print where the delivery stands. */
  readonly maxWait?: string;
  readonly json?: boolean;
  /** `ip[:port]`; default the first nameserver of /etc/resolv.conf. */
  readonly nameserver?: string;
  /** False (`--no-dns`): names `--resolve` does not answer have no records, and nothing is asked of DNS. */
  readonly dns?: boolean;
  /** The `{problem_base}` problem types are read under; default `https://<first recipient domain>/problems`. */
  readonly problemBase?: string;
  /** Idle timeout of each connection; default 30s. */
  readonly timeout?: string;
  /** `--clock-scale n`: the spec's retry schedule runs n times faster (signatures keep the wall clock). */
  readonly clockScale?: string;
}

/** Ports a caller (a test) may put in place of the real ones. */
export interface SendOverrides {
  /** Answers what `--resolve` does not, instead of real DNS. */
  readonly resolver?: Resolver;
  readonly clock?: Clock;
  readonly random?: Random;
  /** Settles instead of SIGINT to stop waiting early; default: the first Ctrl-C. */
  readonly interrupt?: Promise<void>;
}

/** Where one recipient stands when `send` ends. */
export interface RecipientStanding {
  readonly recipient: string;
  /** Final outcome, or `pending` when `send` stopped waiting first. */
  readonly outcome: RecipientOutcome["outcome"] | "pending";
  readonly rule?: string;
  /** The problem identifier (or type, when it has none). */
  readonly problem?: string;
  readonly detail?: string;
  /** Pending only: the recipient's last per-recipient status (`deferred`), if it got one. */
  readonly lastStatus?: string;
  /** Pending only: when the next attempt is due, ISO 8601. */
  readonly nextAttemptAt?: string;
  /** `smtp` only: why, and that nothing was sent. */
  readonly smtpReason?: SmtpHandOff["reason"];
}

/** The result of `send`, also its `--json` output. */
export interface SendSummary {
  readonly messageId: string;
  readonly from: string;
  readonly to: readonly string[];
  /** Whether every recipient reached a final outcome. */
  readonly complete: boolean;
  readonly recipients: readonly RecipientStanding[];
  /** DSNs the sender generated for failed recipients (not waited for). */
  readonly dsns: readonly { readonly to: string; readonly reason: string; readonly recipients: readonly string[] }[];
  readonly exitCode: 0 | 1;
}

/** The one line a recipient's standing is printed as; `command` is the one running the sender. */
export function formatStanding(s: RecipientStanding, command = "send"): string {
  const why = [s.problem, s.detail].filter((x) => x !== undefined && x !== "").join(": ");
  switch (s.outcome) {
    case "accepted":
      return `${s.recipient}: accepted`;
    case "smtp":
      return `${s.recipient}: smtp (${s.smtpReason ?? "hand-off"}; ${noSmtpClient(command)})`;
    case "pending":
      // A recipient answered `deferred` says so; one whose whole request failed is being retried.
      return `${s.recipient}: ${s.lastStatus ?? (s.nextAttemptAt ? "retrying" : "pending")}${s.nextAttemptAt ? `, next attempt at ${s.nextAttemptAt}` : ""}${why ? ` (${why})` : ""}`;
    default:
      return `${s.recipient}: ${s.outcome}${why ? ` (${why})` : ""}`;
  }
}

/** A recipient's final outcome as a standing; `handOffs` (those the SMTP relay recorded) tell an `smtp` outcome's reason. */
export function standingOf(outcome: RecipientOutcome, handOffs: readonly SmtpHandOff[]): RecipientStanding {
  const handOff = handOffs.find((h) => h.to.includes(outcome.recipient));
  const problem =
    outcome.problem === undefined ? undefined : (outcome.problem.identifier ?? shortProblem(outcome.problem.type));
  return {
    recipient: outcome.recipient,
    outcome: outcome.outcome,
    rule: outcome.rule,
    ...(problem !== undefined && { problem }),
    ...(outcome.problem?.detail !== undefined && { detail: outcome.problem.detail }),
    ...(outcome.outcome === "smtp" && handOff !== undefined && { smtpReason: handOff.reason }),
  };
}

/** The checked inputs of a send. */
interface Prepared {
  readonly from: string;
  readonly fromDomain: string;
  readonly to: readonly string[];
  readonly message: Uint8Array;
  readonly signingKey: SigningIdentity["signingKey"];
  readonly keyid: string;
  readonly resolve: readonly ReturnType<typeof parseResolve>[];
  readonly ca?: Buffer;
  readonly maxWaitMs?: number;
  readonly timeoutMs: number;
  readonly clockScale: number;
  readonly problemBase: string;
}

async function prepare(options: SendOptions): Promise<Prepared> {
  const from = parseMailbox(options.from);
  if (!from.ok) usage(`--from ${options.from}: ${from.violations.map((v) => v.message).join("; ")}`);
  const to: string[] = [];
  for (const entry of options.to.flatMap((t) => t.split(","))) {
    const text = entry.trim();
    if (text === "") continue;
    const parsed = parseMailbox(text);
    if (!parsed.ok) usage(`--to ${text}: ${parsed.violations.map((v) => v.message).join("; ")}`);
    if (!to.includes(parsed.value.address)) to.push(parsed.value.address);
  }
  if (to.length === 0) usage("--to: give at least one recipient");

  const message = await readInput(options.message, "--message", "messages");
  if (message.length === 0) usage(`--message ${options.message}: the file is empty`);

  const signing = await readSigningKey(options.key, {
    keyOption: "--key",
    keyidOption: "--keyid",
    ...(options.keyid !== undefined && { keyid: options.keyid }),
    signer: "send signs",
  });
  const { signingKey, keyid } = signing;
  if (signing.domain !== from.value.domain) {
    usage(
      `--keyid ${keyid} signs for ${signing.domain}, but --from is in ${from.value.domain} (AUTH-4: the envelope from's domain must be the signing domain)`,
    );
  }

  const resolve = (options.resolve ?? []).map(parseResolve);
  const ca = options.ca === undefined ? undefined : await readCa(options.ca);
  let maxWaitMs: number | undefined;
  if (options.maxWait !== undefined) {
    maxWaitMs = parseDuration(options.maxWait);
    if (maxWaitMs === undefined) usage(`--max-wait ${options.maxWait}: not a duration (e.g. 90s, 10m, 2h)`);
    if (maxWaitMs > MAX_WAIT_MS) usage(`--max-wait ${options.maxWait}: at most 7d (retries give up after 5 days)`);
  }
  const timeoutMs = options.timeout === undefined ? DEFAULT_TLS_FETCH_TIMEOUT_MS : parseDuration(options.timeout);
  if (timeoutMs === undefined || timeoutMs <= 0) usage(`--timeout ${options.timeout ?? ""}: not a duration (e.g. 30s)`);
  if (timeoutMs > MAX_TIMEOUT_MS) usage(`--timeout ${options.timeout ?? ""}: at most 1h`);
  if (options.nameserver !== undefined && parseNameserver(options.nameserver) === undefined) {
    usage(`--nameserver ${options.nameserver}: not an IP address with an optional port`);
  }
  const clockScale = parseClockScale(options.clockScale);
  if (clockScale === undefined) usage(`--clock-scale ${options.clockScale ?? ""}: ${CLOCK_SCALE_HINT}`);
  const firstDomain = to[0]?.slice(to[0].lastIndexOf("@") + 1) ?? from.value.domain;
  const problemBase = options.problemBase ?? `https://${firstDomain}/problems`;
  if (!URL.canParse(problemBase)) usage(`--problem-base ${problemBase}: not an absolute URI`);
  return {
    from: from.value.address,
    fromDomain: from.value.domain,
    to,
    message: new Uint8Array(message),
    signingKey,
    keyid,
    resolve,
    ...(ca !== undefined && { ca }),
    ...(maxWaitMs !== undefined && { maxWaitMs }),
    timeoutMs,
    clockScale,
    problemBase,
  };
}

/**
 * Sends one message for real and resolves with where every recipient stands.
 * Progress lines go to `io.out` (to `io.err` with `json`, so that stdout holds
 * only the JSON summary).
 *
 * @throws UsageError for bad input: a missing or unreadable file, a key that
 * is not an Ed25519 private JWK, a bad mailbox, keyid, duration or address.
 */
export async function runSend(options: SendOptions, io: CliIo, overrides: SendOverrides = {}): Promise<SendSummary> {
  const input = await prepare(options);
  const progress = options.json === true ? io.err : io.out;
  // --clock-scale: the schedule on a faster clock; signatures, timeouts and --max-wait on the wall clock.
  const clock = overrides.clock ?? (input.clockScale === 1 ? systemClock : createScaledClock(input.clockScale));
  if (input.clockScale !== 1)
    progress(
      `the spec's clock runs ×${input.clockScale} from ${new Date().toISOString()}: the times below are on it (a minute of the retry schedule takes ${60 / input.clockScale} s)`,
    );
  const stamp = (ms: number): string => isoSeconds(ms).slice(11, 19);

  const dns =
    overrides.resolver === undefined && options.dns !== false
      ? createDnsResolver({
          ...(options.nameserver !== undefined && { nameserver: options.nameserver }),
          onEvent: (event) => progress(`${stamp(clock.now())} ${describeDnsEvent(event)}`),
        })
      : undefined;
  const fallback = overrides.resolver ?? dns ?? offlineResolver;
  const { resolver, fetch } = createSenderNetwork({
    resolve: input.resolve,
    ...(input.ca !== undefined && { ca: input.ca }),
    timeoutMs: input.timeoutMs,
    fallback,
    // --nameserver: the endpoint's A/AAAA through the same server as SVCB and TXT, the SVCB hints as fallback.
    ...(options.nameserver !== undefined && dns !== undefined && { addresses: dns }),
  });

  const handOffs: SmtpHandOff[] = [];
  const smtp = recordingSmtpRelay("send", (handOff) => handOffs.push(handOff));

  // What the trace tells about each recipient, for a summary before the end.
  const lastStatus = new Map<string, { status: string; problem?: string }>();
  const lastFailure = new Map<string, string>();
  const nextTimer = new Map<string, number>();
  const dsns: { to: string; reason: string; recipients: string[] }[] = [];
  const trace = {
    emit(event: TraceEvent): void {
      const d = (event.data ?? {}) as Record<string, unknown>;
      if (event.name === "recipient.result" && typeof d["recipient"] === "string") {
        const problem = shortProblem(d["problem"]);
        lastStatus.set(d["recipient"], { status: String(d["status"]), ...(problem !== undefined && { problem }) });
      }
      // The last request-level failure per recipient domain, for a recipient that got no result of its own.
      // (`\u2192` is the arrow of a delivery id, escaped: the CLI's one-file build stays ASCII, scripts/build-cli.mjs.)
      if (event.name === "attempt.ended" && d["class"] !== "results" && typeof d["deliveryId"] === "string")
        lastFailure.set(d["deliveryId"].replace(/^.*\u2192/, "").replace(/#[0-9]+$/, ""), attemptFailure(d));
      if (event.name === "capabilities.invalid")
        lastFailure.set(String(d["domain"]), `capabilities unusable: ${capabilitiesFailure(d)}`);
      if (event.name === "discovery.resolved" && d["outcome"] === "dns-failure")
        lastFailure.set(String(d["domain"]), `SVCB lookup failed (${String(d["answer"])})`);
      if (event.name === "timer.set" && typeof d["deliveryActor"] === "string")
        nextTimer.set(d["deliveryActor"], Number(d["atMs"]));
      if (event.name === "timer.fired" && typeof d["deliveryActor"] === "string") nextTimer.delete(d["deliveryActor"]);
      if (event.name === "dsn.sent")
        dsns.push({
          to: String(d["to"]),
          reason: String(d["reason"]),
          recipients: Array.isArray(d["recipients"]) ? d["recipients"].map(String) : [],
        });
      const line = describeEvent(event, { flavour: "progress", command: "send" });
      if (line !== undefined) progress(`${stamp(event.timeMs)} ${line}`);
    },
  };

  const sender = createSender(
    { domain: input.fromDomain, signingKey: input.signingKey, keyid: input.keyid, problemBase: input.problemBase },
    {
      clock,
      ...(input.clockScale !== 1 && overrides.clock === undefined && { signingClock: systemClock }),
      random: overrides.random ?? cryptoRandom,
      resolver,
      fetch,
      smtp,
      trace,
    },
  );
  const handle = sender.submit({ from: input.from, to: input.to, message: input.message });

  // Wait for every outcome, or until --max-wait or Ctrl-C says stop.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onSigint: (() => void) | undefined;
  const stops: Promise<"stopped">[] = [];
  if (input.maxWaitMs !== undefined) {
    const ms = input.maxWaitMs;
    stops.push(new Promise((resolve) => (timer = setTimeout(() => resolve("stopped"), ms))));
  }
  if (overrides.interrupt !== undefined) {
    stops.push(overrides.interrupt.then(() => "stopped" as const));
  } else {
    stops.push(
      new Promise((resolve) => {
        onSigint = () => resolve("stopped");
        process.once("SIGINT", onSigint);
      }),
    );
  }
  const finished = await Promise.race([handle.done.then(() => "done" as const), ...stops]);
  if (timer !== undefined) clearTimeout(timer);
  if (onSigint !== undefined) process.off("SIGINT", onSigint);
  const outcomes = handle.outcomes();
  sender.stop();
  if (finished === "stopped")
    progress(
      `${stamp(clock.now())} stopped waiting${input.maxWaitMs !== undefined ? ` (--max-wait ${options.maxWait ?? ""})` : ""}`,
    );

  const actorFor = (recipient: string): string =>
    deliveryActorId(handle.messageId, recipient.slice(recipient.lastIndexOf("@") + 1));
  const recipients = input.to.map((recipient): RecipientStanding => {
    const outcome = outcomes.find((o) => o.recipient === recipient);
    if (outcome !== undefined) return standingOf(outcome, handOffs);
    const status = lastStatus.get(recipient);
    const next = nextTimer.get(actorFor(recipient));
    const failure = lastFailure.get(recipient.slice(recipient.lastIndexOf("@") + 1));
    const problem = status?.problem ?? failure;
    return {
      recipient,
      outcome: "pending",
      ...(status !== undefined && { lastStatus: status.status }),
      ...(problem !== undefined && { problem }),
      ...(next !== undefined && { nextAttemptAt: isoSeconds(next) }),
    };
  });
  const complete = recipients.every((r) => r.outcome !== "pending");
  const exitCode = recipients.every((r) => r.outcome === "accepted") ? EXIT.accepted : EXIT.notAccepted;
  const summary: SendSummary = {
    messageId: handle.messageId,
    from: input.from,
    to: input.to,
    complete,
    recipients,
    dsns,
    exitCode,
  };
  if (options.json === true) io.out(JSON.stringify(summary, null, 2));
  else for (const r of recipients) io.out(formatStanding(r));
  return summary;
}

/** Commander errors (a missing option, an unknown one) are bad input: exit 2; help and version stay 0. */
function exitOnUsage(error: CommanderError): never {
  if (error.exitCode === 0) throw error;
  throw new CommanderError(EXIT.badInput, error.code, error.message);
}

/**
 * `mailscope send --from A --to B[,C] --message file.eml --key key.jwk
 * [--keyid ID] [--resolve domain=host:port]… [--ca cert.pem] [--max-wait 10m]
 * [--json]`: delivers one message for real. Exit 0 when every recipient is
 * accepted, 1 otherwise, 2 on bad input.
 */
export function sendCommand(): Command {
  return new Command("send")
    .description("deliver one message for real: SVCB discovery, TLS 1.3, a signed POST, retries in real time")
    .requiredOption("--from <mailbox>", "envelope sender; its domain is the signing domain (AUTH-4)")
    .requiredOption("--to <mailbox[,mailbox]>", "recipient(s); repeat or separate with commas", collect)
    .requiredOption("--message <file.eml>", "the RFC 5322 message, sent byte for byte")
    .requiredOption("--key <key.jwk>", "Ed25519 private key as a JWK (mailscope keygen)")
    .option("--keyid <keyid>", "<selector>._svckey.<domain> (G4); default: the key's kid")
    .option(
      "--resolve <domain=host:port>",
      "answer _svc.<domain> locally and connect there (like curl --resolve); repeatable",
      collect,
    )
    .option("--ca <cert.pem>", "trust this CA or self-signed certificate instead of the system's")
    .option("--max-wait <duration>", "stop waiting after this long (90s, 10m, 2h) and print where the delivery stands")
    .option("--timeout <duration>", "idle timeout of each connection", "30s")
    .option(
      "--clock-scale <n>",
      "run the spec's retry schedule n times faster (60: a minute a second), e.g. against mailscope serve --faults --clock-scale n; signatures keep the wall clock",
    )
    .option("--nameserver <ip[:port]>", "DNS server to ask (default: the first of /etc/resolv.conf)")
    .option("--no-dns", "ask no DNS server: only --resolve answers")
    .option("--problem-base <uri>", "the receiver's {problem_base} (default https://<recipient domain>/problems)")
    .addOption(new Option("--json", "print a JSON summary on stdout (progress goes to stderr)"))
    .exitOverride(exitOnUsage)
    .action(async (options: SendOptions) => {
      await guarded("send", async () => {
        const summary = await runSend(options, {
          out: (line) => console.log(line),
          err: (line) => console.error(line),
        });
        return summary.exitCode;
      });
    });
}

/** What `keygen` is told. */
export interface KeygenOptions {
  readonly domain: string;
  readonly selector: string;
  readonly out?: string;
  readonly force?: boolean;
}

/** What `keygen` made. */
export interface KeygenResult {
  readonly keyid: string;
  /** The private JWK, with `kid` set to the keyid. */
  readonly jwk: Jwk & { readonly kid: string };
  /** The TXT record's value (G4). */
  readonly record: string;
}

/**
 * A fresh Ed25519 key for `selector` of `domain` (G1), its keyid and TXT
 * record (G4). @throws UsageError for a bad domain or selector.
 */
export async function generateKey(domain: string, selector: string): Promise<KeygenResult> {
  const keyid = keyidFor(selector.trim(), domain.trim().toLowerCase().replace(/\.$/, ""));
  const checked = signingDomainOfKeyid(keyid);
  if (!checked.ok)
    usage(`--domain ${domain} --selector ${selector}: ${checked.violations.map((v) => v.message).join("; ")}`);
  const pair = await generateSigningKey();
  const jwk = { ...(await exportSigningKeyJwk(pair.privateKey)), kid: keyid };
  return { keyid, jwk, record: buildKeyRecord(await exportPublicKeyRaw(pair.publicKey)) };
}

/** The lines `keygen` prints about a key. */
export function describeKey(result: KeygenResult, out: string | undefined): string[] {
  return [
    `keyid: ${result.keyid}`,
    "Publish this TXT record (G4):",
    `  ${result.keyid}. IN TXT "${result.record}"`,
    "Or, for `mailscope serve`, under keyRecords in its config:",
    `  ${result.keyid}: "${result.record}"`,
    ...(out === undefined
      ? []
      : [`Private key written to ${out} (keep it secret). Send with: mailscope send --key ${out} …`]),
  ];
}

/**
 * `mailscope keygen --domain D --selector S [--out key.jwk] [--force]`: a new
 * Ed25519 signing key. With `--out` the private JWK goes to that file (mode
 * 600, never over an existing file without `--force`) and the record to
 * stdout; without it the JWK goes to stdout and the record to stderr, so
 * `> key.jwk` works.
 */
export function keygenCommand(): Command {
  return new Command("keygen")
    .description("make an Ed25519 signing key and print the DNS TXT record that publishes it (G1, G4)")
    .requiredOption("--domain <domain>", "the signing domain")
    .requiredOption("--selector <selector>", "the key's selector: the keyid is <selector>._svckey.<domain>")
    .option("--out <key.jwk>", "write the private JWK here instead of stdout")
    .option("--force", "overwrite --out if it exists")
    .exitOverride(exitOnUsage)
    .action(async (options: KeygenOptions) => {
      await guarded("keygen", async () => {
        if (options.out !== undefined && options.force !== true) {
          const exists = await access(options.out).then(
            () => true,
            () => false,
          );
          if (exists) usage(`--out ${options.out}: the file exists (add --force to overwrite it)`);
        }
        const result = await generateKey(options.domain, options.selector);
        const json = `${JSON.stringify(result.jwk, null, 2)}\n`;
        if (options.out === undefined) {
          process.stdout.write(json);
          for (const line of describeKey(result, undefined)) console.error(line);
          return 0;
        }
        try {
          await writeFile(options.out, json, { mode: 0o600 });
        } catch (error) {
          usage(`--out ${options.out}: cannot be written (${(error as Error).message})`);
        }
        for (const line of describeKey(result, options.out)) console.log(line);
        return 0;
      });
    });
}
