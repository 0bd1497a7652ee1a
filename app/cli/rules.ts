import { Command, CommanderError } from "commander";
import { ruleById, rules, type Rule } from "../protocol/rules.ts";

/** Formats rules as the terminal shows them: ID, strength, text, section. */
export function formatRules(list: readonly Rule[]): string {
  return list
    .map((r) => `${r.id.padEnd(9)} ${r.strength.padEnd(8)} ${r.text}\n${" ".repeat(19)}(${r.section})`)
    .join("\n");
}

/** `mailscope rules [ID…] [--section TEXT] [--json]`: the rules catalogue of SPEC.md. */
export function rulesCommand(): Command {
  return new Command("rules")
    .description("list the rules of SPEC.md with their stable IDs (the IDs tests, traces and reports cite)")
    .argument("[ids...]", "rule IDs (e.g. RETRY-2) or ID prefixes (e.g. RETRY)")
    .option("--section <text>", "only rules whose section contains this text")
    .option("--json", "print JSON")
    .action((ids: string[], options: { section?: string; json?: boolean }) => {
      let list: readonly Rule[] = rules;
      if (ids.length > 0) {
        const unknown = ids.filter(
          (id) => !ruleById(id.toUpperCase()) && !rules.some((r) => r.id.startsWith(`${id.toUpperCase()}-`)),
        );
        if (unknown.length > 0) {
          const message = `no rule or prefix ${unknown.join(", ")} (see mailscope rules)`;
          console.error(`mailscope rules: ${message}`);
          throw new CommanderError(2, "mailscope.rules.unknown", message);
        }
        list = rules.filter((r) =>
          ids.some((id) => r.id === id.toUpperCase() || r.id.startsWith(`${id.toUpperCase()}-`)),
        );
      }
      if (options.section) {
        const needle = options.section.toLowerCase();
        list = list.filter((r) => r.section.toLowerCase().includes(needle));
      }
      console.log(options.json ? JSON.stringify(list, null, 2) : formatRules(list));
    });
}
