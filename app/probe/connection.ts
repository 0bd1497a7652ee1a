/**
 * Reaching the receiver: its origin (given, or found by discovery at
 * `_svc.<domain>`, SVC-5), whether the probe's key is published (only to
 * explain a 401 later, G4), and the TLS cases — a TLS 1.3 handshake whose
 * certificate verifies for the host (AUTH-8), and a TLS 1.2 one refused.
 */
import type { DnsAnswer, Resolver, SvcbRecord } from "../ports.ts";
import type { EmitData } from "../trace/events.ts";
import { lookupSvcb } from "../sender/discovery.ts";
import { clip } from "./answers.ts";
import { emit, runs, type ProbeContext } from "./context.ts";
import type { TlsHandshake } from "./probe.ts";
import { record, skip, skipRest } from "./verdicts.ts";

/** The resolver of the ports, each query and answer recorded (a failed query read as SERVFAIL). */
export function tracedResolver(ctx: ProbeContext): Resolver {
  const { resolver } = ctx.ports;
  return {
    async svcb(name) {
      emit(ctx, "dns.query", { name, type: "SVCB" });
      const answer = await resolver.svcb(name).catch((): DnsAnswer<SvcbRecord> => ({ kind: "servfail" }));
      emit(ctx, "dns.answer", { name, type: "SVCB", ...answerData(answer) });
      return answer;
    },
    async txt(name) {
      emit(ctx, "dns.query", { name, type: "TXT" });
      const answer = await resolver.txt(name).catch((): DnsAnswer<string> => ({ kind: "servfail" }));
      emit(ctx, "dns.answer", { name, type: "TXT", ...answerData(answer) });
      return answer;
    },
  };
}

function answerData(answer: DnsAnswer<SvcbRecord | string>): Pick<EmitData<"dns.answer">, "kind" | "records" | "ttlS"> {
  return answer.kind === "answer"
    ? { kind: "answer", records: answer.records, ttlS: answer.ttlS }
    : { kind: answer.kind };
}

/** The origin to probe: the target's, or the first endpoint discovery finds; undefined (every case judged) when none. */
export async function originOf(ctx: ProbeContext, resolver: Resolver): Promise<string | undefined> {
  const { target } = ctx;
  if (ctx.isOrigin) {
    try {
      return new URL(target).origin;
    } catch {
      skipRest(ctx, `${target} is not a URL`);
      return undefined;
    }
  }
  const found = await lookupSvcb(resolver, target);
  if (found.kind === "endpoints") return found.endpoints[0]?.origin ?? `https://${target}`;
  const first = ctx.cases[0];
  if (first !== undefined)
    record(ctx, first.id, {
      result: "FAIL",
      actual: `no endpoint: SVCB at _svc.${target} ${found.kind === "no-record" ? "has no usable record" : "failed"} (${found.answer})`,
      why: "discovery found no receiver to probe (SVC-5); give its origin instead, or --resolve",
    });
  skipRest(ctx, `no endpoint for ${target}: SVCB ${found.answer}`);
  return undefined;
}

/** Whether the key is published (G4), in words for the explanation of a 401; asked only when a POST runs. */
export async function keyInDnsOf(ctx: ProbeContext, resolver: Resolver): Promise<string | undefined> {
  const { identity } = ctx;
  if (identity === undefined || ctx.options.lookupKey !== true || !ctx.anyPost) return undefined;
  const answer = await resolver.txt(identity.keyid);
  return answer.kind !== "answer" || answer.records.length === 0
    ? `DNS has no TXT record at ${identity.keyid} (${answer.kind === "answer" ? "no records" : answer.kind})`
    : answer.records.some((r) => r.replace(/\s+/g, "") === identity.keyRecord.replace(/\s+/g, ""))
      ? `the key is published at ${identity.keyid}`
      : `the TXT record at ${identity.keyid} publishes another key`;
}

/**
 * The TLS cases (tls13, certificate, tls12-refused); whether the probe may go on and send: a TLS 1.3
 * connection whose certificate verifies for `host`. Otherwise the cases it cannot run are skipped.
 */
export async function tlsCases(ctx: ProbeContext, origin: string, host: string): Promise<boolean> {
  const t13 = await ctx.ports.tls(origin, "TLSv1.3");
  const t13seq = emit(ctx, "probe.tls", { origin, version: "TLSv1.3", ...t13 });
  if (t13.outcome === "failed") {
    record(
      ctx,
      "tls13",
      { result: "FAIL", actual: `no connection: ${t13.message ?? t13.failure ?? "failed"}` },
      [],
      [t13seq],
    );
    skipRest(ctx, `${origin} cannot be reached: ${t13.message ?? "no connection"}`);
    return false;
  }
  if (t13.outcome === "refused" || t13.protocol !== "TLSv1.3") {
    const actual =
      t13.outcome === "refused" ? `handshake refused: ${t13.message ?? ""}` : `negotiated ${t13.protocol ?? "?"}`;
    record(ctx, "tls13", { result: "FAIL", actual }, [], [t13seq]);
    skipRest(ctx, "no TLS 1.3 connection (AUTH-8): nothing else can be asked");
    return false;
  }
  const cipher = t13.cipher !== undefined ? ` (${t13.cipher})` : "";
  record(ctx, "tls13", { result: "PASS", actual: `${t13.protocol}${cipher}` }, [], [t13seq]);
  certificateCase(ctx, t13, t13seq, host);
  if (runs(ctx, "tls12-refused")) await tls12Case(ctx, origin);
  return t13.authorized === true;
}

/** certificate: the TLS 1.3 handshake's certificate verifies for `host`; when not, nothing past TLS runs. */
function certificateCase(ctx: ProbeContext, t13: TlsHandshake, t13seq: number, host: string): void {
  const names = t13.certificateNames?.length ? ` (names: ${t13.certificateNames.join(", ")})` : "";
  if (t13.authorized === true) {
    record(ctx, "certificate", { result: "PASS", actual: `verified for ${host}${names}` }, [], [t13seq]);
    return;
  }
  record(
    ctx,
    "certificate",
    {
      result: "FAIL",
      actual: `not valid for ${host}: ${t13.authorizationError ?? "unverified"}${names}`,
      why: "the probe sends nothing to a host it cannot authenticate; give --ca with the CA (or self-signed certificate) that issued it",
    },
    [],
    [t13seq],
  );
  skip(
    ctx,
    ctx.cases.filter((c) => c.step !== "tls").map((c) => c.id),
    `the certificate does not verify for ${host}: ${t13.authorizationError ?? "unverified"} (--ca)`,
  );
}

/** tls12-refused: a handshake offering only TLS 1.2 is refused. */
async function tls12Case(ctx: ProbeContext, origin: string): Promise<void> {
  const t12 = await ctx.ports.tls(origin, "TLSv1.2");
  const seq = emit(ctx, "probe.tls", { origin, version: "TLSv1.2", ...t12 });
  record(
    ctx,
    "tls12-refused",
    t12.outcome === "refused"
      ? { result: "PASS", actual: `refused: ${clip(t12.message ?? "handshake failed", 120)}` }
      : t12.outcome === "established"
        ? {
            result: "FAIL",
            actual: `accepted: ${t12.protocol ?? "TLSv1.2"}${t12.cipher !== undefined ? ` (${t12.cipher})` : ""}`,
          }
        : { result: "SKIP", actual: `no connection: ${t12.message ?? ""}`, why: "the second connection failed" },
    [],
    [seq],
  );
}
