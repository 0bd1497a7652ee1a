/**
 * The real Clock and Random ports (ARCHITECTURE.md "Ports"): the system clock
 * and the platform's cryptographic generator. The simulator hands the core a
 * virtual clock and a seeded PRNG instead; `mailscope serve` and `send` hand
 * it these.
 */
import { randomBytes } from "node:crypto";
import type { Clock, Random } from "../ports.ts";

/** What {@link createSystemClock} may be told. */
export interface SystemClockOptions {
  /**
   * Unref each timer, so that a pending timer alone does not keep the process
   * alive (a server's housekeeping timers should not delay its exit; a
   * sender waiting for its next retry should).
   */
  readonly unref?: boolean;
}

/** A Clock over `Date.now` and Node's timers. */
export function createSystemClock(options: SystemClockOptions = {}): Clock {
  return {
    now: () => Date.now(),
    setTimeout: (fn, timeoutMs) => {
      const timer = setTimeout(fn, timeoutMs);
      if (options.unref === true) timer.unref();
      return timer;
    },
    clearTimeout: (id) => {
      clearTimeout(id as ReturnType<typeof setTimeout>);
    },
  };
}

/** The largest `--clock-scale` of `send` and `serve`: a day of the spec's schedule a second. */
export const MAX_CLOCK_SCALE = 86_400;

/** A `--clock-scale` value: a number above 0 and at most {@link MAX_CLOCK_SCALE}; undefined when it is not one. */
export function parseClockScale(text: string | undefined): number | undefined {
  if (text === undefined) return 1;
  const value = Number(text.trim());
  return text.trim() !== "" && Number.isFinite(value) && value > 0 && value <= MAX_CLOCK_SCALE ? value : undefined;
}

/** What a bad `--clock-scale` is told. */
export const CLOCK_SCALE_HINT = `a number above 0 and at most ${MAX_CLOCK_SCALE} (60: a minute of the spec's schedule a second)`;

/**
 * A clock that runs `scale` times faster than the wall clock from the moment
 * it is made (`send --clock-scale 60`: a minute of the spec's retry schedule
 * a second): `now()` moves `scale` ms per real ms, and a timer of `ms` fires
 * after `ms / scale` real ms. Signatures still read the wall clock
 * (SenderPorts.signingClock): the receiver checks `created` against its own.
 */
export function createScaledClock(scale: number, options: SystemClockOptions = {}): Clock {
  const startMs = Date.now();
  const real = createSystemClock(options);
  return {
    now: () => startMs + (Date.now() - startMs) * scale,
    setTimeout: (fn, timeoutMs) => real.setTimeout(fn, timeoutMs / scale),
    clearTimeout: (id) => real.clearTimeout(id),
  };
}

/** The wall clock, with timers that keep the process alive. */
export const systemClock: Clock = createSystemClock();

/** Randomness from the operating system's CSPRNG (`crypto.randomBytes`). */
export const cryptoRandom: Random = {
  next: () => {
    // 53 random bits, the most a double holds exactly: uniform in [0, 1).
    const bytes = randomBytes(8);
    const high = bytes.readUInt32BE(0) >>> 5; // 27 bits
    const low = bytes.readUInt32BE(4) >>> 6; // 26 bits
    return (high * 67108864 + low) / 9007199254740992;
  },
  bytes: (length) => new Uint8Array(randomBytes(length)),
};
