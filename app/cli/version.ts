/**
 * The version of this Mailscope (package.json's), for `--version` and traces.
 * Imported as JSON so that the built CLI (dist-cli, scripts/build.mjs) carries
 * it inside the bundle instead of reading package.json from a path relative to
 * a file that moved.
 */
import pkg from "../../package.json" with { type: "json" };

export const MAILSCOPE_VERSION: string = typeof pkg.version === "string" ? pkg.version : "0.0.0-unknown";
