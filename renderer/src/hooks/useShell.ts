/**
 * What the shell says at launch: the app's version and shell (Electron or a browser), the bundled scenarios,
 * and the files opened before (kept between launches; in Electron also File ▸ Open Recent), as they change.
 */
import { useEffect, useState } from "react";
import type { AppInfo, ScenarioSummary } from "../../../main/channels.ts";
import { platform } from "../platform.ts";
import type { OpenedEntry } from "../recent.ts";

export function useShell(setError: (message: string) => void) {
  const [info, setInfo] = useState<AppInfo | undefined>();
  const [scenarios, setScenarios] = useState<ScenarioSummary[] | undefined>();
  const [opened, setOpened] = useState<OpenedEntry[]>([]);
  useEffect(() => {
    platform.info().then(setInfo, (e: unknown) => setError(String(e)));
    platform.listScenarios().then(setScenarios, (e: unknown) => setError(String(e)));
    platform.recent.list().then(setOpened, (e: unknown) => setError(String(e)));
    return platform.recent.onChange(setOpened);
  }, [setError]);
  return { info, scenarios, opened, setOpened };
}
