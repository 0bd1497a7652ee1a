// postinstall: fetch Electron's binary where the machine can (Electron 45 no
// longer does it from its own install script). Never fails the install: where
// the binary cannot be had, `npm start` serves the UI in the browser instead.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const installer = "node_modules/electron/install.js";
if (existsSync(installer) && !process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  const run = spawnSync(process.execPath, [installer], { encoding: "utf8" });
  if (run.status !== 0) {
    const why = `${run.stderr ?? ""}${run.stdout ?? ""}`.trim().split("\n").pop() || `exit ${run.status}`;
    console.log(
      `mailscope: Electron's binary is not available here (${why}); npm start will serve the UI in the browser.`,
    );
  }
}
