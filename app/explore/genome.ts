/**
 * A run's seed (docs/explore.md "Seeds"): what the explorer prints for every
 * run, and all it takes to build that run's world again.
 *
 * A world is drawn from independent parts — the swarm (which features are
 * on), the domains, the messages, the receivers' policies, the faults and the
 * simulation's own seed — each from its own PRNG stream. A fresh run's seed is
 * one number, from which every part's stream is forked (`3735928559`). A run
 * that mutates a corpus entry keeps the entry's number and redraws one or two
 * parts from seeds of their own: `3735928559+faults.12+policies.7` is run
 * 3735928559 with its faults drawn from 12 and its policies from 7. The text
 * is the seed: `mailscope explore --run <seed>` rebuilds the same world.
 */

/** The parts of a world, each drawn from its own stream. */
export const PARTS = ["swarm", "domains", "messages", "policies", "faults", "sim"] as const;
export type Part = (typeof PARTS)[number];

/** A run's seed as data. */
export interface Genome {
  /** The run's number: every part not overridden is drawn from it. */
  readonly base: number;
  /** Parts drawn from a seed of their own. */
  readonly overrides: Readonly<Partial<Record<Part, number>>>;
}

const MAX_SEED = 0xffff_ffff;

/** `3735928559+faults.12+policies.7`: the parts in {@link PARTS} order. */
export function formatGenome(genome: Genome): string {
  let text = String(genome.base);
  for (const part of PARTS) {
    const seed = genome.overrides[part];
    if (seed !== undefined) text += `+${part}.${seed}`;
  }
  return text;
}

/** A genome from its text, or why the text is not one. */
export function parseGenome(text: string): { ok: true; genome: Genome } | { ok: false; message: string } {
  const [head, ...rest] = text.trim().split("+");
  const base = seedNumber(head ?? "");
  if (base === undefined) {
    return { ok: false, message: `"${text}" is not a run's seed: it starts with a number from 0 to ${MAX_SEED}` };
  }
  const overrides: Partial<Record<Part, number>> = {};
  for (const item of rest) {
    const dot = item.indexOf(".");
    const part = item.slice(0, Math.max(0, dot)) as Part;
    const seed = seedNumber(item.slice(dot + 1));
    if (dot < 0 || !(PARTS as readonly string[]).includes(part) || seed === undefined) {
      return {
        ok: false,
        message: `"+${item}" in "${text}" is not <part>.<number> with a part among ${PARTS.join(", ")}`,
      };
    }
    overrides[part] = seed;
  }
  return { ok: true, genome: { base, overrides } };
}

function seedNumber(text: string): number | undefined {
  if (!/^\d{1,10}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= MAX_SEED ? n : undefined;
}

/** `genome` with `part` drawn from `seed`. */
export function withPart(genome: Genome, part: Part, seed: number): Genome {
  return { base: genome.base, overrides: { ...genome.overrides, [part]: seed } };
}
