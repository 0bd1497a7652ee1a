/**
 * The run's exports: "with message bodies", for every export of the run (the export bar's and File ▸
 * Export's), the export itself, and what it left out, said under the export bar.
 */
import { useMemo, useState } from "react";
import { bundleEmls, type Bundle } from "../../../../app/trace/bundle.ts";
import type { PlaybackContext } from "../../session/machine.ts";
import type { Trace } from "../../../../app/trace/schema.ts";
import { errorMessage } from "../../../../app/errorMessage.ts";
import { platform } from "../../platform.ts";
import { exportFile, exportNote, type ExportWhat, type RunExports } from "./ExportBar.tsx";

/**
 * The run's exports. The bytes of its eml: files, for its bug bundle: a live run's are its start's (those the
 * desktop app's main read next to the scenario it opened; none in the browser), an opened bundle's the bundle's.
 */
export function useRunExports(
  source: PlaybackContext["source"],
  bundle: Bundle | undefined,
  setError: (message: string) => void,
): RunExports {
  const bundledEmls = useMemo(() => (bundle ? bundleEmls(bundle) : undefined), [bundle]);
  const emls = source?.kind === "scenario" ? source.start.emls : source?.kind === "trace" ? bundledEmls : undefined;
  const [withBodies, setWithBodies] = useState(false);
  const [exportedNote, setExportedNote] = useState<string | undefined>();
  const exportRun = (trace: Trace, what: ExportWhat) => {
    setExportedNote(undefined);
    exportFile(trace, what, withBodies, emls)
      .then(async (f) => {
        await platform.saveFile(f.name, f.contents, f.type);
        setExportedNote(exportNote(f, trace, what, withBodies));
      })
      .catch((e: unknown) => setError(`Could not export the run: ${errorMessage(e)}`));
  };
  return {
    full: withBodies,
    onFull: (full) => {
      setWithBodies(full);
      setExportedNote(undefined);
    },
    note: exportedNote,
    onExport: exportRun,
  };
}
