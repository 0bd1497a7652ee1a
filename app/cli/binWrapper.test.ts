import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";

/**
 * bin/mailscope.mjs under a Node too old to strip types re-runs the command
 * under the pinned Node. The tests run it with such a Node when the machine
 * has one on its PATH (as this project's machines do: Node 20), else with
 * this Node and `MAILSCOPE_REEXEC=1`, which makes it take the same path.
 */
const BIN = fileURLToPath(new URL("../../bin/mailscope.mjs", import.meta.url));

/** A `node` on the PATH that cannot strip types (older than 22.18), if any. */
function oldNode(): string | undefined {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    const candidate = join(dir, "node");
    try {
      const [major = 0, minor = 0] = execFileSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" })
        .trim()
        .split(".")
        .map(Number);
      if (major < 22 || (major === 22 && minor < 18)) return candidate;
    } catch {
      // Not there, or not a Node.
    }
  }
  return undefined;
}

const OLD_NODE = oldNode();

let dir: string;
let config: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-bin-"));
  config = join(dir, "receiver.yaml");
  await writeFile(
    config,
    "domains: [b.example]\ncapabilities:\n  max_message_size: 26214400\nproblem_base: https://b.example/p\n",
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly out: () => string;
  readonly err: () => string;
}

function run(args: readonly string[], options: { detached?: boolean } = {}): Run {
  const child = spawn(OLD_NODE ?? process.execPath, [BIN, ...args], {
    env: { ...process.env, ...(OLD_NODE === undefined && { MAILSCOPE_REEXEC: "1" }) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
  });
  // A test that fails leaves nothing running: the wrapper passes SIGTERM on to the command.
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, out: () => out, err: () => err };
}

/** `serve` through the wrapper, on a free port; resolves once its banner names the port. */
async function serveThroughWrapper(
  name: string,
  options: { detached?: boolean } = {},
): Promise<Run & { port: number }> {
  const r = run(
    [
      "serve",
      "--config",
      config,
      "--port",
      "0",
      "--no-dns",
      "--maildir",
      join(dir, name, "mail"),
      "--state",
      join(dir, name, "state"),
    ],
    options,
  );
  const port = await new Promise<number>((resolve, reject) => {
    const look = (): void => {
      const found = /mailscope serve: https:\/\/127\.0\.0\.1:(\d+) /.exec(r.out());
      if (found !== null) {
        r.child.stdout?.off("data", look);
        resolve(Number(found[1]));
      }
    };
    r.child.stdout?.on("data", look);
    void r.exited.then(({ code }) => reject(new Error(`serve exited (${code}) before listening: ${r.err()}`)));
  });
  return { ...r, port };
}

/** Whether something accepts TCP connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

// Each test starts Node twice (the wrapper, then the command), and serve makes a certificate: generous on a busy machine.
describe("bin/mailscope.mjs re-running under the pinned Node", { timeout: 60_000 }, () => {
  it("exits with the command's status (2 for bad input)", async () => {
    const r = run(["serve", "--config", join(dir, "missing.yaml")]);
    expect((await r.exited).code).toBe(2);
    expect(r.err()).toContain("missing.yaml");
  });

  it("SIGTERM to the wrapper stops serve too: the port is released and the wrapper exits 0", async () => {
    const r = await serveThroughWrapper("term");
    expect(await listening(r.port)).toBe(true);
    r.child.kill("SIGTERM");
    expect(await r.exited).toEqual({ code: 0, signal: null });
    expect(r.err()).toContain("SIGTERM: stopping");
    expect(await listening(r.port)).toBe(false);
  });

  it("Ctrl-C (SIGINT to the wrapper's whole process group) reaches serve once: a graceful stop, no cut", async () => {
    const r = await serveThroughWrapper("int", { detached: true });
    process.kill(-(r.child.pid as number), "SIGINT");
    expect((await r.exited).code).toBe(0);
    expect(r.err()).toContain("SIGINT: stopping");
    expect(r.err()).not.toContain("cutting every connection");
    expect(await listening(r.port)).toBe(false);
  });

  it("a child killed by a signal ends the wrapper by the same signal", async () => {
    const s = await serveThroughWrapper("kill");
    // The command re-run under the pinned Node: the wrapper's only child.
    const childPid = Number(
      execFileSync("pgrep", ["-P", String(s.child.pid)])
        .toString()
        .trim()
        .split("\n")[0],
    );
    process.kill(childPid, "SIGKILL");
    expect(await s.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(await listening(s.port)).toBe(false);
  });
});
