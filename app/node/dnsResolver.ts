/**
 * The Resolver port over real DNS (ARCHITECTURE.md "Ports"): SVCB (type 64)
 * and TXT questions sent to one recursive nameserver, by default the first
 * `nameserver` of /etc/resolv.conf; and, for `send --nameserver`, the A and
 * AAAA questions for an endpoint's address ({@link AddressResolver}), so a
 * private zone can be tried end to end through the one server.
 *
 * - UDP first (RFC 1035 §4.2.1), with EDNS(0) offering a 1232-byte payload;
 *   an answer with the TC bit is asked again over TCP (RFC 7766 §5).
 * - Each try waits `timeoutMs`; `attempts` tries in all, then `timeout`.
 *   A try also ends when the nameserver refuses the packet (ICMP); only an
 *   answer counts, so a server that never answers is a `timeout`.
 * - Answers are matched on ID, QR bit and question; anything else on the
 *   socket is dropped (RFC 5452 §9.1).
 * - RCODE: NXDOMAIN → `nxdomain`; NOERROR without records of the type →
 *   `nodata`; SERVFAIL, REFUSED and every other code → `servfail`.
 * - CNAMEs are followed for the type asked, inside one answer and, when the
 *   recursive server stopped at a CNAME, by asking for its target (at most
 *   `maxCnameHops`); a loop is `servfail`. The TTL is the smallest of the
 *   chain and the records.
 * - SVCB RDATA is decoded by the core (`protocol/svcb.ts`). A malformed record
 *   makes the whole RRset unusable (RFC 9460 §2.2: "reject the entire RRSet and
 *   fall back to non-SVCB connection establishment"), answered as `nodata` and
 *   reported through `onEvent`. A ServiceMode target `.` reached through a CNAME
 *   is replaced by the record's real owner name (RFC 9460 §2.5.2), because the
 *   caller only knows the name it asked for.
 * - `localhost` and the names under it are answered here and never asked
 *   (RFC 6761 §6.3): A is 127.0.0.1, AAAA ::1, SVCB and TXT a negative
 *   answer (`nodata`), reported through `onEvent`. An SVCB target `localhost.`
 *   thus reaches this machine, whatever the configured nameserver says.
 */
import { randomInt } from "node:crypto";
import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { connect, isIP } from "node:net";
import { RECURSION_DESIRED, decode, encode } from "dns-packet";
import type { Answer, DecodedPacket, OptAnswer, Packet, RecordType } from "dns-packet";
import type { DnsAnswer, Resolver, SvcbRecord } from "../ports.ts";
import { SVCB_RR_TYPE, decodeSvcbRdata } from "../protocol/svcb.ts";

/** dns-packet's name for a type it does not know: its RDATA comes back as raw bytes. */
const SVCB_TYPE_NAME = `UNKNOWN_${SVCB_RR_TYPE}` as RecordType;
const RCODE_NOERROR = 0;
const RCODE_NXDOMAIN = 3;
/** RFC 9715 / DNS Flag Day 2020: a UDP payload size that avoids fragmentation. */
const EDNS_UDP_PAYLOAD = 1232;

/** Defaults of {@link DnsResolverOptions}. */
export const DNS_DEFAULTS = { timeoutMs: 2_000, attempts: 3, maxCnameHops: 8, port: 53 } as const;

/** Where queries go. */
export interface Nameserver {
  readonly host: string;
  readonly port: number;
}

/** Something the resolver noticed that its answer alone does not say. */
export type DnsResolverEvent =
  | {
      readonly kind: "retry";
      readonly name: string;
      readonly type: QueryType;
      readonly attempt: number;
      readonly detail: string;
    }
  | { readonly kind: "truncated"; readonly name: string; readonly type: QueryType }
  | { readonly kind: "malformed-svcb"; readonly name: string; readonly detail: string }
  | { readonly kind: "bad-name"; readonly name: string; readonly detail: string }
  | { readonly kind: "localhost"; readonly name: string; readonly type: QueryType };

/** What {@link createDnsResolver} may be told. */
export interface DnsResolverOptions {
  /** `host`, `host:port`, `[v6]:port`, or a {@link Nameserver}; default: the first nameserver of `resolvConfPath`. */
  readonly nameserver?: string | Nameserver;
  /** Default /etc/resolv.conf. */
  readonly resolvConfPath?: string;
  /** How long one try waits for its answer. Default 2000 ms. */
  readonly timeoutMs?: number;
  /** Tries in all before the answer is `timeout`. Default 3. */
  readonly attempts?: number;
  /** CNAMEs followed at most. Default 8. */
  readonly maxCnameHops?: number;
  readonly onEvent?: (event: DnsResolverEvent) => void;
}

/**
 * A nameserver written as `1.2.3.4`, `1.2.3.4:5353`, `::1`, `[::1]:5353` or
 * `fe80::1%eth0`; undefined when it is not an IP address (a name would need
 * DNS to be found).
 */
export function parseNameserver(text: string): Nameserver | undefined {
  const trimmed = text.trim();
  const bracketed = /^\[([^\]]+)\](?::([0-9]{1,5}))?$/.exec(trimmed);
  const withPort = /^([^:]+):([0-9]{1,5})$/.exec(trimmed);
  const [host, portText] = bracketed
    ? [bracketed[1], bracketed[2]]
    : withPort
      ? [withPort[1], withPort[2]]
      : [trimmed, undefined];
  if (host === undefined || isIP(host.replace(/%.*$/, "")) === 0) return undefined;
  const port = portText === undefined ? DNS_DEFAULTS.port : Number(portText);
  if (port < 1 || port > 65535) return undefined;
  return { host, port };
}

/** The first usable `nameserver` line of a resolv.conf text (resolv.conf(5)). */
export function nameserverFromResolvConf(text: string): Nameserver | undefined {
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*nameserver\s+(\S+)/.exec(line.replace(/[#;].*$/, ""));
    const server = match?.[1] === undefined ? undefined : parseNameserver(match[1]);
    if (server !== undefined) return server;
  }
  return undefined;
}

/**
 * The system's nameserver: the first of `path`, else 127.0.0.1:53, which is
 * what the C library assumes when resolv.conf names none.
 */
export function systemNameserver(path = "/etc/resolv.conf"): Nameserver {
  try {
    return nameserverFromResolvConf(readFileSync(path, "utf8")) ?? { host: "127.0.0.1", port: DNS_DEFAULTS.port };
  } catch {
    return { host: "127.0.0.1", port: DNS_DEFAULTS.port };
  }
}

/** A name without its trailing dot, lowercased, for comparing owner names. */
function canonical(name: string): string {
  return name.replace(/\.$/, "").toLowerCase();
}

/** Why a name cannot be asked, or undefined when it can (RFC 1035 §2.3.4; dns-packet does no escaping). */
function badName(name: string): string | undefined {
  const bare = name.replace(/\.$/, "");
  if (bare === "") return "the root has no such records";
  if (bare.length > 253) return "longer than 253 characters";
  for (const label of bare.split(".")) {
    if (label === "") return "has an empty label";
    if (label.length > 63) return `label ${label.slice(0, 20)}… is longer than 63 octets`;
    if (!/^[\x21-\x7e]+$/.test(label)) return "has a character outside printable ASCII (IDNs go as A-labels)";
  }
  return undefined;
}

/** The questions this resolver asks. */
export type QueryType = "SVCB" | "TXT" | "A" | "AAAA";

/** Whether `name` is `localhost` or a name under it, whatever its case and trailing dot (RFC 6761 §6.3). */
export function isLocalhostName(name: string): boolean {
  const bare = name.toLowerCase().replace(/\.$/, "");
  return bare === "localhost" || bare.endsWith(".localhost");
}

/** The loopback address of each family: what a resolver answers for a localhost name itself (RFC 6761 §6.3). */
const LOOPBACK: Readonly<Record<4 | 6, string>> = { 4: "127.0.0.1", 6: "::1" };
/** The TTL of those answers: they never change. */
const LOCALHOST_TTL_S = 86_400;

/** The wire type of a question: SVCB is type 64, which dns-packet does not name. */
function wireTypeOf(type: QueryType): RecordType {
  return type === "SVCB" ? SVCB_TYPE_NAME : type;
}

/** Addresses of a host name through the resolver's own nameserver: A (`4`) or AAAA (`6`) records. */
export interface AddressResolver {
  addresses(name: string, family: 4 | 6): Promise<DnsAnswer<string>>;
}

/** The outcome of one question to the nameserver: its decoded answer, or none. */
type Exchanged =
  { readonly kind: "packet"; readonly packet: DecodedPacket } | { readonly kind: "none"; readonly detail: string };

function buildQuery(id: number, name: string, type: RecordType): Packet {
  return {
    type: "query",
    id,
    flags: RECURSION_DESIRED,
    questions: [{ type, name, class: "IN" }],
    additionals: [
      {
        type: "OPT",
        name: ".",
        udpPayloadSize: EDNS_UDP_PAYLOAD,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0,
        flag_do: false,
        options: [],
      },
    ],
  };
}

/** Whether `packet` is the answer to our question (RFC 5452 §9.1). */
function answers(packet: DecodedPacket, id: number, name: string, type: RecordType): boolean {
  const question = packet.questions?.[0];
  return (
    packet.type === "response" &&
    packet.id === id &&
    question !== undefined &&
    canonical(question.name) === canonical(name) &&
    question.type === type
  );
}

function tryDecode(bytes: Buffer): DecodedPacket | undefined {
  try {
    return decode(bytes);
  } catch {
    return undefined;
  }
}

function overUdp(
  server: Nameserver,
  query: Buffer,
  matches: (p: DecodedPacket) => boolean,
  timeoutMs: number,
): Promise<Exchanged> {
  return exchangeOnce("UDP", timeoutMs, (finish) => {
    const socket = createSocket(isIP(server.host.replace(/%.*$/, "")) === 6 ? "udp6" : "udp4");
    socket.on("error", (error) => finish({ kind: "none", detail: `UDP: ${error.message}` }));
    socket.on("message", (bytes, remote) => {
      // Only the nameserver's own answers to this question count; the rest is dropped.
      if (remote.port !== server.port) return;
      const packet = tryDecode(bytes);
      if (packet !== undefined && matches(packet)) finish({ kind: "packet", packet });
    });
    socket.connect(server.port, server.host, () => {
      socket.send(query, (error) => {
        if (error) finish({ kind: "none", detail: `UDP: ${error.message}` });
      });
    });
    return () => socket.close();
  });
}

/**
 * One exchange over a socket `open` makes: settled once, by the first call of
 * `finish` or after `timeoutMs` with no answer, and the socket released
 * (the function `open` returns) either way.
 */
function exchangeOnce(
  transport: "UDP" | "TCP",
  timeoutMs: number,
  open: (finish: (result: Exchanged) => void) => () => void,
): Promise<Exchanged> {
  return new Promise((resolve) => {
    const opened: { release?: () => void } = {};
    let done = false;
    const finish = (result: Exchanged): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      opened.release?.();
      resolve(result);
    };
    const timer = setTimeout(
      () => finish({ kind: "none", detail: `no answer over ${transport} within ${timeoutMs} ms` }),
      timeoutMs,
    );
    opened.release = open(finish);
    // Finished while opening: release now what could not be released then.
    if (done) opened.release();
  });
}

function overTcp(
  server: Nameserver,
  query: Buffer,
  matches: (p: DecodedPacket) => boolean,
  timeoutMs: number,
): Promise<Exchanged> {
  return exchangeOnce("TCP", timeoutMs, (finish) => {
    const socket = connect({ host: server.host, port: server.port });
    let received = Buffer.alloc(0);
    socket.on("error", (error) => finish({ kind: "none", detail: `TCP: ${error.message}` }));
    socket.on("close", () =>
      finish({ kind: "none", detail: "TCP: the nameserver closed the connection before answering" }),
    );
    socket.on("connect", () => {
      // RFC 1035 §4.2.2: over TCP a message is prefixed with its length.
      const length = Buffer.alloc(2);
      length.writeUInt16BE(query.length);
      socket.write(Buffer.concat([length, query]));
    });
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 2) return;
      const length = received.readUInt16BE(0);
      if (received.length < 2 + length) return;
      const packet = tryDecode(received.subarray(2, 2 + length));
      if (packet === undefined) finish({ kind: "none", detail: "TCP: the answer could not be decoded" });
      else if (!matches(packet)) finish({ kind: "none", detail: "TCP: the answer is not for this question" });
      else finish({ kind: "packet", packet });
    });
    return () => socket.destroy();
  });
}

/** A resource record of the answer section (an OPT pseudo-record only ever sits in the additional section). */
type Rr = Exclude<Answer, OptAnswer>;

type Lookup =
  | {
      readonly kind: "records";
      readonly records: readonly Rr[];
      readonly ttlS: number;
      readonly owner: string;
      readonly viaCname: boolean;
    }
  | { readonly kind: "nxdomain" }
  | { readonly kind: "nodata" }
  | { readonly kind: "servfail" }
  | { readonly kind: "timeout" };

/**
 * A Resolver that asks a real nameserver (see the module comment). Creating it
 * reads resolv.conf once; nothing is sent until a question is asked. Never
 * throws from `svcb` or `txt`: every failure is one of the DnsAnswer kinds.
 */
export function createDnsResolver(options: DnsResolverOptions = {}): Resolver & AddressResolver {
  const server =
    typeof options.nameserver === "object"
      ? options.nameserver
      : options.nameserver !== undefined
        ? (parseNameserver(options.nameserver) ??
          (() => {
            throw new RangeError(
              `nameserver ${JSON.stringify(options.nameserver)} is not an IP address with an optional port`,
            );
          })())
        : systemNameserver(options.resolvConfPath);
  const timeoutMs = options.timeoutMs ?? DNS_DEFAULTS.timeoutMs;
  const attempts = Math.max(1, options.attempts ?? DNS_DEFAULTS.attempts);
  const maxHops = options.maxCnameHops ?? DNS_DEFAULTS.maxCnameHops;
  const emit = options.onEvent ?? (() => {});

  /** One question, over UDP and, when truncated, TCP; retried up to `attempts` times. */
  async function ask(name: string, type: QueryType): Promise<DecodedPacket | undefined> {
    const wireType = wireTypeOf(type);
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const id = randomInt(0, 65536);
      const query = encode(buildQuery(id, name, wireType));
      const matches = (p: DecodedPacket): boolean => answers(p, id, name, wireType);
      let result = await overUdp(server, query, matches, timeoutMs);
      if (result.kind === "packet" && result.packet.flag_tc) {
        emit({ kind: "truncated", name, type });
        result = await overTcp(server, query, matches, timeoutMs);
      }
      if (result.kind === "packet") return result.packet;
      if (attempt < attempts) emit({ kind: "retry", name, type, attempt, detail: result.detail });
    }
    return undefined;
  }

  async function lookup(name: string, type: QueryType): Promise<Lookup> {
    const wireType = wireTypeOf(type);
    const problem = badName(name);
    if (problem !== undefined) {
      emit({ kind: "bad-name", name, detail: problem });
      return { kind: "nxdomain" };
    }
    let asked = name;
    let owner = canonical(name);
    let ttlS = Number.POSITIVE_INFINITY;
    const seen = new Set([owner]);
    for (;;) {
      const packet = await ask(asked, type);
      if (packet === undefined) return { kind: "timeout" };
      const rcode = (packet.flags ?? 0) & 0xf;
      if (rcode !== RCODE_NOERROR && rcode !== RCODE_NXDOMAIN) return { kind: "servfail" };
      const list = (packet.answers ?? []).filter((a): a is Rr => a.type !== "OPT");
      // Follow the CNAME chain as far as this answer carries it.
      for (;;) {
        const records = list.filter((a) => a.type === wireType && canonical(a.name) === owner);
        if (records.length > 0) {
          for (const r of records) ttlS = Math.min(ttlS, r.ttl ?? 0);
          return { kind: "records", records, ttlS, owner, viaCname: owner !== canonical(name) };
        }
        const cname = list.find((a) => a.type === "CNAME" && canonical(a.name) === owner);
        if (cname === undefined || typeof cname.data !== "string") break;
        owner = canonical(cname.data);
        ttlS = Math.min(ttlS, cname.ttl ?? 0);
        // A loop, or a chain longer than we follow, gives no usable answer.
        if (seen.has(owner) || seen.size > maxHops) return { kind: "servfail" };
        seen.add(owner);
      }
      if (rcode === RCODE_NXDOMAIN) return { kind: "nxdomain" };
      if (owner === canonical(asked)) return { kind: "nodata" };
      // The server stopped at a CNAME whose target it did not resolve: ask for the target.
      asked = owner;
    }
  }

  /** RFC 6761 §6.3: a localhost name is never sent to the nameserver; `true` when `name` is one (and it was told). */
  function localhost(name: string, type: QueryType): boolean {
    if (!isLocalhostName(name)) return false;
    emit({ kind: "localhost", name, type });
    return true;
  }

  return {
    async svcb(name: string): Promise<DnsAnswer<SvcbRecord>> {
      if (localhost(name, "SVCB")) return { kind: "nodata" };
      const found = await lookup(name, "SVCB");
      if (found.kind !== "records") return found;
      const records: SvcbRecord[] = [];
      for (const answer of found.records) {
        const rdata = answer.data;
        const decoded = Buffer.isBuffer(rdata) ? decodeSvcbRdata(new Uint8Array(rdata)) : undefined;
        if (decoded === undefined || !decoded.ok) {
          const detail = decoded === undefined ? "no RDATA" : decoded.violations.map((v) => v.message).join("; ");
          emit({
            kind: "malformed-svcb",
            name: found.owner,
            detail: `${detail}; the whole RRset is ignored (RFC 9460 §2.2)`,
          });
          return { kind: "nodata" };
        }
        const record = decoded.value;
        // RFC 9460 §2.5.2: "." in ServiceMode is the owner name, which after a CNAME is not the name asked.
        records.push(
          found.viaCname && record.priority > 0 && record.target === "." ? { ...record, target: found.owner } : record,
        );
      }
      return { kind: "answer", records, ttlS: found.ttlS };
    },

    async txt(name: string): Promise<DnsAnswer<string>> {
      if (localhost(name, "TXT")) return { kind: "nodata" };
      const found = await lookup(name, "TXT");
      if (found.kind !== "records") return found;
      const records = found.records.map((answer) => {
        const data = answer.data as string | Buffer | Array<string | Buffer>;
        const strings = Array.isArray(data) ? data : [data];
        // A record's character-strings are joined, as DKIM reads them (RFC 6376 §3.6.2.2).
        return Buffer.concat(strings.map((s) => (typeof s === "string" ? Buffer.from(s, "utf8") : s))).toString("utf8");
      });
      return { kind: "answer", records, ttlS: found.ttlS };
    },

    async addresses(name: string, family: 4 | 6): Promise<DnsAnswer<string>> {
      if (localhost(name, family === 4 ? "A" : "AAAA")) {
        return { kind: "answer", records: [LOOPBACK[family]], ttlS: LOCALHOST_TTL_S };
      }
      const found = await lookup(name, family === 4 ? "A" : "AAAA");
      if (found.kind !== "records") return found;
      const records = found.records.map((answer) => answer.data).filter((d): d is string => typeof d === "string");
      return records.length > 0 ? { kind: "answer", records, ttlS: found.ttlS } : { kind: "nodata" };
    },
  };
}
