import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

// The layer lines of the README's "Layout", shown by linting small snippets as if they
// stood in each folder: the build fails on a wrong import.
const eslint = new ESLint({ cwd: process.cwd() });

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe("the lint config enforces the layers", () => {
  it.each([
    ['import { app } from "electron";\nexport const a = app;\n'],
    ['import { useState } from "react";\nexport const s = useState;\n'],
    ['import { readFile } from "node:fs/promises";\nexport const r = readFile;\n'],
    ['import { createHash } from "crypto";\nexport const h = createHash;\n'],
    ['import { listScenarioFiles } from "../node/scenarioFiles.ts";\nexport const l = listScenarioFiles;\n'],
  ])("the core (app/protocol) refuses %s", async (code) => {
    expect(await ruleIds("app/protocol/example.ts", code)).toContain("no-restricted-imports");
  });

  it("the explorer (app/explore) is core too: no Node modules, no wall clock", async () => {
    const ids = await ruleIds(
      "app/explore/example.ts",
      'import { cpus } from "node:os";\nexport const n = cpus().length + Date.now();\n',
    );
    expect(ids).toContain("no-restricted-imports");
    expect(ids).toContain("no-restricted-syntax");
  });

  it.each([
    ["app/protocol/example.ts", 'import { formatOffset } from "../trace/offset.ts";'],
    ["app/protocol/example.ts", 'import { createReceiver } from "../receiver/handler.ts";'],
    ["app/trace/example.ts", 'import { MAX_MESSAGE_BYTES } from "../sim/scenario.ts";'],
    ["app/trace/example.ts", 'import { createSender } from "../sender/sender.ts";'],
    ["app/receiver/example.ts", 'import { runScenarioText } from "../sim/runScenario.ts";'],
    ["app/sender/deep/example.ts", 'import { runScenarioText } from "../../sim/runScenario.ts";'],
  ])("the core's layers (protocol ← trace ← receiver, sender ← sim): %s refuses %s", async (file, line) => {
    expect(await ruleIds(file, `${line}\nexport const x = 1;\n`)).toContain("no-restricted-imports");
  });

  it.each([
    ["app/trace/example.ts", 'import { parseMailbox } from "../protocol/mailbox.ts";'],
    ["app/sender/example.ts", 'import { formatOffset } from "../trace/offset.ts";'],
    ["app/sender/example.ts", 'import { createReceiver } from "../receiver/handler.ts";'],
    ["app/sim/example.ts", 'import { createSender } from "../sender/sender.ts";'],
    ["app/trace/example.test.ts", 'import { runScenarioText } from "../sim/runScenario.ts";'],
  ])("a layer imports those below it, one layer its peer, a test any: %s may %s", async (file, line) => {
    expect(await ruleIds(file, `${line}\nexport const x = 1;\n`)).not.toContain("no-restricted-imports");
  });

  it("the core refuses the wall clock and Math.random", async () => {
    const ids = await ruleIds(
      "app/sim/example.ts",
      "export const t = Date.now() + Math.random() + new Date().getTime();\n",
    );
    expect(ids.filter((id) => id === "no-restricted-syntax")).toHaveLength(3);
  });

  it("the core reaches WebCrypto only through app/protocol/webCrypto.ts", async () => {
    const ids = await ruleIds(
      "app/sender/example.ts",
      "export const d = crypto.subtle.digest('SHA-256', new Uint8Array());\n",
    );
    expect(ids).toContain("no-restricted-syntax");
  });

  it("the core refuses Node globals", async () => {
    expect(await ruleIds("app/protocol/example.ts", "export const b = Buffer.from('x');\n")).toContain(
      "no-restricted-globals",
    );
  });

  it("app/node may import node: modules but not Electron or React", async () => {
    expect(
      await ruleIds(
        "app/node/example.ts",
        'import { readFile } from "node:fs/promises";\nexport const r = readFile;\n',
      ),
    ).toEqual([]);
    expect(await ruleIds("app/node/example.ts", 'import { app } from "electron";\nexport const a = app;\n')).toContain(
      "no-restricted-imports",
    );
  });

  it("only main/ imports Electron; main may not import React", async () => {
    expect(await ruleIds("main/example.ts", 'import { app } from "electron";\nexport const a = app;\n')).toEqual([]);
    expect(
      await ruleIds("main/example.ts", 'import { useState } from "react";\nexport const s = useState;\n'),
    ).toContain("no-restricted-imports");
    expect(
      await ruleIds(
        "renderer/src/example.ts",
        'import { ipcRenderer } from "electron";\nexport const i = ipcRenderer;\n',
      ),
    ).toContain("no-restricted-imports");
  });

  it("the renderer's model is React-free: no React, no UI library, no view", async () => {
    for (const line of [
      'import { useMemo } from "react";',
      'import { LineChart } from "recharts";',
      'import { TimelineView } from "../views/timeline/TimelineView.tsx";',
    ])
      expect(await ruleIds("renderer/src/model/example.ts", `${line}\nexport const x = 1;\n`), line).toContain(
        "no-restricted-imports",
      );
    expect(
      await ruleIds(
        "renderer/src/model/example.ts",
        'import { formatOffset } from "../../../app/trace/offset.ts";\nexport const x = 1;\n',
      ),
    ).not.toContain("no-restricted-imports");
  });

  it("of main/, the renderer imports the IPC's types and the command table only (plain data), not the menu", async () => {
    for (const file of ["channels.ts", "commandTable.ts"])
      expect(
        await ruleIds("renderer/src/example.ts", `import * as m from "../../main/${file}";\nexport const x = m;\n`),
        file,
      ).toEqual([]);
    expect(
      await ruleIds(
        "renderer/src/example.ts",
        'import { menuTemplate } from "../../main/menu.ts";\nexport const m = menuTemplate;\n',
      ),
    ).toContain("no-restricted-imports");
  });

  it("the renderer imports React and the core, but neither Node nor app/node", async () => {
    expect(
      await ruleIds("renderer/src/example.tsx", 'import { useState } from "react";\nexport const s = useState;\n'),
    ).toEqual([]);
    expect(
      await ruleIds("renderer/src/example.ts", 'import { readFile } from "node:fs";\nexport const r = readFile;\n'),
    ).toContain("no-restricted-imports");
    expect(
      await ruleIds(
        "renderer/src/example.ts",
        'import { listScenarioFiles } from "../../app/node/scenarioFiles.ts";\nexport const l = listScenarioFiles;\n',
      ),
    ).toContain("no-restricted-imports");
  });
});

describe("no list spread into a call that takes one argument per item (issue 23)", () => {
  const spreads = [
    "export const m = Math.max(...xs);\n",
    "export const m = Math.min(0, ...xs);\n",
    "out.push(...xs);\n",
    "out.unshift(...xs);\n",
    "export const s = String.fromCharCode(...bytes);\n",
    "export const s = String.fromCodePoint(...points);\n",
    "export const b = Uint8Array.of(...bytes);\n",
    "export const f = fail(...violations);\n",
  ];
  const preamble =
    "declare const xs: number[], bytes: Uint8Array, points: number[], violations: never[];\n" +
    "declare const out: number[];\ndeclare function fail(...v: never[]): unknown;\n";
  it.each([
    "app/sim/example.ts",
    "app/node/example.ts",
    "app/sim/example.test.ts",
    "renderer/src/example.tsx",
    "scripts/example.ts",
    "main/example.ts",
  ])("%s refuses each of them", async (file) => {
    for (const code of spreads) {
      expect(await ruleIds(file, preamble + code), code).toContain("no-restricted-syntax");
    }
  });

  it("a spread into other calls, arrays and objects is allowed", async () => {
    const code =
      "declare const xs: number[];\ndeclare function f(...a: number[]): number;\n" +
      "export const a = [...xs];\nexport const b = f(...xs);\nexport const c = { ...xs };\n";
    expect(await ruleIds("app/sim/example.ts", code)).toEqual([]);
  });
});

describe("a function stays under 200 lines (#28)", () => {
  const body = (lines: number) =>
    `export function big(): number {\n  let n = 0;\n${"  n++;\n".repeat(lines - 4)}  return n;\n}\n`;

  it.each(["app/sim/example.ts", "renderer/src/model/example.ts", "renderer/src/views/Example.tsx", "main/example.ts"])(
    "%s refuses a function of 201 lines and takes one of 200",
    async (file) => {
      expect(await ruleIds(file, body(201))).toContain("max-lines-per-function");
      expect(await ruleIds(file, body(200))).not.toContain("max-lines-per-function");
    },
  );

  it("a test (a list of cases) may be longer", async () => {
    expect(await ruleIds("app/sim/example.test.ts", body(400))).not.toContain("max-lines-per-function");
  });
});
