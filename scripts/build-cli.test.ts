/**
 * The built CLI (scripts/build-cli.mjs → dist-cli/) is the same program as the
 * sources: it is built here into a folder of its own and run, and what it
 * prints — the version, the help, a whole run down to its trace hash — is
 * compared with what the TypeScript sources print. bin/mailscope.mjs runs the
 * build only while it is up to date with every source it was built from.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEntry, ENGINE_FILE, startEngine } from "../bin/cliEntry.mjs";
import { COMMANDS, commandsFor } from "../app/cli/main.ts";
import { MAILSCOPE_VERSION } from "../app/cli/version.ts";
import { buildCli } from "./build-cli.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SOURCES = join(ROOT, "app", "cli", "main.ts");
/** Runs `main` of a CLI module with `args`, from the repository's root; its stdout. */
const RUN_MAIN =
  "const { main } = await import(process.argv[1]); process.exitCode = await main(process.argv.slice(2));";

function mailscope(entry: string, args: readonly string[]): string {
  return execFileSync(process.execPath, ["--input-type=module", "-e", RUN_MAIN, entry, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
}

let outdir: string;
let inputs: string[];

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), "mailscope-cli-build-"));
  inputs = await buildCli(outdir);
});

afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
});

describe("the built CLI", () => {
  it("prints the version of package.json", () => {
    expect(mailscope(join(outdir, "main.js"), ["--version"]).trim()).toBe(MAILSCOPE_VERSION);
  });

  it("lists every command in its help, as the sources do", () => {
    const built = mailscope(join(outdir, "main.js"), ["--help"]);
    expect(built).toBe(mailscope(SOURCES, ["--help"]));
    for (const { name } of COMMANDS) expect(built).toMatch(new RegExp(`^  ${name} `, "m"));
  });

  it("runs a scenario to the same trace as the sources", () => {
    const args = ["run", "scenarios/happy-path.yaml", "--json", "--no-progress"];
    const built = JSON.parse(mailscope(join(outdir, "main.js"), args)) as Record<string, unknown>;
    const sources = JSON.parse(mailscope(SOURCES, args)) as Record<string, unknown>;
    expect(built["passed"]).toBe(true);
    expect(built["traceHash"]).toBe(sources["traceHash"]);
    expect({ ...built, wallMs: 0 }).toEqual({ ...sources, wallMs: 0 });
  });

  it("explores over worker threads, to the report the sources give (--workers)", () => {
    // Under `node --input-type=module -e`, as mailscope() runs it: the threads start without the -e flags.
    const explore = (entry: string, out: string) =>
      mailscope(entry, ["explore", "--runs", "3", "--seed", "7", "--workers", "2", "--json", "--out", out]);
    const built = explore(join(outdir, "main.js"), join(outdir, "explore-built"));
    expect(built).toBe(explore(SOURCES, join(outdir, "explore-sources")));
    expect((JSON.parse(built) as { runs: number }).runs).toBe(3);
  });

  it("sweeps in its worker threads as the sources do: the threads' module is built too", () => {
    const args = [
      "sweep",
      "scenarios/receiver-down-past-fallback-window.yaml",
      "--vary",
      "faults.network[b-down].until=1h..3h/30m",
      "--workers",
      "2",
      "--json",
      "--no-progress",
    ];
    const built = JSON.parse(mailscope(join(outdir, "main.js"), args)) as { points: { runs: { hash?: string }[] }[] };
    const sources = JSON.parse(mailscope(SOURCES, args)) as typeof built;
    const hashes = (r: typeof built) => r.points.map((p) => p.runs.map((run) => run.hash));
    expect(hashes(built).flat()).toHaveLength(5);
    expect(
      hashes(built)
        .flat()
        .every((h) => typeof h === "string"),
    ).toBe(true);
    expect(hashes(built)).toEqual(hashes(sources));
  });

  it("was built from the CLI's sources, which bin/mailscope.mjs compares it with", () => {
    expect(inputs).toContain("app/cli/main.ts");
    expect(inputs).toContain("app/cli/run.ts");
    expect(inputs.every((file) => !file.includes("node_modules"))).toBe(true);
  });
});

/** Runs `main` of the one-file build under `dist` (bin/cliEntry.mjs `startEngine`) as bin/mailscope.mjs does, code cache and all. */
const ENGINE_MAIN = `
const { startEngine } = await import(process.argv[1]);
const args = process.argv.slice(3);
const engine = startEngine(process.argv[2], args);
process.exitCode = await engine.main(args);
process.stderr.write("\\n" + JSON.stringify({ cache: engine.cache, saved: engine.saveCodeCache(process.exitCode) !== undefined }));
`;
const CLI_ENTRY = join(ROOT, "bin", "cliEntry.mjs");

function engine(dist: string, args: readonly string[]): { out: string; cache: string; saved: boolean } {
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", ENGINE_MAIN, CLI_ENTRY, dist, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const { cache, saved } = JSON.parse(result.stderr.split("\n").at(-1) ?? "") as { cache: string; saved: boolean };
  return { out: result.stdout, cache, saved };
}

describe("run and check of the built CLI, from its one-file build with a code cache", () => {
  const runArgs = ["run", "scenarios/happy-path.yaml", "--json", "--no-progress"];
  const withoutWall = (out: string) => ({ ...(JSON.parse(out) as Record<string, unknown>), wallMs: 0 });
  const cacheFiles = () => readdirSync(join(outdir, "code-cache")).filter((f) => f.endsWith(".bin"));

  it("comes with the code caches of run and check, made by the build under this Node", () => {
    const made = cacheFiles();
    expect(made.some((f) => f.startsWith(`run-${process.version}-`))).toBe(true);
    expect(made.some((f) => f.startsWith(`check-${process.version}-`))).toBe(true);
    expect(engine(outdir, runArgs)).toMatchObject({ cache: "taken", saved: false });
  });

  it("is ASCII, which V8 holds as a one-byte string (a regular expression's non-ASCII character is not escaped)", () => {
    expect(readFileSync(join(outdir, ENGINE_FILE)).every((byte) => byte < 0x80)).toBe(true);
  });

  it("is started for run and check only, and only when it was built", () => {
    expect(startEngine(outdir, ["--version"])).toBeUndefined();
    expect(startEngine(outdir, ["serve", "--help"])).toBeUndefined();
    expect(startEngine(join(outdir, "nowhere"), runArgs)).toBeUndefined();
  });

  it("runs a scenario to the same trace as the sources, with no cache, the cache it made, and one V8 refuses", () => {
    const sources = withoutWall(mailscope(SOURCES, runArgs));
    rmSync(join(outdir, "code-cache"), { recursive: true, force: true });
    // `--help` makes no cache: it compiles little of what a run needs.
    expect(engine(outdir, ["run", "--help"])).toMatchObject({ cache: "none", saved: false });
    const first = engine(outdir, runArgs);
    expect(first).toMatchObject({ cache: "none", saved: true });
    expect(withoutWall(first.out)).toEqual(sources);
    expect(cacheFiles()).toHaveLength(1);
    const second = engine(outdir, runArgs);
    expect(second).toMatchObject({ cache: "taken", saved: false });
    expect(withoutWall(second.out)).toEqual(sources);
    // A cache that is not one (another V8's, a torn write): refused, the same run, and made again.
    writeFileSync(join(outdir, "code-cache", cacheFiles()[0] ?? ""), "not a code cache");
    const third = engine(outdir, runArgs);
    expect(third).toMatchObject({ cache: "rejected", saved: true });
    expect(withoutWall(third.out)).toEqual(sources);
    expect(engine(outdir, runArgs).cache).toBe("taken");
  });

  it("checks scenarios as the sources do, with a cache of its own", () => {
    const args = [
      "check",
      "scenarios/happy-path.yaml",
      "scenarios/teach-no-common-version.yaml",
      "--json",
      "--no-progress",
    ];
    const built = engine(outdir, args);
    const timeless = (out: string) => out.replace(/"(wallMs|ms|seconds)": ?[0-9.]+/g, '"$1":0');
    expect(timeless(built.out)).toBe(timeless(mailscope(SOURCES, args)));
    expect(cacheFiles().some((f) => f.startsWith("check-"))).toBe(true);
  });
});

describe("which CLI bin/mailscope.mjs runs", () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "mailscope-cli-entry-"));
    mkdirSync(join(root, "app", "cli"), { recursive: true });
    mkdirSync(join(root, "dist-cli"), { recursive: true });
    for (const file of ["app/cli/main.ts", "package.json", "package-lock.json", "dist-cli/main.js"])
      writeFileSync(join(root, file), "");
    writeFileSync(join(root, "dist-cli", "inputs.json"), JSON.stringify(["app/cli/main.ts"]));
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });
  const touch = (file: string, secondsAgo: number): void => {
    const at = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(join(root, file), at, at);
  };

  it("the build when it is newer than every source it was built from", () => {
    touch("app/cli/main.ts", 60);
    touch("package.json", 60);
    touch("package-lock.json", 60);
    touch("dist-cli/main.js", 10);
    expect(cliEntry(root, undefined)).toEqual({ path: join(root, "dist-cli", "main.js"), built: true });
  });

  it("the sources when one of them changed after the build, or package.json did", () => {
    touch("dist-cli/main.js", 10);
    touch("app/cli/main.ts", 5);
    expect(cliEntry(root, undefined).built).toBe(false);
    touch("app/cli/main.ts", 60);
    touch("package.json", 5);
    expect(cliEntry(root, undefined).built).toBe(false);
  });

  it("the sources when there is no build, or MAILSCOPE_CLI says so", () => {
    touch("package.json", 60);
    expect(cliEntry(root, "sources")).toEqual({ path: join(root, "app", "cli", "main.ts"), built: false });
    expect(cliEntry(join(root, "nowhere"), undefined).built).toBe(false);
  });
});

describe("the commands a command line loads", () => {
  const all = COMMANDS.map((c) => c.name);
  it("only the one it names", () => {
    expect(commandsFor(["run", "scenarios/happy-path.yaml", "--seed", "7"])).toEqual(["run"]);
    expect(commandsFor(["help", "serve"])).toEqual(["serve"]);
    expect(commandsFor(["keygen", "--help"])).toEqual(["keygen"]);
  });
  it("none for --version, all for the program's help or a name that is not a command", () => {
    expect(commandsFor(["--version"])).toEqual([]);
    expect(commandsFor(["-V"])).toEqual([]);
    expect(commandsFor([])).toEqual(all);
    expect(commandsFor(["--help"])).toEqual(all);
    expect(commandsFor(["--version", "--help"])).toEqual(all);
    expect(commandsFor(["rnu"])).toEqual(all);
  });
});
