// Builds what the app runs: the renderer (Vite → dist/renderer) and Electron's
// main process and preload (esbuild → dist-electron/*.cjs; a sandboxed preload
// must be one CommonJS file).
import { build as esbuild } from "esbuild";
import { build as viteBuild } from "vite";

const only = process.argv[2];

if (only !== "electron") {
  await viteBuild({ configFile: "vite.config.ts", logLevel: "warn" });
}
if (only !== "renderer") {
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
