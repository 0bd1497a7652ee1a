import { defineConfig } from "@playwright/test";
import { existsSync } from "node:fs";

/**
 * End-to-end tests. The UI runs from the browser build (dist/renderer, served
 * by `vite preview`) in Debian's Chromium; the Electron test launches the
 * desktop app itself and skips where Electron's binary is absent.
 */
const chromium =
  process.env["MAILSCOPE_CHROMIUM"] ?? (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);
// MAILSCOPE_E2E_PORT lets two checkouts run their end-to-end tests at once.
const port = Number(process.env["MAILSCOPE_E2E_PORT"] ?? 4179);

export default defineConfig({
  testDir: "e2e",
  // Time limits end hangs; they do not time the machine (a shared 2-core machine can be slow for minutes).
  timeout: 180_000,
  expect: { timeout: 30_000 },
  retries: 0,
  workers: 2,
  reporter: "list",
  use: {
    baseURL: `http://127.0.0.1:${port}/`,
    launchOptions: {
      ...(chromium ? { executablePath: chromium } : {}),
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  projects: [
    { name: "chromium", testIgnore: /electron\.spec\.ts$/, use: { browserName: "chromium" } },
    { name: "electron", testMatch: /electron\.spec\.ts$/ },
    // The README's pictures: only for `npm run screenshots` (it writes tracked files; `npm test` never does).
    ...(process.env["MAILSCOPE_README_SCREENSHOTS"] === "1"
      ? [{ name: "readme", testMatch: /readme\.screenshots\.ts$/, use: { browserName: "chromium" as const } }]
      : []),
  ],
  webServer: {
    command: `vite preview --config vite.config.ts --host 127.0.0.1 --port ${port} --strictPort`,
    url: `http://127.0.0.1:${port}/`,
    reuseExistingServer: false,
    timeout: 60_000,
  },
});
