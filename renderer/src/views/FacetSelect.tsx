/**
 * One filter's menu (the log's, the outcomes', the lanes'): its words, a first choice that filters nothing,
 * and a choice per value that occurs; undefined when the first is chosen.
 */
export function FacetSelect({
  label,
  name,
  value,
  values,
  any = "all",
  text = (v) => v,
  onChange,
}: {
  /** The words beside it. */
  readonly label: string;
  /** Its accessible name (`Filter by domain`): the words and the choices would otherwise make it. */
  readonly name: string;
  readonly value: string | undefined;
  readonly values: readonly string[];
  /** The first choice's words. */
  readonly any?: string;
  /** A value's words in the menu. */
  readonly text?: (value: string) => string;
  readonly onChange: (value: string | undefined) => void;
}) {
  return (
    <label>
      {label}{" "}
      <select aria-label={name} value={value ?? ""} onChange={(e) => onChange(e.target.value || undefined)}>
        <option value="">{any}</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {text(v)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** `filter` with `patch` applied, leaving out the fields it unsets (undefined, or an empty text). */
export function patchFilter<F extends object>(filter: F, patch: Partial<Record<keyof F, unknown>>): F {
  const next: Record<string, unknown> = { ...filter, ...patch };
  for (const k of Object.keys(next)) if (next[k] === undefined || next[k] === "") delete next[k];
  return next as F;
}
