/**
 * `mailscope serve`: the receiver over the real network. The same handler the
 * simulator runs (`app/receiver/receiver.ts`) behind an HTTPS server that
 * speaks TLS 1.3 only (SVC-6, AUTH-8), with real ports: the system clock,
 * DNS for the senders' key records (G4; or the `keyRecords` of the
 * configuration, consulted first), and a folder of .eml files as the mail
 * store. One log line per request; Ctrl-C (SIGINT) or SIGTERM stops
 * accepting, lets requests in flight finish, then exits.
 *
 * With `--outbound-key` (the served domain's signing key), serve has an
 * outbound side (`serveOutbound.ts`): a failure after acceptance configured
 * in the receiver's policy sends its DSN for real, through the service, to
 * the envelope sender (G17, SVC-8, ENV-3), from a durable outbox in
 * `<state>/outbox/` that a restart resubmits. `--resolve` and `--ca` work as
 * for `send`. There is no SMTP client: a hand-off to SMTP is logged, not
 * sent. Without the key a failure after acceptance is only logged.
 *
 * Idempotency keys are kept on disk, in `<state>/idempotency.sqlite`
 * (`--idempotency-db`; app/node/sqliteIdempotencyStore.ts), so that a retry
 * after a restart or a crash is replayed, not stored again (POST-12, POST-25).
 * Expired keys are purged at start and every {@link PURGE_EVERY_MS}.
 */
import { consoleIo, type CliIo } from "./io.ts";
import { Command, CommanderError } from "commander";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Resolver, TraceEvent } from "../ports.ts";
import type { ReceiverConfig } from "../receiver/config.ts";
import { createReceiver } from "../receiver/receiver.ts";
import { createDnsResolver, parseNameserver } from "../node/dnsResolver.ts";
import { createEmlStore, type EmlStore } from "../node/emlStore.ts";
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  formatLogLine,
  loadOrCreateCertificate,
  onShutdownSignals,
  startHttpsServer,
  type RequestLogEntry,
  type RunningHttpsServer,
  type TlsIdentity,
} from "../node/httpServer.ts";
import { formatConfigError, loadReceiverConfigFile } from "../node/receiverConfigFile.ts";
import {
  IdempotencyStoreOpenError,
  openSqliteIdempotencyStore,
  type SqliteIdempotencyStore,
} from "../node/sqliteIdempotencyStore.ts";
import { CLOCK_SCALE_HINT, createSystemClock, parseClockScale } from "../node/systemPorts.ts";
import { offlineResolver, UsageError } from "./senderPorts.ts";
import { createServeOutbound, type ServeOutbound, type ServeOutboundOptions } from "./serveOutbound.ts";

/** The options of `serve`, as commander hands them over (those of the outbound side in {@link ServeOutboundOptions}). */
export interface ServeOptions extends ServeOutboundOptions {
  readonly config: string;
  readonly cert?: string;
  readonly key?: string;
  readonly port?: string;
  readonly host?: string;
  readonly maildir?: string;
  /** Where a generated certificate is kept (`<state>/tls/`), and the outbound side's outbox (`<state>/outbox/`). */
  readonly state?: string;
  /** Extra names for a generated certificate (the SVCB target, say). */
  readonly hostname?: readonly string[];
  readonly nameserver?: string;
  /** `--no-dns`: key records only from the configuration, and for the outbound side only `--resolve`. */
  readonly dns?: boolean;
  /** Print every trace event of the receiver and of the outbound side as a JSON line on stderr. */
  readonly trace?: boolean;
  /** `--no-fsync`: do not flush each message to disk before answering (tests and benches only: a crash may lose accepted mail). */
  readonly fsync?: boolean;
  /** The idempotency store's file; default `<state>/idempotency.sqlite`. */
  readonly idempotencyDb?: string;
  /** `--headers-timeout`: ms a client has to send a whole request head (then 408). */
  readonly headersTimeout?: string;
  /** `--body-timeout`: ms a client may pause in the middle of a body (then 408). */
  readonly bodyTimeout?: string;
  /** `--max-connections`: connections at once. */
  readonly maxConnections?: string;
  /** `--max-unauthenticated-bodies`: request bodies read at once before their digest is checked. */
  readonly maxUnauthenticatedBodies?: string;
  /** `--faults`: a faults file played on real traffic (the scenario's fault language, app/sim/liveFaults.ts). */
  readonly faults?: string;
  /** `--clock-scale`: spec time per real time, for the faults' windows and the sender's expected times. */
  readonly clockScale?: string;
  /** `--explain`: under each request, what the spec expects of the sender next (on with --faults or --clock-scale). */
  readonly explain?: boolean;
  /** @internal Test seam, not an option of the command: see {@link SqliteIdempotencyStoreOptions.afterPut}. */
  readonly afterIdempotencyPut?: (signingDomain: string, key: string) => void;
  /** @internal Test seam: see {@link SqliteIdempotencyStoreOptions.beforePut} (the mail is stored, the key not yet). */
  readonly beforeIdempotencyPut?: (signingDomain: string, key: string) => void;
}

/** Expired idempotency keys are purged this often while serve runs (and once at start). */
export const PURGE_EVERY_MS = 10 * 60 * 1000;

/** A running `serve`. */
export interface RunningServe {
  readonly server: RunningHttpsServer;
  readonly tls: TlsIdentity;
  readonly store: EmlStore;
  /** The idempotency keys, on disk. */
  readonly idempotency: SqliteIdempotencyStore;
  /** What the start found in the idempotency store: keys kept, and expired ones purged. */
  readonly idempotencyAtStart: {
    readonly kept: number;
    readonly purged: number;
    /** Deliveries a crash cut off between storing mail and answering: their retries resume them. */
    readonly cutOff: number;
  };
  readonly config: ReceiverConfig;
  /** Whether each message is flushed to disk before the answer. */
  readonly fsync: boolean;
  /** The limits on slow and many clients, as in force. */
  readonly limits: ServeLimits;
  /** The outbound side: DSNs of failures after acceptance, and their outbox. */
  readonly outbound: ServeOutbound;
  /** The banner's line about `--faults` and `--clock-scale`, when either is given. */
  readonly faultsLine?: string;
  /**
   * Graceful stop: see {@link RunningHttpsServer.close}; then the outbound
   * side stops, leaving the DSNs without a final outcome in the outbox, and
   * the idempotency store is closed.
   */
  close(): Promise<void>;
}

/** What bounds the work and memory a client can make serve spend before it is authenticated. */
export interface ServeLimits {
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxUnauthenticatedBodies: number;
}

/** Request bodies read at once before their Content-Digest is checked: at most this many × max_message_size in memory. */
export const DEFAULT_MAX_UNAUTHENTICATED_BODIES = 16;

/** A positive whole number option, or its default; a usage error names the option. */
function positive(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[1-9]\d{0,9}$/.test(value)) {
    throw new ServeUsageError(`${option} ${JSON.stringify(value)}: a whole number above 0`);
  }
  return Number(value);
}

/** Bad input to `serve` (a file, an option): printed as is, exit code 2. */
export class ServeUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServeUsageError";
  }
}

/** The connection limits of the options (or their defaults). */
function readLimits(options: ServeOptions): ServeLimits {
  return {
    headersTimeoutMs: positive(options.headersTimeout, "--headers-timeout", DEFAULT_HEADERS_TIMEOUT_MS),
    bodyTimeoutMs: positive(options.bodyTimeout, "--body-timeout", DEFAULT_BODY_TIMEOUT_MS),
    maxConnections: positive(options.maxConnections, "--max-connections", DEFAULT_MAX_CONNECTIONS),
    maxUnauthenticatedBodies: positive(
      options.maxUnauthenticatedBodies,
      "--max-unauthenticated-bodies",
      DEFAULT_MAX_UNAUTHENTICATED_BODIES,
    ),
  };
}

/** Removes (and logs) the temporary files of messages a crash left half written. */
async function removeLeftovers(store: EmlStore, io: CliIo): Promise<void> {
  // A crash leaves the temporary file of a message being written; no delivery runs yet, so every such file is a leftover.
  const leftovers = await store.removeLeftovers().catch((error: unknown) => {
    io.err(
      `${new Date().toISOString()} mail store: cannot look for leftover temporary files: ${(error as Error).message}`,
    );
    return [];
  });
  if (leftovers.length > 0) {
    const shown = leftovers.slice(0, 3).join(", ");
    io.err(
      `${new Date().toISOString()} mail store: removed ${leftovers.length} temporary file(s) an interrupted run left (not mail: a message is stored once linked to its .eml name): ${shown}${leftovers.length > 3 ? ", …" : ""}`,
    );
  }
}

/** What a failure to listen on `host:port` means for the user. */
function listenError(error: unknown, host: string, port: number): ServeUsageError {
  const code = (error as NodeJS.ErrnoException).code;
  return new ServeUsageError(
    code === "EADDRINUSE"
      ? `${host}:${port} is in use; choose another --port`
      : code === "EACCES"
        ? `${host}:${port} needs privileges; choose a --port above 1023`
        : `cannot listen on ${host}:${port}: ${(error as Error).message}`,
  );
}

/**
 * Starts the receiver of `options.config` over HTTPS and returns once it
 * listens. Does not install signal handlers (the command does).
 *
 * @throws ServeUsageError for a bad configuration file, port or certificate,
 * or a bad option of the outbound side (`--outbound-key`, `--resolve`, `--ca`).
 */
export async function startServe(options: ServeOptions, io: CliIo): Promise<RunningServe> {
  const loaded = await loadReceiverConfigFile(options.config);
  if (!loaded.ok) throw new ServeUsageError(loaded.errors.map(formatConfigError).join("\n"));
  const config = loaded.value;

  const port = Number(options.port ?? "8443");
  if (!/^\d+$/.test(options.port ?? "8443") || port > 65535) {
    throw new ServeUsageError(`--port ${JSON.stringify(options.port)}: a port is a number from 0 to 65535`);
  }
  const host = options.host ?? "127.0.0.1";
  const limits = readLimits(options);
  const maildir = options.maildir ?? "mail";
  try {
    await mkdir(maildir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ServeUsageError(
      `--maildir ${maildir}: ${code === "EEXIST" || code === "ENOTDIR" ? "is a file (or under one), not a folder" : `cannot be made: ${(error as Error).message}`}`,
    );
  }

  let tls: TlsIdentity;
  try {
    tls = await loadOrCreateCertificate({
      ...(options.cert !== undefined && { certFile: options.cert }),
      ...(options.key !== undefined && { keyFile: options.key }),
      stateDir: join(options.state ?? ".mailscope", "tls"),
      hostnames: [
        ...config.domains,
        ...(options.hostname ?? []),
        ...(host === "0.0.0.0" || host === "::" ? [] : [host]),
      ],
    });
  } catch (error) {
    throw new ServeUsageError((error as Error).message);
  }

  // Without DNS (`--no-dns`) every key comes from the configuration, and the outbound side knows only --resolve.
  let resolver: Resolver = offlineResolver;
  if (options.dns !== false) {
    if (options.nameserver !== undefined && parseNameserver(options.nameserver) === undefined) {
      throw new ServeUsageError(
        `--nameserver ${JSON.stringify(options.nameserver)}: not an IP address (with an optional :port)`,
      );
    }
    resolver = createDnsResolver(options.nameserver !== undefined ? { nameserver: options.nameserver } : {});
  }

  let outbound: ServeOutbound;
  try {
    outbound = await createServeOutbound(options, {
      domains: config.domains,
      outboxDir: join(options.state ?? ".mailscope", "outbox"),
      fsync: options.fsync !== false,
      fallback: resolver,
      io,
      traceJson: options.trace === true,
    });
  } catch (error) {
    if (error instanceof UsageError) throw new ServeUsageError(error.message);
    throw error;
  }

  const store = createEmlStore(maildir, { fsync: options.fsync !== false });
  await removeLeftovers(store, io);
  let idempotency: SqliteIdempotencyStore;
  try {
    idempotency = openSqliteIdempotencyStore(
      options.idempotencyDb ?? join(options.state ?? ".mailscope", "idempotency.sqlite"),
      {
        fsync: options.fsync !== false,
        ...(options.afterIdempotencyPut !== undefined && { afterPut: options.afterIdempotencyPut }),
        ...(options.beforeIdempotencyPut !== undefined && { beforePut: options.beforeIdempotencyPut }),
      },
    );
  } catch (error) {
    await outbound.stop();
    if (error instanceof IdempotencyStoreOpenError) throw new ServeUsageError(error.message);
    throw error;
  }
  const purged = await idempotency.purge(Date.now());
  const idempotencyAtStart = { kept: idempotency.count(), purged, cutOff: idempotency.countIntents() };
  const trace = {
    emit: (event: TraceEvent): void => {
      if (options.trace === true) io.err(JSON.stringify(event));
      else if (event.name === "failure.after-acceptance") {
        const d = (event.data ?? {}) as Record<string, unknown>;
        io.err(
          `${new Date(event.timeMs).toISOString()} failure after acceptance: ${String(d["mailbox"])} ${String(d["status"])} [G17, STATE-8]${
            outbound.outbound === undefined ? " (no outbound key: DSN not sent; give --outbound-key)" : ""
          }`,
        );
      }
    },
  };
  const receiver = createReceiver(config, {
    // Unref'd timers: a failure-after-acceptance still pending must not keep a stopped server alive.
    clock: createSystemClock({ unref: true }),
    resolver,
    mailStore: store,
    idempotencyStore: idempotency,
    trace,
    maxUnauthenticatedBodies: limits.maxUnauthenticatedBodies,
    holdsDelivery: (mailbox, deliveryId) => store.holds(mailbox, deliveryId),
    // G48: the names of the certificate (the served domains, --hostname, localhost, the address).
    hostnames: tls.altNames.map((name) => name.replace(/^(DNS|IP Address):/, "")),
    ...(outbound.outbound !== undefined && { outbound: outbound.outbound }),
  });

  // --faults, --clock-scale, --explain: the faults in front of the receiver, and the log's notes (loaded only then).
  let handler: (request: Request) => Promise<Response> = (request) => receiver(request);
  let notes: { take(method: string, target: string, key: string | undefined): string[] } | undefined;
  let faultsLine: string | undefined;
  if (options.faults !== undefined || options.clockScale !== undefined || options.explain === true) {
    const clockScale = parseClockScale(options.clockScale);
    if (clockScale === undefined) {
      await outbound.stop();
      await idempotency.close();
      throw new ServeUsageError(`--clock-scale ${JSON.stringify(options.clockScale)}: ${CLOCK_SCALE_HINT}`);
    }
    const explain = await import("./serveFaults.ts");
    let faults;
    try {
      faults = options.faults === undefined ? undefined : await explain.readFaultsFile(options.faults);
    } catch (error) {
      await outbound.stop();
      await idempotency.close();
      if (error instanceof explain.FaultsFileError) throw new ServeUsageError(error.message);
      throw error;
    }
    const explained = explain.explainedHandler(receiver, {
      ...(faults !== undefined && { faults }),
      clockScale,
      clock: createSystemClock({ unref: true }),
      startMs: Date.now(),
      problemBase: config.problem_base,
      servedDomains: config.domains,
    });
    handler = explained.handler;
    notes = explained.notes;
    faultsLine = explain.describeFaults(options.faults, faults, clockScale);
  }

  let server: RunningHttpsServer;
  try {
    server = await startHttpsServer({
      handler,
      cert: tls.cert,
      key: tls.key,
      host,
      port,
      onRequest: (entry: RequestLogEntry) => {
        io.out(formatLogLine(entry));
        for (const line of notes?.take(entry.method, entry.target, entry.idempotencyKey) ?? []) io.out(`    ${line}`);
      },
      onConnectionError: (error) => io.err(`${new Date().toISOString()} connection: ${error.message}`),
      headersTimeoutMs: limits.headersTimeoutMs,
      bodyTimeoutMs: limits.bodyTimeoutMs,
      maxConnections: limits.maxConnections,
    });
  } catch (error) {
    await outbound.stop();
    await idempotency.close();
    throw listenError(error, host, port);
  }
  // What an earlier run left in the outbox goes out again (or, without a key, is counted).
  await outbound.resume();
  const purging = setInterval(() => {
    idempotency.purge(Date.now()).catch((error: unknown) => {
      io.err(`${new Date().toISOString()} idempotency store: purge failed: ${(error as Error).message}`);
    });
  }, PURGE_EVERY_MS);
  purging.unref();
  return {
    server,
    tls,
    store,
    idempotency,
    idempotencyAtStart,
    config,
    fsync: options.fsync !== false,
    limits,
    outbound,
    ...(faultsLine !== undefined && { faultsLine }),
    close: async () => {
      clearInterval(purging);
      await server.close();
      const left = await outbound.stop();
      if (left > 0)
        io.err(
          `${new Date().toISOString()} outbound: ${left} DSN(s) without a final outcome stay in ${outbound.outbox.dir}/ for the next start`,
        );
      await idempotency.close();
    },
  };
}

/** The startup lines: where it listens, for which domains, with which certificate, where mail goes. */
export function describeServe(running: RunningServe): string[] {
  const { server, tls, config, store } = running;
  const origin = server.origin;
  return [
    `mailscope serve: ${origin} for ${config.domains.join(", ")} (TLS 1.3 only)`,
    `  certificate: ${tls.certFile} (${tls.source === "generated" ? "generated now" : tls.source === "state" ? "kept from an earlier run" : "given"}; ${tls.altNames.join(", ")})`,
    `  mail store:  ${store.root}/<mailbox>/<time>-<delivery>.eml${running.fsync ? "" : " (no fsync: a crash may lose accepted mail)"}`,
    `  limits:      ${running.limits.maxConnections} connections, ${running.limits.maxUnauthenticatedBodies} bodies before authentication, 408 after ${running.limits.headersTimeoutMs} ms for the head or ${running.limits.bodyTimeoutMs} ms without body bytes`,
    `  idempotency: ${running.idempotency.file} (${running.idempotencyAtStart.kept} key(s) kept from earlier runs, ${running.idempotencyAtStart.purged} expired purged; retained ${config.idempotencyRetentionS} s${running.idempotencyAtStart.cutOff > 0 ? `; ${running.idempotencyAtStart.cutOff} delivery(ies) cut off by a crash after storing mail, resumed by their retries without storing twice` : ""})${running.fsync ? "" : " (no fsync)"}`,
    ...running.outbound.describe(),
    ...(running.faultsLine !== undefined ? [running.faultsLine] : []),
    `  try:         curl --cacert ${tls.certFile} ${origin}/v1/capabilities`,
    "  Ctrl-C stops: no new connections, requests in flight finish first.",
  ];
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * `mailscope serve --config receiver.yaml [--cert c.pem --key k.pem] [--port 8443] [--host 127.0.0.1]
 * [--maildir ./mail] [--outbound-key k.jwk [--outbound-keyid ID] [--resolve domain=host:port]… [--ca ca.pem]]`.
 */
export function serveCommand(): Command {
  return new Command("serve")
    .description(
      "run the receiver over HTTPS (TLS 1.3 only) with the configuration of a receiver.yaml, storing mail as .eml files",
    )
    .requiredOption("--config <receiver.yaml>", "the receiver's configuration (see examples/receiver.yaml)")
    .option(
      "--cert <cert.pem>",
      "the server certificate (PEM); with --key. Default: a self-signed one kept in <state>/tls/",
    )
    .option("--key <key.pem>", "its private key (PEM)")
    .option("--port <port>", "the port to listen on (0: any free one)", "8443")
    .option("--host <address>", "the address to listen on", "127.0.0.1")
    .option("--maildir <dir>", "where mail is stored: <dir>/<mailbox>/<time>-<delivery>.eml", "mail")
    .option(
      "--state <dir>",
      "where a generated certificate (<dir>/tls/), the outbox of DSNs (<dir>/outbox/) and the idempotency keys (<dir>/idempotency.sqlite) are kept",
      ".mailscope",
    )
    .option(
      "--hostname <name>",
      "another name for the generated certificate (e.g. the SVCB target); repeatable",
      collect,
    )
    .option(
      "--idempotency-db <file>",
      "the SQLite file where Idempotency-Keys and their answers are kept across restarts (default: <state>/idempotency.sqlite)",
    )
    .option(
      "--headers-timeout <ms>",
      "a TLS handshake not finished this long after connecting is cut, nothing written (however slowly its bytes come); a client that has not sent a whole request head this long after connecting is answered 408 and disconnected",
      String(DEFAULT_HEADERS_TIMEOUT_MS),
    )
    .option(
      "--body-timeout <ms>",
      "a client that sends no body bytes this long while serve waits for them is answered 408 and disconnected",
      String(DEFAULT_BODY_TIMEOUT_MS),
    )
    .option(
      "--max-connections <n>",
      "connections at once (TLS handshakes included); more are closed as they come",
      String(DEFAULT_MAX_CONNECTIONS),
    )
    .option(
      "--max-unauthenticated-bodies <n>",
      "request bodies read at once before their Content-Digest is checked (the signature is checked before any is read); more are answered 503 with Retry-After",
      String(DEFAULT_MAX_UNAUTHENTICATED_BODIES),
    )
    .option("--nameserver <ip[:port]>", "DNS server for key records (default: the first of /etc/resolv.conf)")
    .option(
      "--no-dns",
      "ask no DNS server: keys come only from keyRecords in the configuration, DSN destinations only from --resolve",
    )
    .option(
      "--outbound-key <key.jwk>",
      "a served domain's Ed25519 private key (mailscope keygen): enables the outbound side, which sends the DSN of a failure after acceptance (G17)",
    )
    .option("--outbound-keyid <keyid>", "<selector>._svckey.<domain> of --outbound-key (G4); default: the key's kid")
    .option(
      "--resolve <domain=host:port>",
      "outbound side: answer _svc.<domain> locally and connect there (like curl --resolve); repeatable",
      collect,
    )
    .option("--ca <cert.pem>", "outbound side: trust this CA or self-signed certificate instead of the system's")
    .option(
      "--faults <faults.yaml>",
      "play the scenario's fault language on real traffic: 503, 429, dropped connections, latency, per-recipient deferrals and rejections, failures after acceptance, unsupported_version — by time window or by request count (docs/serve-and-lint.md)",
    )
    .option(
      "--clock-scale <n>",
      "the spec's clock runs n times faster for the faults' windows and the sender's expected times (60: a minute a second), for a sender that does the same (mailscope send --clock-scale)",
    )
    .option(
      "--explain",
      "under each request of the log, what the spec expects of the sender next (on with --faults or --clock-scale)",
    )
    .option("--trace", "print every trace event of the receiver and the outbound side as a JSON line on stderr")
    .option(
      "--no-fsync",
      "answer before each message is flushed to disk (faster; a crash may lose accepted mail: for tests and benches)",
    )
    .action(async (options: ServeOptions) => {
      const io = consoleIo;
      let running: RunningServe;
      try {
        running = await startServe(options, io);
      } catch (error) {
        if (error instanceof ServeUsageError) {
          io.err(error.message);
          throw new CommanderError(2, "mailscope.serve", "");
        }
        throw error;
      }
      // The handlers first: whoever waits for the banner to send a signal must find them in place.
      const hook = onShutdownSignals(running.close, running.server.forceClose, {
        onSignal: (signal, count) =>
          io.err(
            count === 1
              ? `${signal}: stopping; ${running.server.inFlight()} request(s) in flight will finish (again to cut them)`
              : `${signal}: cutting every connection`,
          ),
      });
      for (const line of describeServe(running)) io.out(line);
      await hook.done;
      io.err("stopped.");
    });
}
