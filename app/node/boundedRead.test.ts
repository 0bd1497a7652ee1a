/**
 * Issue 16: every file a command reads is read with a limit — `/dev/zero`, a
 * FIFO that never ends, a huge file are refused after at most limit + 1
 * bytes, with the file and the limit named.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileTooLargeError, READ_LIMITS, readBounded, readBoundedText, readErrorReason } from "./boundedRead.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-bounded-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readBounded (issue 16: unbounded reads of files)", () => {
  it("reads a file up to its limit, and exactly the limit", async () => {
    const file = join(dir, "ten.txt");
    await writeFile(file, "0123456789");
    expect(await readBoundedText(file, "keys")).toBe("0123456789");
    expect((await readBounded(file, "test files", 10)).length).toBe(10);
  });

  it("refuses a regular file over the limit without reading it, naming the file and the limit", async () => {
    const file = join(dir, "eleven.txt");
    await writeFile(file, "0123456789X");
    await expect(readBounded(file, "test files", 10)).rejects.toThrow(
      `${file}: larger than 10 bytes (the limit for test files)`,
    );
  });

  it("stops reading /dev/zero one byte past the limit of keys", async () => {
    const error: unknown = await readBounded("/dev/zero", "keys").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileTooLargeError);
    expect((error as Error).message).toBe(`/dev/zero: larger than ${READ_LIMITS.keys} bytes (the limit for keys)`);
    expect(readErrorReason(error)).toBe(`larger than ${READ_LIMITS.keys} bytes (the limit for keys)`);
  });

  it("stops reading /dev/zero at the message limit (100 MiB), reading piece by piece", async () => {
    await expect(readBounded("/dev/zero", "messages")).rejects.toThrow(
      "/dev/zero: larger than 104857600 bytes (the limit for messages)",
    );
  });

  it("reads a FIFO as it comes, and stops one that goes on past the limit", async () => {
    const fifo = join(dir, "pipe");
    execFileSync("mkfifo", [fifo]);
    // A writer that would write forever: `yes` into the FIFO; the reader stops at the limit and closes it.
    const writer = spawn("sh", ["-c", `yes > '${fifo}'`], { stdio: "ignore" });
    try {
      await expect(readBounded(fifo, "configurations")).rejects.toThrow(
        `${fifo}: larger than ${READ_LIMITS.configurations} bytes (the limit for configurations)`,
      );
    } finally {
      writer.kill();
    }
    const short = spawn("sh", ["-c", `printf 'hello' > '${fifo}'`], { stdio: "ignore" });
    expect(await readBoundedText(fifo, "keys")).toBe("hello");
    short.kill();
  });

  it("says why a file cannot be read in words", async () => {
    expect(readErrorReason(await readBounded(join(dir, "none"), "keys").catch((e: unknown) => e))).toBe("no such file");
    expect(readErrorReason(await readBounded(dir, "keys").catch((e: unknown) => e))).toBe("it is a folder");
  });
});
