// @ts-check
// Lint, with the layer lines of the README's "Layout" per folder (after VS
// Code's code-import-patterns): the folder says what a file may import, and
// every file falls under one of these rules.
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

const nodeBuiltins = [
  "assert",
  "async_hooks",
  "buffer",
  "child_process",
  "cluster",
  "console",
  "constants",
  "crypto",
  "dgram",
  "diagnostics_channel",
  "dns",
  "domain",
  "events",
  "fs",
  "fs/promises",
  "http",
  "http2",
  "https",
  "inspector",
  "module",
  "net",
  "os",
  "path",
  "perf_hooks",
  "process",
  "punycode",
  "querystring",
  "readline",
  "repl",
  "stream",
  "string_decoder",
  "sys",
  "timers",
  "tls",
  "trace_events",
  "tty",
  "url",
  "util",
  "v8",
  "vm",
  "wasi",
  "worker_threads",
  "zlib",
];

const electron = { group: ["electron", "electron/*"], message: "Only main/ imports Electron." };
const react = {
  group: ["react", "react/*", "react-dom", "react-dom/*", "@xstate/react", "recharts"],
  message: "Only renderer/ imports React.",
};
const node = {
  group: ["node:*", ...nodeBuiltins],
  message: "The core (app/) uses web-standard APIs only; Node modules belong in app/node/ or app/cli/.",
};
const coreToEdges = {
  regex: "(^|/)(node|cli)/|(^|/)\\.\\./(main|renderer)/",
  message: "The core may not import app/node, app/cli, main/ or renderer/.",
};
const rendererToNode = {
  regex: "app/(node|cli)/|main/(?!(channels|commandTable)\\.ts$)",
  message:
    "The renderer may import the core and, of main/, only channels.ts (the IPC's types) and commandTable.ts (the commands as plain data).",
};

/**
 * The layers inside the core, lowest first: protocol ← trace ← receiver, sender ← sim ← node, cli. A folder
 * imports the folders below it (and app/ports.ts), never one above; receiver and sender are one layer. Tests
 * and test helpers may reach up (a trace test runs a scenario).
 */
const CORE_LAYERS = [
  { folders: ["protocol"], above: ["trace", "receiver", "sender", "sim"] },
  { folders: ["trace"], above: ["receiver", "sender", "sim"] },
  { folders: ["receiver", "sender"], above: ["sim"] },
];
/** @param {readonly string[]} above */
const upward = (above) => ({
  regex: `^(\\.\\./)+(${above.join("|")})/`,
  message: `A core layer imports only the layers below it (protocol ← trace ← receiver, sender ← sim ← node, cli): not ${above.join(", ")}.`,
});

/** React and the UI libraries, which the renderer's model (pure functions of the trace) does without. */
const reactInModel = {
  group: [...react.group, "**/*.tsx"],
  message: "renderer/src/model is pure functions of the trace: no React, no component (views/ draws).",
};

/** The core's own discipline: deterministic, platform-free. */
const coreSyntax = [
  {
    selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
    message: "No wall clock in the core: take time from the Clock port.",
  },
  {
    selector: "NewExpression[callee.name='Date'][arguments.length=0]",
    message: "No wall clock in the core: take time from the Clock port.",
  },
  {
    selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
    message: "No Math.random in the core: take randomness from the Random port.",
  },
];

/**
 * A list spread into a call passes one argument per item on the stack: from some 100,000 items the engine
 * throws "Maximum call stack size exceeded" (issue 23: `mailscope run` of 10,000 messages). Where the list
 * can be long, loop: maxOf, minOf, pushAll (app/protocol/lists.ts), bytesToBinary (app/protocol/base64.ts),
 * failWith (app/protocol/result.ts). Everywhere, tests and tools included.
 */
const unboundedSpread = [
  {
    selector: "CallExpression[callee.object.name=/^(Math|String)$/] > SpreadElement",
    message:
      "A list spread into Math.* or String.* overflows the stack when long: use maxOf/minOf (app/protocol/lists.ts) or bytesToBinary (app/protocol/base64.ts).",
  },
  {
    selector: "CallExpression[callee.property.name=/^(push|unshift|splice|concat|of)$/] > SpreadElement",
    message:
      "A list spread into push/unshift/splice/concat/of overflows the stack when long: use pushAll (app/protocol/lists.ts) or a loop.",
  },
  {
    selector: "CallExpression[callee.name='fail'] > SpreadElement",
    message: "A list spread into fail(...) overflows the stack when long: use failWith(list) (app/protocol/result.ts).",
  },
];

/** WebCrypto only through app/protocol/webCrypto.ts, so the simulator can wait for it (tests may call it freely). */
const coreCrypto = [
  {
    selector: "MemberExpression[object.name='crypto'][property.name='subtle']",
    message: "Use `subtle` from app/protocol/webCrypto.ts: the simulator must see every WebCrypto operation.",
  },
  {
    selector: "MemberExpression[object.name='globalThis'][property.name='crypto']",
    message: "Use `subtle` from app/protocol/webCrypto.ts: the simulator must see every WebCrypto operation.",
  },
];

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "dist-electron/**",
      "dist-cli/**",
      "release/**",
      "node_modules/**",
      "tools/**",
      ".reports/**",
      "test-results/**",
      "playwright-report/**",
      "coverage/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
    },
  },
  { rules: { "no-restricted-syntax": ["error", ...unboundedSpread] } },
  // The pure core.
  {
    files: ["app/**/*.ts"],
    ignores: ["app/node/**", "app/cli/**"],
    languageOptions: { globals: { ...globals.worker } },
    rules: {
      "no-restricted-imports": ["error", { patterns: [electron, react, node, coreToEdges] }],
      "no-restricted-globals": [
        "error",
        "process",
        "Buffer",
        "require",
        "__dirname",
        "__filename",
        "global",
        "setImmediate",
        "document",
        "window",
      ],
      "no-restricted-syntax": ["error", ...coreSyntax, ...unboundedSpread],
    },
  },
  {
    files: ["app/**/*.ts"],
    ignores: ["app/node/**", "app/cli/**", "app/**/*.test.ts"],
    rules: { "no-restricted-syntax": ["error", ...coreSyntax, ...coreCrypto, ...unboundedSpread] },
  },
  // The layers inside the core.
  ...CORE_LAYERS.map(({ folders, above }) => ({
    files: folders.map((f) => `app/${f}/**/*.ts`),
    ignores: ["app/**/*.test.ts", "app/**/testing.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [electron, react, node, coreToEdges, upward(above)] }],
    },
  })),
  // Node adapters and the command line.
  {
    files: ["app/node/**/*.ts", "app/cli/**/*.ts"],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            electron,
            react,
            { regex: "(^|/)\\.\\./(\\.\\./)?(main|renderer)/", message: "app/ may not import main/ or renderer/." },
          ],
        },
      ],
    },
  },
  // Electron's main process and preload.
  {
    files: ["main/**/*.ts"],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [react, { regex: "renderer/", message: "main/ may not import the renderer." }] },
      ],
    },
  },
  // The React renderer.
  {
    files: ["renderer/**/*.{ts,tsx}"],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "no-restricted-imports": ["error", { patterns: [electron, node, rendererToNode] }],
    },
  },
  // The renderer's model: view data from trace events, tested in Node.
  {
    files: ["renderer/src/model/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            electron,
            node,
            rendererToNode,
            reactInModel,
            { regex: "(^|/)views/", message: "renderer/src/model does not import the views: they draw what it makes." },
          ],
        },
      ],
    },
  },
  // A function fits on a few screens: one idea, split by idea when it grows (#28, decision 0145). Tests (lists
  // of cases) are exempt; so is an XState setup object that reads as the spec's table (none exceeds it today).
  {
    files: ["app/**/*.ts", "renderer/**/*.{ts,tsx}", "main/**/*.ts"],
    ignores: ["**/*.test.ts", "**/*.test.tsx"],
    rules: {
      "max-lines-per-function": ["error", { max: 200, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  // Tools, tests and configs outside the app: Node, but neither Electron nor React.
  {
    files: ["scripts/**/*.{ts,mjs,js}", "e2e/**/*.ts", "bench/**/*.ts", "bin/**/*.mjs", "*.{js,mjs,ts}"],
    languageOptions: { globals: { ...globals.node } },
    rules: { "no-restricted-imports": ["error", { patterns: [electron, react] }] },
  },
);
