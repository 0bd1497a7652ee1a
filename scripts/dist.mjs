// @ts-check
// `npm run dist`: builds the app and packages it with electron-builder (electron-builder.yml) for
// this system, on Linux, macOS and Windows alike (a Node script: Windows needs no bash). Arguments go to
// electron-builder, e.g. offline with an unpacked Electron of the pinned version:
//   npm run dist -- -c.electronDist=/opt/electron-45.4.1
import { join } from "node:path";
import { projectEnvironment, ROOT, runNodeScript } from "./project-env.mjs";

const args = process.argv.slice(2);
const env = projectEnvironment(import.meta.url, args);
if ("exit" in env) process.exit(env.exit);
runNodeScript(join(ROOT, "scripts", "build.mjs"));
runNodeScript(join(ROOT, "node_modules", "electron-builder", "cli.js"), [
  "--config",
  "electron-builder.yml",
  "--publish",
  "never",
  ...args,
]);
