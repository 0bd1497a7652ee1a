import { useEffect, useState } from "react";
import type { RecordedEvent } from "../../../../app/trace/schema.ts";
import { parsePermalink, permalinkHash, type LinkRequest } from "../../model/permalink.ts";
import { formatOffset } from "../../model/time.ts";

/** What the page's hash asks for (`#seq=1572`), read at mount and again whenever the hash changes. */
export function useLinkRequest(): LinkRequest {
  const [hash, setHash] = useState(() => window.location.hash);
  useEffect(() => {
    const read = () => setHash(window.location.hash);
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);
  return parsePermalink(hash);
}

/** The address of the permalink to event `seq`: this page's, with `#seq=N`. */
function permalinkUrl(seq: number): string {
  const url = new URL(window.location.href);
  url.hash = permalinkHash(seq);
  return url.href;
}

/**
 * "Copy link" to an event: puts its permalink on the clipboard and in the address bar (without a new
 * history entry), and says what it did.
 */
export function CopyLink({ seq, compact = false }: { readonly seq: number; readonly compact?: boolean }) {
  // A new seq is a new button (its callers key it by the seq): the note is of this one's copy.
  const [note, setNote] = useState("");
  const copy = async () => {
    const href = permalinkUrl(seq);
    window.history.replaceState(window.history.state, "", permalinkHash(seq));
    try {
      await navigator.clipboard.writeText(href);
      setNote(`Link copied: ${permalinkHash(seq)}`);
    } catch {
      setNote(`The clipboard is not available here: the address bar has the link (${permalinkHash(seq)})`);
    }
  };
  return (
    <>
      <button className={compact ? "chip" : ""} onClick={() => void copy()}>
        Copy link<span className="visually-hidden"> to event #{seq}</span>
      </button>
      <span className="muted" role="status">
        {note}
      </span>
    </>
  );
}

/**
 * The run view's place for links: the event selected (from the log, the timeline or an exchange), its
 * permalink and "Copy link"; and what a link that cannot be followed says (a bad seq, an event this trace
 * does not have, one a live run has not reached yet).
 */
export function PermalinkBar({
  selected,
  startMs,
  problem,
  onDismiss,
}: {
  readonly selected: RecordedEvent | undefined;
  readonly startMs: number;
  readonly problem: string | undefined;
  readonly onDismiss: () => void;
}) {
  if (selected === undefined && problem === undefined) return null;
  return (
    <section className="permalink" aria-label="Link to this place">
      {problem !== undefined && (
        <p className="notice" role="alert">
          {problem}{" "}
          <button className="chip" onClick={onDismiss}>
            Dismiss
          </button>
        </p>
      )}
      {selected !== undefined && (
        <p>
          Selected: event <a href={permalinkHash(selected.seq)}>#{selected.seq}</a>, {selected.name} at{" "}
          {formatOffset(selected.timeMs, startMs)} <CopyLink key={selected.seq} seq={selected.seq} />
        </p>
      )}
    </section>
  );
}
