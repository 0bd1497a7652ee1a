// Writing a generated file, or (with --check) failing when it is out of date:
// shared by the gen-*.ts scripts, which npm test runs with --check.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Writes `text` to `file` (relative to the repository root), or, when the
 * command line has `--check`, leaves it alone and sets exit code 1 if it
 * differs, naming the script that regenerates it.
 */
export function writeGenerated(file: string, text: string, script: string): void {
  const path = join(root, file);
  const current = existsSync(path) ? readFileSync(path, "utf8") : undefined;
  if (process.argv.includes("--check")) {
    if (current !== text) {
      console.error(`${file} is out of date: run \`node ${relative(root, fileURLToPath(script))}\`.`);
      process.exitCode = 1;
    }
    return;
  }
  mkdirSync(dirname(path), { recursive: true });
  if (current !== text) writeFileSync(path, text);
  console.log(`wrote ${file}`);
}
