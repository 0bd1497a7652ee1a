/**
 * Every file a command reads is read with a limit — `/dev/zero`, a
 * FIFO that never ends, a huge file are refused after at most limit + 1
 * bytes, with the file and the limit named.
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FileTooLargeError,
  NotRegularFileError,
  READ_LIMITS,
  readBounded,
  readBoundedRegular,
  readBoundedText,
  readErrorReason,
} from "./boundedRead.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mailscope-bounded-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readBounded (unbounded reads of files)", () => {
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
    // A writer that would write forever: `yes` into the FIFO (exec'd, so that the process killed is `yes` itself);
    // the reader stops at the limit and closes it.
    const writer = spawn("sh", ["-c", `exec yes > '${fifo}'`], { stdio: "ignore" });
    const writerGone = once(writer, "exit");
    try {
      await expect(readBounded(fifo, "configurations")).rejects.toThrow(
        `${fifo}: larger than ${READ_LIMITS.configurations} bytes (the limit for configurations)`,
      );
    } finally {
      writer.kill();
    }
    // Gone before the FIFO is opened again: a writer still holding it open would write into the next reader's pipe
    // (`yes` lines ahead of "hello": the likely cause of the one failure of this test seen under load).
    await writerGone;
    const short = spawn("sh", ["-c", `printf 'hello' > '${fifo}'`], { stdio: "ignore" });
    expect(await readBoundedText(fifo, "keys")).toBe("hello");
    short.kill();
  });

  it("says why a file cannot be read in words", async () => {
    expect(readErrorReason(await readBounded(join(dir, "none"), "keys").catch((e: unknown) => e))).toBe("no such file");
    expect(readErrorReason(await readBounded(dir, "keys").catch((e: unknown) => e))).toBe("it is a folder");
  });
});

describe("readBoundedRegular (files a document names: regular files only)", () => {
  it("reads a regular file as readBounded does, up to its limit", async () => {
    const file = join(dir, "regular.eml");
    await writeFile(file, "Subject: hi\r\n\r\nbody\r\n");
    expect((await readBoundedRegular(file, "messages")).toString("utf8")).toBe("Subject: hi\r\n\r\nbody\r\n");
    await expect(readBoundedRegular(file, "test files", 5)).rejects.toThrow(
      `${file}: larger than 5 bytes (the limit for test files)`,
    );
  });

  it("refuses a FIFO with no writer at once: the open does not wait for one, and nothing is read", async () => {
    const fifo = join(dir, "lonely-pipe");
    execFileSync("mkfifo", [fifo]);
    // No writer is ever started: a blocking open would wait forever; this one returns and refuses it.
    const error: unknown = await readBoundedRegular(fifo, "messages").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotRegularFileError);
    expect((error as Error).message).toBe(`${fifo}: not a regular file (it is a FIFO)`);
    expect(readErrorReason(error)).toBe("not a regular file (it is a FIFO)");
  });

  it("refuses a device and a folder", async () => {
    expect(readErrorReason(await readBoundedRegular("/dev/zero", "messages").catch((e: unknown) => e))).toBe(
      "not a regular file (it is a device)",
    );
    expect(readErrorReason(await readBoundedRegular(dir, "messages").catch((e: unknown) => e))).toBe(
      "not a regular file (it is a folder)",
    );
  });

  it("refuses a file one byte over the message limit (100 MiB) from its size, without reading it", async () => {
    const file = join(dir, "huge.eml");
    await writeFile(file, "");
    await truncate(file, READ_LIMITS.messages + 1); // sparse: no 100 MiB written
    await expect(readBoundedRegular(file, "messages")).rejects.toThrow(
      `${file}: larger than 104857600 bytes (the limit for messages)`,
    );
  });
});
