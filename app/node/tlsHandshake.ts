/**
 * One TLS handshake with a server, offering a single protocol version, for
 * `mailscope probe`'s TLS cases (SVC-6, AUTH-8): does the server complete a
 * TLS 1.3 handshake, is its certificate valid for the host name, and does it
 * refuse a client that offers only TLS 1.2. Nothing is sent after the
 * handshake; the connection is closed at once (politely, with close_notify).
 *
 * The certificate is checked but not required, so that a handshake that
 * completes with a certificate the probe does not trust still says which
 * version it spoke: `authorized` and `authorizationError` tell the rest.
 */
import { errorMessage } from "../errorMessage.ts";
import { connect, type TLSSocket } from "node:tls";
import { isIP } from "node:net";
import type { TlsHandshake } from "../probe/probe.ts";
import { transportErrorOf, type ConnectionPhase } from "./tlsFetch.ts";

/** What {@link tlsHandshake} is told. */
export interface TlsHandshakeOptions {
  /** The name the certificate must hold, and SNI (unless it is an address). */
  readonly host: string;
  readonly port: number;
  /** Where to connect instead (`--resolve`); default `host:port`. */
  readonly connectTo?: { readonly host: string; readonly port: number };
  /** Trusted CA certificates instead of the system's. */
  readonly ca?: string | Buffer;
  /** The only version offered. */
  readonly version: "TLSv1.3" | "TLSv1.2";
  /** Connecting and handshaking together may take this long. */
  readonly timeoutMs: number;
}

/** Connects, handshakes offering `version` alone, reports, closes. Never rejects. */
export function tlsHandshake(options: TlsHandshakeOptions): Promise<TlsHandshake> {
  return new Promise((settle) => {
    let phase: ConnectionPhase = "connecting";
    let done = false;
    const finish = (result: TlsHandshake): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (result.outcome === "established") {
        // Closed politely (close_notify after the client's Finished): a server sees a handshake that
        // completed and a client that left, not a handshake cut short. Destroyed if it lingers.
        socket.setTimeout(options.timeoutMs, () => socket.destroy());
        socket.end();
      } else socket.destroy();
      settle(result);
    };
    const socket: TLSSocket = connect({
      host: options.connectTo?.host ?? options.host,
      port: options.connectTo?.port ?? options.port,
      ...(isIP(options.host) === 0 ? { servername: options.host } : {}),
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
      minVersion: options.version,
      maxVersion: options.version,
      // Node checks the chain and the host name all the same; the result lands in `authorized`.
      rejectUnauthorized: false,
    });
    const timer = setTimeout(
      () =>
        finish({
          outcome: phase === "connecting" ? "failed" : "refused",
          failure: "timeout",
          message: `no ${phase === "connecting" ? "connection" : "handshake"} within ${options.timeoutMs} ms`,
        }),
      options.timeoutMs,
    );
    socket.once("connect", () => {
      phase = "handshake";
    });
    socket.once("secureConnect", () => {
      const cert = socket.getPeerCertificate();
      const names = typeof cert.subjectaltname === "string" ? cert.subjectaltname.split(/,\s*/) : [];
      const error = socket.authorizationError as unknown;
      finish({
        outcome: "established",
        protocol: socket.getProtocol() ?? "unknown",
        cipher: socket.getCipher().name,
        authorized: socket.authorized,
        ...(socket.authorized ? {} : { authorizationError: errorMessage(error) }),
        certificateNames: names,
      });
    });
    socket.once("error", (error) => {
      const transport = transportErrorOf(error, phase);
      finish({
        outcome: phase === "connecting" ? "failed" : "refused",
        failure: transport.kind,
        message: transport.message,
      });
    });
  });
}
