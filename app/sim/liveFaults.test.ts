import { describe, expect, it } from "vitest";
import { createReceiverHarness, type ReceiverHarness } from "../receiver/testing.ts";
import { formatFileError } from "./yamlPosition.ts";
import { createLiveFaultLayer, parseLiveFaults, type AppliedFaults } from "./liveFaults.ts";
import { createRandom } from "./random.ts";

function faultsOf(text: string) {
  const parsed = parseLiveFaults(text, "faults.yaml");
  if (!parsed.ok) throw new Error(parsed.errors.map(formatFileError).join("\n"));
  return parsed.faults;
}

async function layered(
  text: string,
  clockScale = 1,
): Promise<{ h: ReceiverHarness; send: (to?: string[]) => Promise<Response>; applied: AppliedFaults[] }> {
  const h = await createReceiverHarness();
  const applied: AppliedFaults[] = [];
  const handler = createLiveFaultLayer(h.receiver, {
    faults: faultsOf(text),
    clock: h.clock,
    startMs: h.clock.now(),
    clockScale,
    random: createRandom(1),
    problemBase: "https://mailscope.example/problems",
    servedDomains: ["b.example"],
    onApplied: (_request, what) => applied.push(what),
  });
  let n = 0;
  const send = async (to = ["bob@b.example"]) => handler(await h.request({ to, idempotencyKey: `k${++n}` }));
  return { h, send, applied };
}

describe("the scenario's faults on real traffic (serve --faults)", () => {
  it("a faults file with mistakes: each error at its line and column, with the field", () => {
    const parsed = parseLiveFaults(
      [
        "network:",
        "  - { kind: unavailble, path: /v1/messages }",
        "  - { kind: unavailable, requests: 3-1x }",
        "recipients:",
        "  - { kind: deferred, mailbox: bob@b.example, problem: gone }",
        "extra: 1",
      ].join("\n"),
      "faults.yaml",
    );
    expect(parsed.ok).toBe(false);
    const lines = parsed.ok ? [] : parsed.errors.map(formatFileError);
    expect(lines[0]).toMatch(
      /^faults\.yaml:2:13: network\[0\]\.kind: unknown kind "unavailble"; the kinds are connection-refused, /,
    );
    expect(lines[1]).toMatch(/^faults\.yaml:3:36: network\[1\]\.requests: /);
    expect(lines[2]).toMatch(
      /^faults\.yaml:5:56: recipients\[0\]\.problem: is "gone"; expected one of "temporary_failure", "mailbox_full", "rate_limited"/,
    );
    expect(lines[3]).toBe('faults.yaml:6:1: extra: unknown field "extra"');
  });

  it("ERR-10, POST-20: `requests: 2-3` answers the 2nd and 3rd POSTs 503 with Retry-After, and lets the others through", async () => {
    const { send, applied } = await layered(
      "network:\n  - { id: down, kind: unavailable, path: /v1/messages, retryAfterS: 120, requests: 2-3 }\n",
    );
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await send()).status);
    expect(statuses).toEqual([200, 503, 503, 200]);
    expect(applied.map((a) => a.network.map((f) => `${f.label}#${f.count}`).join())).toEqual([
      "",
      "down#2",
      "down#3",
      "",
    ]);
  });

  it("ERR-8: a time window on the spec's clock: until 1h at --clock-scale 60 ends a minute later on the wall clock", async () => {
    const { h, send } = await layered("network:\n  - { kind: rate-limited, path: /v1/messages, until: 1h }\n", 60);
    const first = await send();
    expect([first.status, first.headers.get("retry-after")]).toEqual([429, "60"]);
    await h.clock.advance(59_000);
    expect((await send()).status).toBe(429);
    await h.clock.advance(1_000);
    expect((await send()).status).toBe(200);
  });

  it("ERR-21: a refused connection closes without an answer before the receiver sees the request; a reset after it, once stored", async () => {
    const refused = await layered("network:\n  - { kind: connection-refused, requests: 1 }\n");
    const answer = await refused.send();
    expect(answer.type).toBe("error");
    expect(refused.applied[0]?.dropped).toBe("connection-refused");
    expect(refused.h.trace.named("receiver.request")).toHaveLength(0);
    const reset = await layered("network:\n  - { kind: connection-reset, phase: response }\n");
    expect((await reset.send()).type).toBe("error");
    expect(reset.h.trace.named("mailbox.delivered").map((e) => e.data?.["mailbox"])).toEqual(["bob@b.example"]);
  });

  it("STATE-4, ERR-15: unsupported-version answers 404 with the versions it names", async () => {
    const { send } = await layered(
      "network:\n  - { kind: unsupported-version, path: /v1/messages, versions: [v2, v3] }\n",
    );
    const answer = await send();
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({
      type: "https://mailscope.example/problems/unsupported_version",
      versions: ["v2", "v3"],
    });
  });

  it("ERR-18, ERR-17, G17: per-recipient faults stand in for a recipient's result, counted per mailbox; a failure after acceptance follows", async () => {
    const { h, send, applied } = await layered(
      [
        "recipients:",
        "  - { kind: deferred, mailbox: bob@b.example, problem: mailbox_full, retryAfterS: 60, requests: 1 }",
        "  - { kind: rejected, mailbox: '*@b.example', problem: policy_rejected, requests: 1 }",
        "  - { kind: fail-after-acceptance, mailbox: carol@b.example, status: 5.2.2, diagnostic: 'smtp; 552 full', delayMs: 1000 }",
      ].join("\n"),
    );
    const first = (await (await send(["bob@b.example", "carol@b.example"])).json()) as { results: unknown[] };
    expect(first.results).toEqual([
      expect.objectContaining({
        recipient: "bob@b.example",
        status: "deferred",
        retry_after: 60,
        problem: expect.objectContaining({ type: "https://mailscope.example/problems/mailbox_full" }),
      }),
      expect.objectContaining({ recipient: "carol@b.example", status: "rejected" }),
    ]);
    const second = (await (await send(["bob@b.example", "carol@b.example"])).json()) as {
      results: { status: string }[];
    };
    expect(second.results.map((r) => r.status)).toEqual(["accepted", "accepted"]);
    await h.clock.advance(1000);
    expect(h.trace.named("failure.after-acceptance").map((e) => e.data?.["mailbox"])).toEqual(["carol@b.example"]);
    expect(applied[0]?.recipients.map((r) => `${r.label} ${r.mailbox}`)).toEqual([
      "recipients[0] bob@b.example",
      "recipients[1] carol@b.example",
    ]);
  });
});
