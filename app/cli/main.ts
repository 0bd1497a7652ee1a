import { Command, CommanderError } from "commander";
import { readFileSync } from "node:fs";
import { nodeCryptoProvider } from "../node/nodeCrypto.ts";
import { useCryptoProvider } from "../protocol/webCrypto.ts";
import { checkCommand } from "./check.ts";
import { compareCommand } from "./compare.ts";
import { lintRequestCommand } from "./lintRequest.ts";
import { rulesCommand } from "./rules.ts";
import { replayCommand } from "./replay.ts";
import { runCommand } from "./run.ts";
import { keygenCommand, sendCommand } from "./send.ts";
import { serveCommand } from "./serve.ts";
import { sweepCommand } from "./sweep.ts";

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

/** Small Ed25519 and SHA-256 operations computed in place: WebCrypto's answers without a thread-pool round trip each. */
const NODE_CRYPTO = nodeCryptoProvider();

/** Exit codes of every command: 0 success, 1 a failed outcome, 2 bad input (usage errors included). */
function usageExit(error: CommanderError): never {
  if (error.exitCode === 0) throw error;
  throw new CommanderError(2, error.code, error.message);
}

/** The `mailscope` program: every command, with its help. */
export function createProgram(): Command {
  const program = new Command("mailscope")
    .description(
      "Mailscope: a simulator and visualizer for the Inter-Domain Mail Delivery Service (mail between domains over HTTPS).",
    )
    .version(version, "-V, --version")
    .showHelpAfterError("(run mailscope --help for the commands)")
    .configureHelp({ sortSubcommands: true });
  for (const command of [
    rulesCommand(),
    serveCommand(),
    lintRequestCommand(),
    sendCommand(),
    keygenCommand(),
    runCommand(),
    replayCommand(),
    checkCommand(),
    compareCommand(),
    sweepCommand(),
  ]) {
    // Settings such as exitOverride are not inherited through addCommand: each command gets them itself.
    program.addCommand(command.exitOverride(usageExit).showHelpAfterError(`(run mailscope ${command.name()} --help)`));
  }
  return program;
}

/** Runs the command line; resolves to the exit code. Errors become one clear line, never a stack trace. */
export async function main(argv: readonly string[]): Promise<number> {
  useCryptoProvider(NODE_CRYPTO);
  try {
    await createProgram()
      .exitOverride(usageExit)
      .parseAsync([...argv], { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    console.error(`mailscope: ${(error as Error).message}`);
    return 1;
  }
}
