import { useState } from "react";
import { leftOut } from "../../../app/trace/exportJson.ts";
import { platform } from "../platform.ts";
import { imageName, svgToPng, type SvgImage } from "./imageExport.ts";
import "./imageExport.css";
import { errorMessage } from "../../../app/errorMessage.ts";

export interface ImageExportButtonsProps {
  /** What the image is of, in words and in the file name: `timeline`, `sequence`, `statechart`. */
  readonly view: string;
  /** The view's name for people: "the delivery timeline". */
  readonly label: string;
  /** More of the file name (the message or delivery shown). */
  readonly detail?: string;
  /** Draws the image (throws when there is nothing to draw); `panel` is the view's section, around the buttons. */
  readonly image: (panel: Element) => SvgImage;
  readonly disabled?: boolean;
}

/** The run's scenario name, for file names: the run view's heading's (which shows the title beside it). */
function scenarioName(): string {
  const heading = document.getElementById("run-title");
  return (heading?.getAttribute("data-scenario") ?? heading?.textContent ?? "").trim();
}

/**
 * "Export SVG" and "Export PNG" of a view, saved where the shell saves exports; once saved, what
 * the image left out is said beside them, as every export of the run says it.
 */
export function ImageExportButtons({ view, label, detail, image, disabled }: ImageExportButtonsProps) {
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const save = async (ext: "svg" | "png", button: HTMLElement) => {
    setError(undefined);
    setSaved(undefined);
    try {
      const drawn = image(button.closest("section") ?? document.body);
      const name = imageName([scenarioName(), view, detail ?? ""], ext);
      if (ext === "svg") await platform.saveFile(name, `${drawn.svg}\n`, "image/svg+xml");
      else await platform.saveBytes(name, await svgToPng(drawn), "image/png");
      setSaved(name);
    } catch (e) {
      setError(`Could not export ${label}: ${errorMessage(e)}`);
    }
  };
  return (
    <span className="image-export" role="group" aria-label={`Export ${label} as an image`}>
      <button
        onClick={(e) => void save("svg", e.currentTarget)}
        disabled={disabled}
        title={`Save ${label} as an SVG image`}
      >
        Export SVG
      </button>
      <button
        onClick={(e) => void save("png", e.currentTarget)}
        disabled={disabled}
        title={`Save ${label} as a PNG image`}
      >
        Export PNG
      </button>
      {error && (
        <span role="alert" className="error">
          {error}
        </span>
      )}
      {saved && (
        <span role="status" className="muted image-export-note" data-testid="image-export-note" title={saved}>
          {leftOut("image", { events: [] }, false)}
        </span>
      )}
    </span>
  );
}
