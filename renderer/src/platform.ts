import { summarizeScenario } from "../../app/sim/scenarioSummary.ts";
import type { AppInfo, PreloadApi, ScenarioSummary } from "../../main/channels.ts";

declare global {
  interface Window {
    /** Present only inside the Electron shell (the preload's API). */
    readonly mailscope?: PreloadApi;
  }
}

/** What the UI needs from whichever shell it runs in: Electron or a plain browser. */
export interface Platform {
  info(): Promise<AppInfo>;
  listScenarios(): Promise<ScenarioSummary[]>;
}

// In the browser the scenario library is bundled at build time.
const bundledScenarios = import.meta.glob<string>("../../scenarios/*.{yaml,yml}", {
  query: "?raw",
  import: "default",
  eager: true,
});

const browserPlatform: Platform = {
  info: async () => ({ name: "Mailscope", version: __MAILSCOPE_VERSION__, shell: "browser" }),
  listScenarios: async () =>
    Object.entries(bundledScenarios)
      .map(([path, text]) => summarizeScenario(path.slice(path.lastIndexOf("/") + 1), text))
      .sort((a, b) => a.file.localeCompare(b.file)),
};

function electronPlatform(api: PreloadApi): Platform {
  return { info: () => api.appInfo(), listScenarios: () => api.scenariosList() };
}

/** The platform of this window: Electron when the preload ran, else the browser. */
export const platform: Platform = window.mailscope ? electronPlatform(window.mailscope) : browserPlatform;
