/**
 * The outbound side of `mailscope serve`: the receiving domain's own sender,
 * which delivers the DSN of a failure after acceptance (G17, SVC-8, STATE-8,
 * EVT-2) through the service to the original envelope sender, as a normal
 * message with a null `from` (ENV-3). The simulator wires the same thing
 * (`app/sim/world.ts`); here the sender is the one `mailscope send` runs,
 * with the same real ports (`senderPorts.ts`): the system clock, crypto
 * randomness, DNS or `--resolve` for discovery, fetch over TLS 1.3 trusting
 * the system's roots or `--ca`.
 *
 * It is configured by options, as `send` is (`--outbound-key`,
 * `--outbound-keyid`, `--resolve`, `--ca`), rather than by a section of
 * receiver.yaml: that file's schema is the receiver's configuration, which
 * the simulator's scenarios share and where the outbound side is the
 * domain's own sender, and the private key is a secret file, as the TLS key
 * given with `--key` is. Without `--outbound-key` there is no outbound side:
 * a failure after acceptance is logged and no DSN is sent.
 *
 * Every DSN goes through a durable outbox (`app/node/outbox.ts`,
 * `<state>/outbox/`): written and flushed before the sender gets it, removed
 * once each recipient has a final outcome (accepted, rejected, bounced, or
 * smtp: there is no SMTP client, so a hand-off is logged as not sent and
 * counts as final). A DSN to the null sender makes no further DSN. What a
 * stop leaves in the outbox is resubmitted on the next start: as a new
 * delivery, with a new Idempotency-Key and a retry schedule that starts
 * again (G45).
 *
 * Each DSN gets its own sender, whose problem base is that of the DSN's
 * recipient domain, `https://<domain>/problems`, as `send` reads it (G39).
 */
import type { CliIo } from "./io.ts";
import type { Clock, Random, Resolver, SmtpHandOff, TraceEvent } from "../ports.ts";
import type { Outbound, OutboundSubmission } from "../receiver/receiver.ts";
import { createSender, type Sender } from "../sender/sender.ts";
import { headerMessageId } from "../sim/scenario.ts";
import { createOutbox, type Outbox, type OutboxEntry, type OutboxEnvelope } from "../node/outbox.ts";
import { createSystemClock, cryptoRandom } from "../node/systemPorts.ts";
import { describeEvent } from "../trace/describe.ts";
import { formatStanding, standingOf } from "./send.ts";
import {
  createSenderNetwork,
  parseResolve,
  readCa,
  readSigningKey,
  recordingSmtpRelay,
  usage,
  type ResolveEntry,
  type SenderNetwork,
  type SigningIdentity,
} from "./senderPorts.ts";

/** The options of `serve` that concern its outbound side. */
export interface ServeOutboundOptions {
  /** The served domain's private Ed25519 JWK (from `mailscope keygen`): it signs the DSNs. */
  readonly outboundKey?: string;
  /** Default: the JWK's `kid`. */
  readonly outboundKeyid?: string;
  /** `domain=host:port`: where the DSNs to `domain` go, instead of DNS (as for `send`). */
  readonly resolve?: readonly string[];
  /** PEM file of the CA (or self-signed certificate) to trust instead of the system's. */
  readonly ca?: string;
}

/** What the outbound side gets from the rest of `serve`. */
export interface ServeOutboundContext {
  /** The served domains: the key must sign for one of them. */
  readonly domains: readonly string[];
  /** The outbox folder: `<state>/outbox`. */
  readonly outboxDir: string;
  /** Flush the outbox's files to disk (off with `--no-fsync`). */
  readonly fsync: boolean;
  /** Answers what `--resolve` does not: `serve`'s DNS resolver, or none under `--no-dns`. */
  readonly fallback: Resolver;
  readonly io: CliIo;
  /** `--trace`: every sender trace event as a JSON line on stderr, instead of progress lines. */
  readonly traceJson: boolean;
  /** Default: the system clock, with unref'd timers (a pending retry does not keep a stopped process alive). */
  readonly clock?: Clock;
  readonly random?: Random;
}

/** The outbound side of a running `serve`. */
export interface ServeOutbound {
  /** For the receiver's ports; undefined without `--outbound-key`. */
  readonly outbound?: Outbound;
  /** The key that signs the DSNs, when there is one. */
  readonly keyid?: string;
  readonly outbox: Outbox;
  /** Resubmits what an earlier run left in the outbox, one log line each; sets aside what cannot be read. */
  resume(): Promise<void>;
  /** Resolves once no DSN is being delivered or written (each has a final outcome and has left the outbox). */
  whenIdle(): Promise<void>;
  /** Stops every sender; DSNs without a final outcome stay in the outbox. Resolves with how many stayed. */
  stop(): Promise<number>;
  /** The banner's lines about the outbound side. */
  describe(): string[];
}

function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

function domainOf(mailbox: string): string {
  return mailbox.slice(mailbox.lastIndexOf("@") + 1).toLowerCase();
}

/** `bob@b.example (5.2.1)` for each recipient a DSN reports on. */
function reported(envelope: OutboxEnvelope): string {
  const about = envelope.about;
  if (about === undefined) return "";
  return ` for ${about.recipients.map((r) => `${r.mailbox} (${r.status})`).join(", ")} of delivery ${about.deliveryId}`;
}

/**
 * The outbound options read: the signing key (which must sign for a served domain), `--resolve` and `--ca`.
 *
 * @throws UsageError naming the option or file.
 */
async function readOutboundOptions(
  options: ServeOutboundOptions,
  domains: readonly string[],
): Promise<{
  readonly identity: SigningIdentity | undefined;
  readonly resolve: readonly ResolveEntry[];
  readonly ca: Awaited<ReturnType<typeof readCa>> | undefined;
}> {
  if (options.outboundKey === undefined) {
    for (const [given, option] of [
      [options.outboundKeyid, "--outbound-keyid"],
      [options.resolve?.[0], "--resolve"],
      [options.ca, "--ca"],
    ] as const) {
      if (given !== undefined)
        usage(`${option} ${given}: it is for the outbound side, which needs --outbound-key (the served domain's key)`);
    }
  }
  const identity: SigningIdentity | undefined =
    options.outboundKey === undefined
      ? undefined
      : await readSigningKey(options.outboundKey, {
          keyOption: "--outbound-key",
          keyidOption: "--outbound-keyid",
          ...(options.outboundKeyid !== undefined && { keyid: options.outboundKeyid }),
          signer: "serve signs its DSNs with it",
        });
  if (identity !== undefined && !domains.includes(identity.domain)) {
    usage(
      `--outbound-key ${options.outboundKey ?? ""}: its keyid ${identity.keyid} signs for ${identity.domain}, which this receiver does not serve (${domains.join(", ")}); the DSNs go out in a served domain's name (G17)`,
    );
  }
  const resolve: readonly ResolveEntry[] = (options.resolve ?? []).map(parseResolve);
  const ca = options.ca === undefined ? undefined : await readCa(options.ca);
  return { identity, resolve, ca };
}

/**
 * Reads the outbound options and makes the outbound side (without starting
 * anything: {@link ServeOutbound.resume} does).
 *
 * @throws UsageError naming the option or file: a key that is not an Ed25519
 * private JWK, one that does not sign for a served domain, a bad `--resolve`
 * or `--ca`, or those without `--outbound-key`.
 */
export async function createServeOutbound(
  options: ServeOutboundOptions,
  context: ServeOutboundContext,
): Promise<ServeOutbound> {
  const { io } = context;
  const clock = context.clock ?? createSystemClock({ unref: true });
  const random = context.random ?? cryptoRandom;
  const outbox = createOutbox(context.outboxDir, { fsync: context.fsync });
  const log = (line: string): void => io.err(`${isoTime(clock.now())} ${line}`);

  const { identity, resolve, ca } = await readOutboundOptions(options, context.domains);

  /** The senders at work, each with its network (to cut its requests in flight on stop). */
  const live = new Set<{ readonly sender: Sender; readonly network: SenderNetwork }>();
  /** Outbox writes and removals under way, which a stop waits for. */
  const writes = new Set<Promise<unknown>>();
  let stopped = false;
  let waiters: (() => void)[] = [];
  const wakeIfIdle = (): void => {
    if (live.size > 0 || writes.size > 0) return;
    const ready = waiters;
    waiters = [];
    for (const wake of ready) wake();
  };
  const track = <T>(work: Promise<T>): Promise<T> => {
    writes.add(work);
    const done = (): void => {
      writes.delete(work);
      wakeIfIdle();
    };
    work.then(done, done);
    return work;
  };

  /** Hands an outbox entry (or, when it could not be written, the DSN alone) to a sender of its own. */
  function deliver(
    entry: Pick<OutboxEntry, "envelope" | "message"> & { readonly id?: string },
    keyed: SigningIdentity,
  ): void {
    const { envelope } = entry;
    const messageId = envelope.messageId;
    const recipientDomain = domainOf(envelope.to[0] ?? "");
    const network = createSenderNetwork({ resolve, ...(ca !== undefined && { ca }), fallback: context.fallback });
    const handOffs: SmtpHandOff[] = [];
    const trace = {
      emit(event: TraceEvent): void {
        if (context.traceJson) {
          io.err(JSON.stringify(event));
          return;
        }
        // Its submission is the "queued" or "resubmitted" line already.
        if (event.name === "message.submitted") return;
        const line = describeEvent(event, { flavour: "progress", command: "serve" });
        if (line !== undefined) log(`DSN ${messageId}: ${line.trim()}`);
      },
    };
    const sender = createSender(
      {
        domain: keyed.domain,
        signingKey: keyed.signingKey,
        keyid: keyed.keyid,
        problemBase: `https://${recipientDomain}/problems`,
      },
      {
        clock,
        random,
        resolver: network.resolver,
        fetch: network.fetch,
        smtp: recordingSmtpRelay("serve", (handOff) => handOffs.push(handOff)),
        trace,
      },
    );
    const worker = { sender, network };
    live.add(worker);
    const handle = sender.submit({ messageId, from: null, to: envelope.to, message: entry.message });
    // A stopped sender never settles `done`: the entry then stays in the outbox for the next start.
    void handle.done.then((outcomes) => {
      sender.stop();
      const outcome = outcomes.map((o) => formatStanding(standingOf(o, handOffs), "serve")).join("; ");
      const removal =
        entry.id === undefined
          ? Promise.resolve("")
          : outbox.remove(entry.id).then(
              () => "; out of the outbox",
              (error: unknown) =>
                `; could not be taken out of the outbox (${(error as Error).message}): the next start sends it again`,
            );
      // Removed from the live set only once the removal is tracked, so whenIdle never sees a gap between the two.
      void track(removal.then((tail) => log(`DSN ${messageId} final: ${outcome}${tail}`)));
      live.delete(worker);
      wakeIfIdle();
    });
  }

  const outbound: Outbound | undefined =
    identity === undefined
      ? undefined
      : {
          async submit(submission: OutboundSubmission): Promise<void> {
            const nowMs = clock.now();
            const envelope: OutboxEnvelope = {
              from: null,
              to: [...submission.to],
              submittedAt: isoTime(nowMs),
              messageId: headerMessageId(submission.message) ?? `dsn.${nowMs}@${identity.domain}`,
              ...(submission.about !== undefined && {
                about: {
                  deliveryId: submission.about.deliveryId,
                  recipients: submission.about.recipients.map((r) => ({ mailbox: r.mailbox, status: r.status })),
                },
              }),
            };
            let entry: Pick<OutboxEntry, "envelope" | "message"> & { readonly id?: string };
            let where: string;
            try {
              const added = await track(outbox.add(envelope, submission.message));
              entry = added;
              where = `outbox ${added.file}`;
            } catch (error) {
              entry = { envelope, message: submission.message };
              where = `NOT in the outbox (${(error as Error).message}): sent without a durable copy`;
            }
            log(
              `DSN ${envelope.messageId} queued to ${envelope.to.join(", ")}${reported(envelope)} [G17, STATE-8]; ${where}`,
            );
            if (stopped) {
              log(`DSN ${envelope.messageId}: serve is stopping; left in the outbox for the next start`);
              return;
            }
            deliver(entry, identity);
          },
        };

  return {
    ...(outbound !== undefined && { outbound }),
    ...(identity !== undefined && { keyid: identity.keyid }),
    outbox,
    async resume() {
      let loaded: Awaited<ReturnType<Outbox["load"]>>;
      try {
        loaded = await track(outbox.load());
      } catch (error) {
        log(`outbox ${outbox.dir}: cannot be read (${(error as Error).message}); nothing resubmitted`);
        return;
      }
      for (const aside of loaded.setAside)
        log(`outbox: ${aside.file}: ${aside.reason}; moved aside to ${aside.movedTo}`);
      if (loaded.entries.length === 0) return;
      if (identity === undefined) {
        log(
          `outbox ${outbox.dir}: ${loaded.entries.length} DSN(s) wait there, but there is no outbound key: none resubmitted; give --outbound-key`,
        );
        return;
      }
      for (const entry of loaded.entries) {
        if (stopped) return;
        const { envelope } = entry;
        log(
          `DSN ${envelope.messageId} resubmitted from the outbox (queued ${envelope.submittedAt}) to ${envelope.to.join(", ")}${reported(envelope)}; ${entry.file}`,
        );
        deliver(entry, identity);
      }
    },
    whenIdle() {
      if (live.size === 0 && writes.size === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    async stop() {
      stopped = true;
      const left = live.size;
      for (const { sender, network } of live) {
        sender.stop();
        network.abort();
      }
      live.clear();
      await Promise.allSettled([...writes]);
      wakeIfIdle();
      return left;
    },
    describe() {
      if (identity === undefined)
        return ["  outbound:    none (no --outbound-key): a failure after acceptance is logged, no DSN is sent (G17)"];
      return [
        `  outbound:    DSNs of failures after acceptance signed ${identity.keyid}, through ${outbox.dir}/ (G17)${
          resolve.length > 0 ? `; --resolve ${resolve.map((r) => `${r.domain}=${r.host}:${r.port}`).join(", ")}` : ""
        }`,
      ];
    },
  };
}
