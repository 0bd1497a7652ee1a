import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decode, encode } from "dns-packet";
import type { Answer, DecodedPacket, Packet, Question, RecordType } from "dns-packet";
import { afterEach, describe, expect, it } from "vitest";
import { unwrap } from "../protocol/result.ts";
import { encodeSvcbRdata, parseSvcbPresentation } from "../protocol/svcb.ts";
import {
  createDnsResolver,
  nameserverFromResolvConf,
  parseNameserver,
  systemNameserver,
  type DnsResolverEvent,
  type DnsResolverOptions,
} from "./dnsResolver.ts";
import { addressLookup } from "../cli/senderPorts.ts";

const SVCB = "UNKNOWN_64" as RecordType;

/** What the test server answers: a packet (flags carry the RCODE), or nothing at all. */
type Handler = (question: Question, transport: "udp" | "tcp") => Partial<Packet> | undefined;

interface TestDns {
  readonly port: number;
  readonly queries: Array<{ readonly name: string; readonly type: string; readonly transport: "udp" | "tcp" }>;
  close(): Promise<void>;
}

const servers: TestDns[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function respond(query: DecodedPacket, spec: Partial<Packet>): Buffer {
  return encode({
    type: "response",
    id: query.id,
    questions: query.questions,
    answers: [],
    ...spec,
    flags: spec.flags ?? 0,
  });
}

/** A tiny DNS server on 127.0.0.1, UDP and TCP on the same port, built with dns-packet. */
async function startDns(handler: Handler, options: { readonly forgeFirst?: Partial<Packet> } = {}): Promise<TestDns> {
  const queries: TestDns["queries"] = [];
  const answer = (bytes: Buffer, transport: "udp" | "tcp"): Buffer | undefined => {
    const query = decode(bytes);
    const question = query.questions?.[0];
    if (question === undefined) return undefined;
    queries.push({ name: question.name, type: question.type, transport });
    const spec = handler(question, transport);
    return spec === undefined ? undefined : respond(query, spec);
  };
  for (let tries = 0; ; tries++) {
    const udp: UdpSocket = createSocket("udp4");
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
    const port = udp.address().port;
    const tcp: Server = createServer((socket: Socket) => {
      let received = Buffer.alloc(0);
      socket.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
        const reply = answer(received.subarray(2, 2 + received.readUInt16BE(0)), "tcp");
        if (reply === undefined) return;
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        socket.end(Buffer.concat([length, reply]));
      });
      socket.on("error", () => {});
    });
    const listening = await new Promise<boolean>((resolve) => {
      tcp.once("error", () => resolve(false));
      tcp.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (!listening) {
      udp.close();
      if (tries < 5) continue;
      throw new Error("could not bind UDP and TCP on one port");
    }
    udp.on("message", (bytes, remote) => {
      if (options.forgeFirst !== undefined) {
        // An answer with another ID, as an off-path attacker would guess it.
        const query = decode(bytes);
        udp.send(
          respond({ ...query, id: ((query.id ?? 0) + 1) % 65536 }, options.forgeFirst),
          remote.port,
          remote.address,
        );
      }
      const reply = answer(bytes, "udp");
      if (reply !== undefined) udp.send(reply, remote.port, remote.address);
    });
    const server: TestDns = {
      port,
      queries,
      close: () =>
        new Promise<void>((resolve) => {
          udp.close();
          tcp.close(() => resolve());
        }),
    };
    servers.push(server);
    return server;
  }
}

function svcbRr(name: string, presentation: string, ttl = 300): Answer {
  return {
    type: SVCB,
    name,
    ttl,
    data: Buffer.from(encodeSvcbRdata(unwrap(parseSvcbPresentation(presentation)))),
  } as unknown as Answer;
}

function resolverFor(server: TestDns, options: Partial<DnsResolverOptions> = {}) {
  return createDnsResolver({ nameserver: `127.0.0.1:${server.port}`, timeoutMs: 1_000, attempts: 2, ...options });
}

const NXDOMAIN = 3;
const SERVFAIL = 2;
const REFUSED = 5;

describe("SVCB over real DNS (SVC-5, G5, RFC 9460 §2.2)", () => {
  it("decodes a type-64 answer into records, with the smallest TTL", async () => {
    const dns = await startDns((q) => ({
      answers: [svcbRr(q.name, "1 . alpn=h2 port=8443", 300), svcbRr(q.name, "2 backup.b.example. port=443", 120)],
    }));
    const answer = await resolverFor(dns).svcb("_svc.b.example");
    expect(answer).toEqual({
      kind: "answer",
      records: [
        { priority: 1, target: ".", alpn: ["h2"], port: 8443 },
        { priority: 2, target: "backup.b.example", port: 443 },
      ],
      ttlS: 120,
    });
    expect(dns.queries).toEqual([{ name: "_svc.b.example", type: "UNKNOWN_64", transport: "udp" }]);
  });

  it("follows a CNAME for the asked type and makes target '.' the record's real owner (RFC 9460 §2.5.2)", async () => {
    const dns = await startDns((q) => ({
      answers: [
        { type: "CNAME", name: q.name, ttl: 60, data: "svc.host.example" },
        svcbRr("svc.host.example", "1 . port=8443", 300),
      ],
    }));
    expect(await resolverFor(dns).svcb("_svc.b.example")).toEqual({
      kind: "answer",
      records: [{ priority: 1, target: "svc.host.example", port: 8443 }],
      ttlS: 60,
    });
  });

  it("asks again for a CNAME target the recursive server did not resolve", async () => {
    const dns = await startDns((q) =>
      q.name === "_svc.b.example"
        ? { answers: [{ type: "CNAME", name: q.name, ttl: 60, data: "svc.host.example" }] }
        : { answers: [svcbRr(q.name, "0 pool.host.example.", 30)] },
    );
    expect(await resolverFor(dns).svcb("_svc.b.example")).toEqual({
      kind: "answer",
      records: [{ priority: 0, target: "pool.host.example" }],
      ttlS: 30,
    });
    expect(dns.queries.map((q) => q.name)).toEqual(["_svc.b.example", "svc.host.example"]);
  });

  it("answers a CNAME loop as servfail", async () => {
    const dns = await startDns((q) => ({
      answers: [
        { type: "CNAME", name: "_svc.b.example", ttl: 60, data: "x.b.example" },
        { type: "CNAME", name: "x.b.example", ttl: 60, data: q.name },
      ],
    }));
    expect(await resolverFor(dns).svcb("_svc.b.example")).toEqual({ kind: "servfail" });
  });

  it("treats a malformed record as no usable RRset: nodata, and says why (RFC 9460 §2.2)", async () => {
    const events: DnsResolverEvent[] = [];
    const dns = await startDns((q) => ({
      answers: [
        svcbRr(q.name, "1 . port=8443"),
        // port with 3 bytes: malformed.
        { type: SVCB, name: q.name, ttl: 300, data: Buffer.from("000100000300030020fb", "hex") } as unknown as Answer,
      ],
    }));
    expect(await resolverFor(dns, { onEvent: (e) => events.push(e) }).svcb("_svc.b.example")).toEqual({
      kind: "nodata",
    });
    expect(events).toEqual([
      expect.objectContaining({ kind: "malformed-svcb", detail: expect.stringMatching(/port must be 2 bytes/) }),
    ]);
  });
});

describe("TXT over real DNS (G4)", () => {
  it("joins the character-strings of each record (RFC 6376 §3.6.2.2)", async () => {
    const dns = await startDns((q) => ({
      answers: [
        {
          type: "TXT",
          name: q.name,
          ttl: 3600,
          data: ["v=svc1; k=ed25519; ", "p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="],
        },
        { type: "TXT", name: q.name, ttl: 600, data: "second record" },
      ],
    }));
    expect(await resolverFor(dns).txt("s1._svckey.a.example")).toEqual({
      kind: "answer",
      records: ["v=svc1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", "second record"],
      ttlS: 600,
    });
  });
});

describe("DNS failures map to the answer kinds the sender reads (G6, G8)", () => {
  it("A and AAAA through the same nameserver, for send --nameserver: the addresses, or nodata", async () => {
    const dns = await startDns((q) =>
      q.name === "mx.b.example" && q.type === "A"
        ? { answers: [{ type: "A", name: q.name, ttl: 60, data: "192.0.2.7" }] }
        : q.name === "mx.b.example" && q.type === "AAAA"
          ? { answers: [{ type: "AAAA", name: q.name, ttl: 30, data: "2001:db8::7" }] }
          : {},
    );
    const resolver = resolverFor(dns);
    expect(await resolver.addresses("mx.b.example", 4)).toEqual({ kind: "answer", records: ["192.0.2.7"], ttlS: 60 });
    expect(await resolver.addresses("mx.b.example", 6)).toEqual({ kind: "answer", records: ["2001:db8::7"], ttlS: 30 });
    expect(await resolver.addresses("other.b.example", 4)).toEqual({ kind: "nodata" });
    expect(dns.queries.map((q) => `${q.name} ${q.type}`)).toEqual([
      "mx.b.example A",
      "mx.b.example AAAA",
      "other.b.example A",
    ]);
  });

  it("NXDOMAIN is nxdomain (G6)", async () => {
    const dns = await startDns(() => ({ flags: NXDOMAIN }));
    expect(await resolverFor(dns).svcb("_svc.none.example")).toEqual({ kind: "nxdomain" });
  });

  it("NOERROR without records of the type is nodata (G6)", async () => {
    const dns = await startDns((q) => ({ answers: [{ type: "TXT", name: q.name, ttl: 60, data: "not svcb" }] }));
    expect(await resolverFor(dns).svcb("_svc.b.example")).toEqual({ kind: "nodata" });
  });

  it("SERVFAIL is servfail (G8)", async () => {
    const dns = await startDns(() => ({ flags: SERVFAIL }));
    expect(await resolverFor(dns).svcb("_svc.b.example")).toEqual({ kind: "servfail" });
  });

  it("REFUSED is servfail (G8)", async () => {
    const dns = await startDns(() => ({ flags: REFUSED }));
    expect(await resolverFor(dns).txt("s1._svckey.a.example")).toEqual({ kind: "servfail" });
  });

  it("a server that never answers is a timeout, after every attempt (G8)", async () => {
    const events: DnsResolverEvent[] = [];
    const dns = await startDns(() => undefined);
    const resolver = resolverFor(dns, { timeoutMs: 15, attempts: 2, onEvent: (e) => events.push(e) });
    expect(await resolver.svcb("_svc.b.example")).toEqual({ kind: "timeout" });
    expect(dns.queries).toHaveLength(2);
    expect(events).toEqual([expect.objectContaining({ kind: "retry", attempt: 1 })]);
  });

  it("drops an answer with the wrong ID and takes the right one (RFC 5452 §9.1)", async () => {
    const dns = await startDns((q) => ({ answers: [svcbRr(q.name, "1 . port=1")] }), {
      forgeFirst: { answers: [svcbRr("_svc.b.example", "1 evil.example. port=666")] },
    });
    expect(await resolverFor(dns).svcb("_svc.b.example")).toEqual({
      kind: "answer",
      records: [{ priority: 1, target: ".", port: 1 }],
      ttlS: 300,
    });
  });

  it("a name that cannot be asked is nxdomain, without a query", async () => {
    const events: DnsResolverEvent[] = [];
    const dns = await startDns(() => ({ flags: SERVFAIL }));
    const resolver = resolverFor(dns, { onEvent: (e) => events.push(e) });
    expect(await resolver.svcb(`_svc.${"a".repeat(64)}.example`)).toEqual({ kind: "nxdomain" });
    expect(await resolver.svcb("_svc..example")).toEqual({ kind: "nxdomain" });
    expect(dns.queries).toHaveLength(0);
    expect(events.map((e) => e.kind)).toEqual(["bad-name", "bad-name"]);
  });
});

describe("localhost names (RFC 6761 §6.3)", () => {
  it("are answered by the resolver itself, never asked: A 127.0.0.1, AAAA ::1, SVCB and TXT negative", async () => {
    const events: DnsResolverEvent[] = [];
    // A nameserver that would send localhost elsewhere.
    const dns = await startDns((q) =>
      q.type === "A" ? { answers: [{ type: "A", name: q.name, ttl: 60, data: "192.0.2.66" }] } : { flags: SERVFAIL },
    );
    const resolver = resolverFor(dns, { onEvent: (e) => events.push(e) });
    for (const name of ["localhost", "localhost.", "LocalHost.", "mx.localhost.", "_svc.b.localhost"]) {
      expect(await resolver.addresses(name, 4), name).toEqual({ kind: "answer", records: ["127.0.0.1"], ttlS: 86_400 });
      expect(await resolver.addresses(name, 6), name).toEqual({ kind: "answer", records: ["::1"], ttlS: 86_400 });
      expect(await resolver.svcb(name), name).toEqual({ kind: "nodata" });
      expect(await resolver.txt(name), name).toEqual({ kind: "nodata" });
    }
    expect(dns.queries).toEqual([]);
    expect(events).toHaveLength(20);
    expect(events[0]).toEqual({ kind: "localhost", name: "localhost", type: "A" });
    // Names that only look like it are asked.
    expect(await resolver.addresses("localhost.example", 4)).toEqual({
      kind: "answer",
      records: ["192.0.2.66"],
      ttlS: 60,
    });
    expect(await resolver.addresses("notlocalhost", 4)).toMatchObject({ kind: "answer" });
    expect(dns.queries.map((q) => q.name)).toEqual(["localhost.example", "notlocalhost"]);
  });

  it("an SVCB target of localhost. is reached on this machine, not at the address the nameserver gives", async () => {
    const dns = await startDns((q) =>
      q.type === "A" ? { answers: [{ type: "A", name: q.name, ttl: 60, data: "192.0.2.66" }] } : { flags: NXDOMAIN },
    );
    const lookup = addressLookup(resolverFor(dns), new Map());
    expect(await lookup("localhost.")).toEqual([
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ]);
    expect(dns.queries).toEqual([]);
  });
});

describe("truncation (RFC 1035 §4.2.1, RFC 7766 §5)", () => {
  it("asks again over TCP when the UDP answer has the TC bit, and takes the full answer", async () => {
    const events: DnsResolverEvent[] = [];
    const TC = 1 << 9;
    const dns = await startDns((q, transport) =>
      transport === "udp"
        ? { flags: TC }
        : { answers: [svcbRr(q.name, "1 . alpn=h2 port=8443"), svcbRr(q.name, "2 b2.b.example.")] },
    );
    const answer = await resolverFor(dns, { onEvent: (e) => events.push(e) }).svcb("_svc.b.example");
    expect(answer).toEqual({
      kind: "answer",
      records: [
        { priority: 1, target: ".", alpn: ["h2"], port: 8443 },
        { priority: 2, target: "b2.b.example" },
      ],
      ttlS: 300,
    });
    expect(dns.queries.map((q) => q.transport)).toEqual(["udp", "tcp"]);
    expect(events).toEqual([{ kind: "truncated", name: "_svc.b.example", type: "SVCB" }]);
  });
});

describe("the nameserver (resolv.conf(5))", () => {
  it("parses addresses with and without port", () => {
    expect(parseNameserver("192.0.2.53")).toEqual({ host: "192.0.2.53", port: 53 });
    expect(parseNameserver("127.0.0.1:5353")).toEqual({ host: "127.0.0.1", port: 5353 });
    expect(parseNameserver("::1")).toEqual({ host: "::1", port: 53 });
    expect(parseNameserver("[::1]:5353")).toEqual({ host: "::1", port: 5353 });
    expect(parseNameserver("fe80::1%eth0")).toEqual({ host: "fe80::1%eth0", port: 53 });
    expect(parseNameserver("dns.example")).toBeUndefined();
    expect(parseNameserver("127.0.0.1:0")).toBeUndefined();
  });

  it("takes the first nameserver line, skipping comments and other options", () => {
    const conf =
      "# generated\nsearch example\n; nameserver 192.0.2.1\noptions ndots:1\nnameserver 192.0.2.53 # primary\nnameserver 192.0.2.54\n";
    expect(nameserverFromResolvConf(conf)).toEqual({ host: "192.0.2.53", port: 53 });
    expect(nameserverFromResolvConf("search example\n")).toBeUndefined();
  });

  it("reads a resolv.conf file, and falls back to 127.0.0.1 without one", () => {
    const dir = mkdtempSync(join(tmpdir(), "mailscope-dns-"));
    writeFileSync(join(dir, "resolv.conf"), "nameserver 192.0.2.53\n");
    expect(systemNameserver(join(dir, "resolv.conf"))).toEqual({ host: "192.0.2.53", port: 53 });
    expect(systemNameserver(join(dir, "missing.conf"))).toEqual({ host: "127.0.0.1", port: 53 });
  });

  it("refuses a nameserver that is not an IP address", () => {
    expect(() => createDnsResolver({ nameserver: "dns.example" })).toThrow(/not an IP address/);
  });
});
