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
  build: { outDir: "../dist/renderer", emptyOutDir: true, sourcemap: true },
  server: { port: 5173, strictPort: false, fs: { allow: [".."] } },
  preview: { port: 5173, strictPort: false },
  worker: { format: "es" },
});
