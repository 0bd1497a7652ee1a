import react from "@vitejs/plugin-react";
import { readFileSync } from "node:fs";
import { defineConfig } from "vite";

const { version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string };

/** The renderer, built for Electron (file://, hence the relative base) and for the browser. */
export default defineConfig({
  root: "renderer",
  base: "./",
  plugins: [react()],
  define: { __MAILSCOPE_VERSION__: JSON.stringify(version) },
  build: {
    outDir: "../dist/renderer",
    emptyOutDir: true,
    sourcemap: true,
    rolldownOptions: {
      output: {
        // zod and noEval.ts (which makes zod jitless) in one chunk of their own: every chunk that builds a zod
        // schema imports it, so zod is jitless before any schema is built, however the other modules are split.
        // (Left to itself, the bundler put zod with the scenario parser in a chunk the page imports before its
        // own code, noEval's included, and the page's CSP reported the eval zod probes.)
        codeSplitting: {
          groups: [{ name: "zod", test: /node_modules[\\/]zod[\\/]|renderer[\\/]src[\\/]noEval\.ts$/ }],
        },
      },
    },
  },
  server: { port: 5173, strictPort: false, fs: { allow: [".."] } },
  preview: { port: 5173, strictPort: false },
  worker: { format: "es" },
});
