/** The colour of each outcome (marks, legend, overview bars). */
export const OUTCOME_COLOUR: Readonly<Record<string, string>> = {
  accepted: "#1f8a45",
  rejected: "#c0362c",
  deferred: "#2f7fd0",
  "temporary-eligible": "#e08a00",
  temporary: "#8a5cf6",
  permanent: "#7a1010",
  "no-service": "#6b7280",
  "no-common-version": "#0e7490",
};
