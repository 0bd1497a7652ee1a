/**
 * What can run, and the plan: the cases the options allow (a case needs a
 * signing identity, a mailbox, an absent recipient…), and what the probe will
 * send and store at most, said in `probe.started` before any request
 * (docs/decisions/0043-probe-cases-and-safety.md).
 */
import type { ProbeCase, ProbeNeed, ProbeStep } from "./cases.ts";
import type { ProbeOptions, ProbePlan } from "./probe.ts";

/** The steps that POST a delivery. */
export const POST_STEPS: readonly ProbeStep[] = ["delivery", "bad-requests", "signatures", "size"];

/** Why a case that needs an option not given is skipped. */
export const NEED_WHY: Readonly<Record<ProbeNeed, string>> = {
  key: "needs --from and --key: a signing identity the receiver trusts",
  mailbox: "needs --mailbox: a recipient that exists and may be given the probe's messages",
  absent: "needs --absent: a recipient of the receiver's domain that does not exist",
  "absent-pattern":
    "needs --absent with {n} (nobody{n}@b.example): max_recipients + 1 recipients that do not exist, made from it",
};

/** What the options allow to run. */
export interface WhatRuns {
  /** The cases whose needs the options meet. */
  readonly runnable: readonly ProbeCase[];
  /** Whether any case POSTs. */
  readonly anyPost: boolean;
  /** Whether the valid delivery runs: first whenever a POST case runs, to show that the receiver trusts the probe's key. */
  readonly deliverRuns: boolean;
  /** Whether the capabilities document is asked for (every case past the handshakes and the cross-cuts reads it). */
  readonly capabilitiesRun: boolean;
  readonly plan: ProbePlan;
}

function given(options: ProbeOptions, need: ProbeNeed): boolean {
  switch (need) {
    case "key":
      return options.identity !== undefined;
    case "mailbox":
      return options.mailboxes.length > 0;
    case "absent":
      return options.absent !== undefined;
    case "absent-pattern":
      return options.absent !== undefined && options.absent.includes("{n}");
  }
}

/** The first option `c` needs that is not given. */
export function missingNeed(options: ProbeOptions, c: ProbeCase): ProbeNeed | undefined {
  return c.needs.find((n) => !given(options, n));
}

/** What of `cases` can run under `options`, and the plan it makes. */
export function whatRuns(options: ProbeOptions, cases: readonly ProbeCase[]): WhatRuns {
  const runnable = cases.filter((c) => missingNeed(options, c) === undefined);
  const runs = (id: string): boolean => runnable.some((c) => c.id === id);
  const anyPost = POST_STEPS.some((step) => runnable.some((c) => c.step === step));
  const deliverRuns = anyPost && given(options, "key") && given(options, "mailbox");
  const capabilitiesRun = runnable.some((c) => c.step !== "tls" && c.step !== "answers");
  const refused = runnable.filter((c) => c.step === "bad-requests" || c.step === "signatures" || c.step === "size");
  const requests =
    (capabilitiesRun ? 1 : 0) +
    (runs("unsupported-version") || runs("unsupported-version-versions") ? 1 : 0) +
    (runs("unsupported-version-post") ? 1 : 0) +
    (deliverRuns ? 1 : 0) +
    (runs("replay") ? 1 : 0) +
    (runs("idempotency-conflict") ? 1 : 0) +
    (runs("all-rejected") ? 1 : 0) +
    (runs("unknown-envelope-fields") ? 1 : 0) +
    refused.length;
  const messages = (deliverRuns ? 1 : 0) + (runs("unknown-envelope-fields") ? 1 : 0);
  const plan: ProbePlan = {
    cases: cases.length,
    requests,
    handshakes: 1 + (runs("tls12-refused") ? 1 : 0),
    messages,
    messagesAtMost: messages + refused.reduce((n, c) => n + c.mayDeliver, 0) + (runs("idempotency-conflict") ? 1 : 0),
    mailboxes: options.mailboxes,
    requestsPerSecond: options.requestsPerSecond,
  };
  return { runnable, anyPost, deliverRuns, capabilitiesRun, plan };
}
