import { playwright } from "@vitest/browser-playwright";
import { existsSync } from "node:fs";
import { defineConfig } from "vitest/config";

const chromium =
  process.env["MAILSCOPE_CHROMIUM"] ?? (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);

/**
 * Unit tests. Every test runs in Node; the files listed under `browser` run a
 * second time in Chromium, to show that the core runs unchanged on web APIs.
 */
export const browserTestFiles = [
  "app/protocol/signature.test.ts",
  "app/protocol/digest.test.ts",
  "app/protocol/multipart.test.ts",
  "app/protocol/mailbox.test.ts",
  "app/protocol/profile.test.ts",
  "app/protocol/dsn.test.ts",
  "app/protocol/resources.test.ts",
  "app/protocol/errors.test.ts",
  "app/protocol/versions.test.ts",
  "app/protocol/svcb.test.ts",
  "app/receiver/signatureAttacks.test.ts",
  "app/receiver/idempotency.test.ts",
  "app/sender/deliveryMachine.test.ts",
  "app/sim/determinism.test.ts",
  "app/sim/sessionWorker.test.ts",
  "app/protocol/sha256.test.ts",
];

/**
 * A test's timeout is there to end a hang, not to time the machine: on a shared 2-core machine
 * running the whole suite, a CPU-bound test (a property run, ESLint's first lint) takes several times
 * what it takes alone, and the 5 s default turned such tests red with nothing wrong (issue 18).
 * What a test checks never rests on how fast it runs; tests that are about time use the virtual clock.
 */
const TEST_TIMEOUT_MS = 60_000;

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: TEST_TIMEOUT_MS,
          include: [
            "app/**/*.test.ts",
            "renderer/**/*.test.{ts,tsx}",
            "main/**/*.test.ts",
            "scripts/**/*.test.ts",
            "*.test.ts",
          ],
        },
      },
      {
        test: {
          name: "chromium",
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: TEST_TIMEOUT_MS,
          include: browserTestFiles,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
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
            }),
            instances: [{ browser: "chromium" }],
          },
        },
      },
    ],
  },
});
