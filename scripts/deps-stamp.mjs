// @ts-check
// The stamp of the installed dependencies: the SHA-256 of package-lock.json and the Node version they
// were installed for. scripts/env.sh (Linux, macOS) and scripts/start.mjs (Windows) compare it with
// node_modules/.mailscope-lock and run `npm ci` when it differs. Run as a script, it prints it.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * @param {string} root the project's folder
 * @param {string} nodeVersion `process.version` of the Node that installs and runs them
 */
export function dependencyStamp(root, nodeVersion) {
  return createHash("sha256")
    .update(readFileSync(join(root, "package-lock.json")))
    .update(nodeVersion)
    .digest("hex");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.stdout.write(dependencyStamp(fileURLToPath(new URL("..", import.meta.url)), process.version));
