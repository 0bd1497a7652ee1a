import { memo } from "react";
import { LANE_OUTCOME_TEXT, laneFilterActive, type LaneFilter, type LaneOutcome } from "../../model/laneFilter.ts";

/**
 * The lanes' filters (issue 24, item 5): how the delivery went, its domain, words of its message or
 * recipients; how many lanes are shown; and clearing them.
 */
export const LaneFilters = memo(function LaneFilters({
  filter,
  onFilter,
  outcomes,
  domains,
  shown,
  total,
}: {
  readonly filter: LaneFilter;
  readonly onFilter: (filter: LaneFilter) => void;
  readonly outcomes: readonly LaneOutcome[];
  readonly domains: readonly string[];
  readonly shown: number;
  readonly total: number;
}) {
  const set = (patch: LaneFilter) => {
    const next: Record<string, unknown> = { ...filter, ...patch };
    for (const k of Object.keys(next)) if (next[k] === undefined || next[k] === "") delete next[k];
    onFilter(next as LaneFilter);
  };
  return (
    <div className="filters lane-filters" role="group" aria-label="Lane filters">
      <label>
        Deliveries that{" "}
        <select
          aria-label="Deliveries that went"
          value={filter.outcome ?? ""}
          onChange={(e) => set({ outcome: (e.target.value || undefined) as LaneOutcome | undefined })}
        >
          <option value="">went any way</option>
          {outcomes.map((o) => (
            <option key={o} value={o}>
              {LANE_OUTCOME_TEXT[o]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Domain{" "}
        <select
          aria-label="Lanes of domain"
          value={filter.domain ?? ""}
          onChange={(e) => set({ domain: e.target.value || undefined })}
        >
          <option value="">all</option>
          {domains.map((d) => (
            <option key={d}>{d}</option>
          ))}
        </select>
      </label>
      <label>
        Find lanes{" "}
        <input
          type="search"
          size={20}
          placeholder="message or recipient"
          value={filter.text ?? ""}
          onChange={(e) => set({ text: e.target.value })}
        />
      </label>
      <button onClick={() => onFilter({})} disabled={!laneFilterActive(filter)}>
        Show every lane
      </button>
      <span className="muted" role="status" data-testid="lanes-count">
        {shown.toLocaleString("en-US")} of {total.toLocaleString("en-US")} lanes
      </span>
    </div>
  );
});
