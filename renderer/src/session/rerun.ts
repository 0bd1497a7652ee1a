/**
 * "Re-run and compare" of an opened bug bundle: runs the bundled
 * scenario with its seed, readings and body recording in a simulation
 * session of its own (a worker, as every run of the app), to its end, and
 * hands back the trace for app/trace/bundle.ts `compareReplay`. The bytes of
 * the scenario's `eml:` files go from the bundle into the session's `start`.
 */
import type { StartCommand } from "../../../app/sim/sessionProtocol.ts";
import { replaySettings, type Bundle } from "../../../app/trace/bundle.ts";
import type { RecordedEvent, Trace } from "../../../app/trace/schema.ts";
import type { SessionPort } from "./port.ts";

/**
 * Runs `bundle`'s scenario on the session `port` makes; resolves to its whole
 * trace. The port is disposed at the end. Rejects, without starting a session,
 * when the bundle cannot be re-run (an `eml:` file it does not hold: the
 * message names it at its JSONPath).
 */
export function rerunBundle(
  bundle: Bundle,
  mailscope: string,
  port: (start: StartCommand) => SessionPort,
): Promise<Trace> {
  const settings = replaySettings(bundle);
  if (!settings.ok) {
    return Promise.reject(new Error(settings.violations.map((v) => `${v.path}: ${v.message}`).join("; ")));
  }
  const s = settings.value;
  const start: StartCommand = {
    type: "start",
    text: s.text,
    file: s.file,
    seed: s.seed,
    readings: s.readings,
    recordBodies: s.recordBodies,
    ...(Object.keys(s.emls).length > 0 && { emls: s.emls }),
    mailscope,
  };
  const session = port(start);
  const events: RecordedEvent[] = [];
  return new Promise<Trace>((resolve, reject) => {
    const done = (settle: () => void) => {
      stop();
      session.dispose();
      settle();
    };
    const stop = session.onMessage((message) => {
      switch (message.type) {
        case "ready":
          return session.send({ type: "finish" });
        case "events":
          for (const e of message.events) events.push(e);
          return;
        case "finished":
          return done(() => resolve({ ...message.result.trace, events }));
        case "invalid":
          return done(() => reject(new Error(`the bundled scenario does not load here: ${message.errors.join("; ")}`)));
        case "error":
          return done(() => reject(new Error(message.message)));
        default:
          return;
      }
    });
    session.send(start);
  });
}
