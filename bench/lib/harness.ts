/**
 * What the receiver benches share: a resolver with no DNS, b.example's receiver
 * config trusting one test sender, a message of a given size, and one POST to a
 * `serve` child over HTTPS on loopback.
 */
import { request as httpsRequest, type Agent } from "node:https";
import { chooseBoundary } from "../../app/protocol/multipart.ts";
import { signedDelivery, textMessage, type TestSender } from "../../app/receiver/testing.ts";

/** A resolver that answers NXDOMAIN to everything: the benches' keys come from the config. */
export const noDns = {
  svcb: () => Promise.resolve({ kind: "nxdomain" as const }),
  txt: () => Promise.resolve({ kind: "nxdomain" as const }),
};

/** b.example's receiver, with bob's mailbox, trusting `sender`'s key. */
export function receiverConfig(sender: TestSender, maxMessageSize = 26_214_400) {
  return {
    domains: ["b.example"],
    capabilities: { max_message_size: maxMessageSize },
    problem_base: "https://b.example/problems",
    mailboxes: [{ address: "bob@b.example" }],
    keyRecords: { [sender.keyid]: sender.keyRecord },
  };
}

/** A boundary of its own for each request, as a sender chooses one (so nothing a receiver keeps from one body serves the next). */
export function freshBoundary(message: Uint8Array): string {
  return chooseBoundary(crypto.getRandomValues(new Uint8Array(24)), message);
}

/** A signed delivery of `message` from alice to bob (the receiver of {@link receiverConfig}), with a fresh boundary. */
export function aliceToBob(
  sender: TestSender,
  message: Uint8Array,
  createdS: number,
  idempotencyKey: string,
): Promise<Request> {
  return signedDelivery({
    from: "alice@a.example",
    to: ["bob@b.example"],
    message,
    key: sender.privateKey,
    keyid: sender.keyid,
    createdS,
    idempotencyKey,
    boundary: freshBoundary(message),
  });
}

/** A message of about `size` bytes from alice to bob: headers, then lines of text. */
export function messageOf(size: number): Uint8Array {
  const head = textMessage({ from: "alice@a.example", to: ["bob@b.example"], body: "" });
  const line = `${"0123456789abcdef".repeat(4)}\r\n`;
  const body = line.repeat(Math.max(0, Math.floor((size - head.length) / line.length)));
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  for (let i = 0; i < body.length; i++) bytes[head.length + i] = body.charCodeAt(i);
  return bytes;
}

/**
 * POSTs `body` to `/v1/messages` of a server on 127.0.0.1:`port` (its certificate `cert`, for localhost),
 * with `headers` and the body's Content-Length; resolves with the status. `onBody` sees the response's text;
 * with `errorAsZero`, a connection the server cuts (an answer too, for a bench of refusals) resolves with 0.
 */
export function postHttps(
  agent: Agent,
  cert: string,
  port: number,
  headers: Record<string, string>,
  body: Uint8Array,
  { onBody, errorAsZero = false }: { onBody?: (status: number, text: string) => void; errorAsZero?: boolean } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        servername: "localhost",
        path: "/v1/messages",
        method: "POST",
        headers: { ...headers, host: `localhost:${port}`, "content-length": String(body.byteLength) },
        agent,
        ca: cert,
      },
      (res) => {
        let text = "";
        if (onBody) res.on("data", (d: Buffer) => (text += d.toString()));
        else res.resume();
        res.on("end", () => {
          onBody?.(res.statusCode ?? 0, text);
          resolve(res.statusCode ?? 0);
        });
      },
    );
    req.on("error", (e) => (errorAsZero ? resolve(0) : reject(e)));
    req.end(body);
  });
}
