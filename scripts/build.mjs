// Builds what the app runs: the renderer (Vite → dist/renderer), Electron's
// main process and preload (esbuild → dist-electron/*.cjs; a sandboxed preload
// must be one CommonJS file) and the `mailscope` command (esbuild → dist-cli/,
// scripts/build-cli.mjs). `node scripts/build.mjs renderer|electron|cli` builds one.
import { build as esbuild } from "esbuild";
import { build as viteBuild } from "vite";
import { buildCli } from "./build-cli.mjs";

const only = process.argv[2];

if (only === undefined || only === "renderer") {
  await viteBuild({ configFile: "vite.config.ts", logLevel: "warn" });
}
if (only === undefined || only === "electron") {
  const common = {
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    sourcemap: true,
    external: ["electron"],
    logLevel: "warning",
  };
  await esbuild({ ...common, entryPoints: ["main/main.ts"], outfile: "dist-electron/main.cjs" });
  await esbuild({ ...common, entryPoints: ["main/preload.ts"], outfile: "dist-electron/preload.cjs" });
}
if (only === undefined || only === "cli") {
  await buildCli();
}
