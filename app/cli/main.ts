import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { rulesCommand } from "./rules.ts";

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

/** The `mailscope` program: every command, with its help. */
export function createProgram(): Command {
  const program = new Command("mailscope")
    .description(
      "Mailscope: a simulator and visualizer for the Inter-Domain Mail Delivery Service (mail between domains over HTTPS).",
    )
    .version(version, "-V, --version")
    .showHelpAfterError("(run mailscope --help for the commands)")
    .configureHelp({ sortSubcommands: true });
  program.addCommand(rulesCommand());
  return program;
}

/** Runs the command line; resolves to the exit code. Errors become one clear line, never a stack trace. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    await createProgram()
      .exitOverride()
      .parseAsync([...argv], { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    console.error(`mailscope: ${(error as Error).message}`);
    return 1;
  }
}
