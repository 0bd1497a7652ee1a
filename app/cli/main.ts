import { Command, CommanderError } from "commander";
import type { CryptoProvider } from "../protocol/webCrypto.ts";
import { MAILSCOPE_VERSION } from "./version.ts";

/** Exit codes of every command: 0 success, 1 a failed outcome, 2 bad input (usage errors included). */
function usageExit(error: CommanderError): never {
  if (error.exitCode === 0) throw error;
  throw new CommanderError(2, error.code, error.message);
}

/**
 * Every command of `mailscope`, by name, with the module that defines it.
 * Only the command being run is loaded (`--version` loads none): a command's
 * module brings the simulator, the receiver or the TLS stack with it, and
 * loading all of them cost most of a second before anything was printed.
 */
export const COMMANDS: readonly { readonly name: string; readonly load: () => Promise<Command> }[] = [
  { name: "rules", load: async () => (await import("./rules.ts")).rulesCommand() },
  { name: "serve", load: async () => (await import("./serve.ts")).serveCommand() },
  { name: "lint-request", load: async () => (await import("./lintRequest.ts")).lintRequestCommand() },
  { name: "send", load: async () => (await import("./send.ts")).sendCommand() },
  { name: "keygen", load: async () => (await import("./send.ts")).keygenCommand() },
  { name: "run", load: async () => (await import("./runCommand.ts")).runCommand() },
  { name: "replay", load: async () => (await import("./replay.ts")).replayCommand() },
  { name: "check", load: async () => (await import("./runCommand.ts")).checkCommand() },
  { name: "compare", load: async () => (await import("./compare.ts")).compareCommand() },
  { name: "explore", load: async () => (await import("./explore.ts")).exploreCommand() },
  { name: "probe", load: async () => (await import("./probe.ts")).probeCommand() },
  { name: "sweep", load: async () => (await import("./sweep.ts")).sweepCommand() },
];

/**
 * The commands `argv` needs: the one it names (`mailscope run …`,
 * `mailscope help run`), none for `--version`, and all of them for the
 * program's help or a name that is not a command (commander's help lists
 * them and suggests the nearest).
 */
export function commandsFor(argv: readonly string[]): readonly string[] {
  const words = argv.filter((a) => !a.startsWith("-"));
  const named = words[0] === "help" ? words[1] : words[0];
  if (named === undefined) {
    const versionOnly =
      argv.some((a) => a === "-V" || a === "--version") && !argv.some((a) => a === "-h" || a === "--help");
    if (versionOnly) return [];
  } else if (COMMANDS.some((c) => c.name === named)) {
    return [named];
  }
  return COMMANDS.map((c) => c.name);
}

/** The `mailscope` program with the commands named in `names` (default: every command), each with its help. */
export async function createProgram(names: readonly string[] = COMMANDS.map((c) => c.name)): Promise<Command> {
  const program = new Command("mailscope")
    .description(
      "Mailscope: a simulator and visualizer for the Inter-Domain Mail Delivery Service (mail between domains over HTTPS).",
    )
    .version(MAILSCOPE_VERSION, "-V, --version")
    .showHelpAfterError("(run mailscope --help for the commands)")
    // Options after a command are the command's own: `explore merge --out d` is merge's --out, not explore's.
    .enablePositionalOptions()
    .configureHelp({ sortSubcommands: true });
  const commands = await Promise.all(COMMANDS.filter((c) => names.includes(c.name)).map((c) => c.load()));
  for (const command of commands) {
    // Settings such as exitOverride are not inherited through addCommand: each command gets them itself.
    program.addCommand(command.exitOverride(usageExit).showHelpAfterError(`(run mailscope ${command.name()} --help)`));
  }
  return program;
}

let nodeCrypto: CryptoProvider | undefined;

/** Runs the command line; resolves to the exit code. Errors become one clear line, never a stack trace. */
export async function main(argv: readonly string[]): Promise<number> {
  try {
    const names = commandsFor(argv);
    if (names.length > 0) {
      // Small Ed25519 and SHA-256 operations computed in place: WebCrypto's answers without a thread-pool round trip each.
      const [{ nodeCryptoProvider }, { useCryptoProvider }] = await Promise.all([
        import("../node/nodeCrypto.ts"),
        import("../protocol/webCrypto.ts"),
      ]);
      nodeCrypto ??= nodeCryptoProvider();
      useCryptoProvider(nodeCrypto);
    }
    const program = await createProgram(names);
    await program.exitOverride(usageExit).parseAsync([...argv], { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    console.error(`mailscope: ${(error as Error).message}`);
    return 1;
  }
}
