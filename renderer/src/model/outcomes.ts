/**
 * The per-recipient outcomes table of the run view: app/sim/outcomeRows.ts,
 * shared with the comparison of two runs (app/sim/compare.ts).
 */
export { messageLabel, outcomeRows, type OutcomeRow } from "../../../app/sim/outcomeRows.ts";
