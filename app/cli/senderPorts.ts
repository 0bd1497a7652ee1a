/**
 * What a sending side on the real network needs, shared by `mailscope send`
 * and the outbound side of `mailscope serve` (which sends the DSNs of
 * failures after acceptance, G17): reading the signing key (a JWK from
 * `mailscope keygen`), `--resolve` and `--ca`, and building the sender's
 * real ports from them: a Resolver that answers `_svc.<domain>` from
 * `--resolve` and asks `fallback` for the rest, fetch over TLS 1.3 that
 * connects where `--resolve` says, and an SMTP relay that only records (there
 * is no SMTP client).
 *
 * `--resolve domain=host:port` stands in for DNS, as curl's `--resolve` does:
 * `_svc.<domain>` is answered locally with the ServiceMode record
 * `1 <domain>. port=<port>`, and connections to the domain go to host:port
 * while SNI, the certificate check and Host keep the domain's name. The
 * record's target is the domain itself rather than `.`: the sender reads `.`
 * as the owner name `_svc.<domain>` (G5), which no receiver certificate names.
 *
 * Bad input throws a {@link UsageError} of one line naming the option and the
 * file: the commands print it and exit 2.
 */
import { CommanderError } from "commander";
import type { DnsAnswer, Fetch, Resolver, SmtpHandOff, SmtpRelay, SvcbRecord } from "../ports.ts";
import { importSigningKeyJwk, signingDomainOfKeyid } from "../protocol/profile.ts";
import { FileTooLargeError, readBounded, type ReadKind } from "../node/boundedRead.ts";
import type { AddressResolver, DnsResolverEvent } from "../node/dnsResolver.ts";
import { createTlsFetch, parseHostPort, withContentLength } from "../node/tlsFetch.ts";

/** Bad input: one line naming the option or file, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export function usage(message: string): never {
  throw new UsageError(message);
}

/** Commander's collector of a repeatable option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Runs a command's action; a UsageError becomes one line on stderr and exit code 2, another code its exit. */
export async function guarded(name: string, action: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await action();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`mailscope ${name}: ${error.message}`);
    throw new CommanderError(2, "mailscope.usage", error.message);
  }
  if (code !== 0) throw new CommanderError(code, `mailscope.${name}.exit`, "");
}

/**
 * The bytes of a file an option names, at most the limit of its kind (a
 * message, a key, certificates: `app/node/boundedRead.ts`).
 * @throws UsageError naming the option and the file.
 */
export async function readInput(file: string, option: string, kind: ReadKind): Promise<Buffer> {
  try {
    return await readBounded(file, kind);
  } catch (error) {
    if (error instanceof FileTooLargeError) usage(`${option} ${error.message}`);
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") usage(`${option} ${file}: no such file`);
    if (code === "EISDIR") usage(`${option} ${file}: is a directory`);
    usage(`${option} ${file}: cannot be read (${(error as Error).message})`);
  }
}

/** One `--resolve domain=host:port`. */
export interface ResolveEntry {
  readonly domain: string;
  readonly host: string;
  readonly port: number;
}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Reads `domain=host:port` (IPv6 hosts in brackets). @throws UsageError naming the option. */
export function parseResolve(text: string): ResolveEntry {
  const eq = text.indexOf("=");
  const domain = (eq < 0 ? "" : text.slice(0, eq)).trim().toLowerCase().replace(/\.$/, "");
  const target = eq < 0 ? undefined : parseHostPort(text.slice(eq + 1).trim());
  if (eq < 0 || target === undefined)
    usage(`--resolve ${text}: expected domain=host:port, e.g. b.example=127.0.0.1:8443`);
  if (!HOSTNAME.test(domain)) usage(`--resolve ${text}: ${JSON.stringify(domain)} is not a domain name (A-labels)`);
  return { domain, host: target.host, port: target.port };
}

/** A JWK as the profile reads it, with the `kid` keygen adds. */
export type Jwk = Parameters<typeof importSigningKeyJwk>[0] & { kid?: unknown };

/** A domain's signing key, read from a JWK file. */
export interface SigningIdentity {
  readonly signingKey: Awaited<ReturnType<typeof importSigningKeyJwk>>;
  /** `<selector>._svckey.<domain>` (G4). */
  readonly keyid: string;
  /** The signing domain the keyid names. */
  readonly domain: string;
}

/** Which options name the key and its keyid, and who signs (for the message about a public key). */
export interface SigningKeyOptions {
  /** `--key`, `--outbound-key`. */
  readonly keyOption: string;
  /** `--keyid`, `--outbound-keyid`. */
  readonly keyidOption: string;
  /** The keyid given, instead of the JWK's `kid`. */
  readonly keyid?: string;
  /** Who needs the private half: `send signs`. */
  readonly signer: string;
}

/**
 * The Ed25519 private key of a JWK file (G1) and its keyid: the one given, or
 * the JWK's `kid`. @throws UsageError naming the option and the file: not
 * JSON, a public key only, not Ed25519, no keyid, a keyid not of G4's form.
 */
export async function readSigningKey(file: string, options: SigningKeyOptions): Promise<SigningIdentity> {
  const { keyOption, keyidOption } = options;
  const keyText = (await readInput(file, keyOption, "keys")).toString("utf8");
  let jwk: Jwk;
  try {
    jwk = JSON.parse(keyText) as Jwk;
  } catch {
    usage(`${keyOption} ${file}: not a JSON Web Key (the file is not JSON)`);
  }
  if (typeof jwk !== "object" || jwk === null) usage(`${keyOption} ${file}: not a JSON Web Key`);
  if (jwk.d === undefined)
    usage(`${keyOption} ${file}: holds a public key only; ${options.signer}, so it needs the private key (d)`);
  let signingKey: SigningIdentity["signingKey"];
  try {
    signingKey = await importSigningKeyJwk(jwk);
  } catch (error) {
    usage(`${keyOption} ${file}: not an Ed25519 private JWK (${(error as Error).message}) [G1]`);
  }
  const keyid = options.keyid ?? (typeof jwk.kid === "string" ? jwk.kid : undefined);
  if (keyid === undefined) usage(`${keyidOption}: not given, and ${file} has no kid`);
  const signing = signingDomainOfKeyid(keyid);
  if (!signing.ok) usage(`${keyidOption} ${keyid}: ${signing.violations.map((v) => v.message).join("; ")}`);
  return { signingKey, keyid, domain: signing.value };
}

/** The PEM certificates of a `--ca` file. @throws UsageError when the file holds none. */
export async function readCa(file: string, option = "--ca"): Promise<Buffer> {
  const ca = await readInput(file, option, "certificates");
  if (!ca.toString("utf8").includes("-----BEGIN CERTIFICATE-----"))
    usage(`${option} ${file}: no PEM certificate in the file`);
  return ca;
}

/** A resolver that knows nothing: every name is NXDOMAIN (`--no-dns`). */
export const offlineResolver: Resolver = {
  svcb: (): Promise<DnsAnswer<SvcbRecord>> => Promise.resolve({ kind: "nxdomain" }),
  txt: (): Promise<DnsAnswer<string>> => Promise.resolve({ kind: "nxdomain" }),
};

/** `_svc.<domain>` answered from `--resolve`, everything else from `fallback`. */
export function localResolver(entries: readonly ResolveEntry[], fallback: Resolver): Resolver {
  const byName = new Map(entries.map((e) => [`_svc.${e.domain}`, e]));
  return {
    svcb(name: string): Promise<DnsAnswer<SvcbRecord>> {
      const entry = byName.get(name.toLowerCase().replace(/\.$/, ""));
      if (entry === undefined) return fallback.svcb(name);
      return Promise.resolve({
        kind: "answer",
        records: [{ priority: 1, target: entry.domain, port: entry.port }],
        ttlS: 0,
      });
    },
    txt: (name) => fallback.txt(name),
  };
}

/** The connection targets of `--resolve` for {@link createTlsFetch}: the domain and `_svc.<domain>` each go to host:port. */
function resolveMap(entries: readonly ResolveEntry[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const e of entries) {
    const target = e.host.includes(":") ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
    map.set(e.domain, target);
    map.set(`_svc.${e.domain}`, target);
  }
  return map;
}

/** What {@link createSenderNetwork} is told. */
export interface SenderNetworkOptions {
  readonly resolve: readonly ResolveEntry[];
  /** Trusted instead of the system's roots. */
  readonly ca?: Buffer;
  /** Idle timeout of each connection. */
  readonly timeoutMs?: number;
  /** Answers what `resolve` does not: real DNS, or {@link offlineResolver} under `--no-dns`. */
  readonly fallback: Resolver;
  /**
   * Where an endpoint's address comes from (`send --nameserver`): its A and
   * AAAA records through the same nameserver as SVCB and TXT, then the
   * SVCB record's `ipv4hint` / `ipv6hint` when DNS has none. Without it the
   * system's resolver is asked.
   */
  readonly addresses?: AddressResolver;
}

/** The `ipv4hint` / `ipv6hint` of the ServiceMode records a resolver answered, by target name. */
type Hints = Map<string, { address: string; family: 4 | 6 }[]>;

function canonicalHost(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/** `resolver`, noting the address hints of each ServiceMode record it answers (a target `.` is the name asked). */
function notingHints(resolver: Resolver, hints: Hints): Resolver {
  return {
    async svcb(name) {
      const answer = await resolver.svcb(name);
      if (answer.kind === "answer") {
        for (const r of answer.records) {
          if (r.priority === 0) continue;
          const found = [
            ...(r.ipv4hint ?? []).map((address) => ({ address, family: 4 as const })),
            ...(r.ipv6hint ?? []).map((address) => ({ address, family: 6 as const })),
          ];
          if (found.length > 0) hints.set(canonicalHost(r.target === "." || r.target === "" ? name : r.target), found);
        }
      }
      return answer;
    },
    txt: (name) => resolver.txt(name),
  };
}

/** A host's addresses: A and AAAA through `addresses`, else the SVCB hints noted for it. */
export function addressLookup(
  addresses: AddressResolver,
  hints: ReadonlyMap<string, readonly { address: string; family: 4 | 6 }[]>,
): (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]> {
  return async (hostname) => {
    const [v4, v6] = await Promise.all([addresses.addresses(hostname, 4), addresses.addresses(hostname, 6)]);
    const found = [
      ...(v4.kind === "answer" ? v4.records.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.kind === "answer" ? v6.records.map((address) => ({ address, family: 6 as const })) : []),
    ];
    return found.length > 0 ? found : [...(hints.get(canonicalHost(hostname)) ?? [])];
  };
}

/** The sender's Resolver and Fetch ports for the real network. */
export interface SenderNetwork {
  readonly resolver: Resolver;
  readonly fetch: Fetch;
  /** Cuts every request in flight (a stopped sender waits for no answer) and refuses new ones. */
  abort(): void;
}

export function createSenderNetwork(options: SenderNetworkOptions): SenderNetwork {
  const hints: Hints = new Map();
  const tlsFetch = createTlsFetch({
    ...(options.ca !== undefined && { ca: options.ca }),
    resolve: resolveMap(options.resolve),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.addresses !== undefined && { lookup: addressLookup(options.addresses, hints) }),
  });
  const stop = new AbortController();
  const resolver = localResolver(options.resolve, options.fallback);
  return {
    resolver: options.addresses === undefined ? resolver : notingHints(resolver, hints),
    // The sender's bodies are in memory: each POST goes out with its Content-Length, not chunked.
    fetch: async (request) =>
      tlsFetch(
        await withContentLength(new Request(request, { signal: AbortSignal.any([request.signal, stop.signal]) })),
      ),
    abort: () => stop.abort(new Error("the sender stopped")),
  };
}

/**
 * An SMTP relay for a command without an SMTP client: each hand-off is
 * passed to `record` and refused, so the recipient's outcome is `smtp` and no
 * DSN follows (G18).
 */
export function recordingSmtpRelay(command: string, record: (handOff: SmtpHandOff) => void = () => {}): SmtpRelay {
  return {
    handOff(handOff) {
      record(handOff);
      return Promise.resolve({ accepted: false, detail: `recorded only: mailscope ${command} has no SMTP client` });
    },
  };
}

/** One progress line for something the DNS resolver noticed. */
export function describeDnsEvent(event: DnsResolverEvent): string {
  switch (event.kind) {
    case "retry":
      return `DNS ${event.type} ${event.name}: try ${event.attempt} failed (${event.detail}), asking again`;
    case "truncated":
      return `DNS ${event.type} ${event.name}: truncated over UDP, asking over TCP`;
    case "malformed-svcb":
      return `DNS SVCB ${event.name}: malformed record, ignored: ${event.detail}`;
    case "bad-name":
      return `DNS ${event.name}: cannot be asked (${event.detail})`;
    case "localhost":
      return `DNS ${event.type} ${event.name}: a localhost name, answered here, not asked (RFC 6761 §6.3)`;
  }
}
