/** The colour of each outcome (marks, legend, overview bars): defined with the timeline's model, which the image draws from. */
export { OUTCOME_COLOUR } from "../../model/timeline.ts";
