import { memo } from "react";
import { FacetSelect, patchFilter } from "../FacetSelect.tsx";
import { LANE_OUTCOME_TEXT, laneFilterActive, type LaneFilter, type LaneOutcome } from "../../model/laneFilter.ts";

/**
 * The lanes' filters: how the delivery went, its domain, words of its message or
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
  const set = (patch: LaneFilter) => onFilter(patchFilter(filter, patch));
  return (
    <div className="filters lane-filters" role="group" aria-label="Lane filters">
      <FacetSelect
        label="Deliveries that"
        name="Deliveries that went"
        any="went any way"
        value={filter.outcome}
        values={outcomes}
        text={(o) => LANE_OUTCOME_TEXT[o as LaneOutcome]}
        onChange={(outcome) => set({ outcome: outcome as LaneOutcome | undefined })}
      />
      <FacetSelect
        label="Domain"
        name="Lanes of domain"
        value={filter.domain}
        values={domains}
        onChange={(domain) => set({ domain })}
      />
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
