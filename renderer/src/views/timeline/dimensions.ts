/** The timeline's sizes in px, shared by its components. */
import { LANE_ROW, SUB_ROW } from "../../model/timelineLabels.ts";

/** A lane's row (the labels' layout and the exported image use the same). */
export const ROW = LANE_ROW;
/** A recipient's sub-lane under an unfolded lane. */
export const SUB = SUB_ROW;
export const LABEL_W = 230;
/** The fold button before a lane's label. */
export const FOLD_W = 22;
export const VIEWPORT_ROWS = 8;
/** Lanes with several recipients start unfolded when there are at most this many lanes. */
export const UNFOLD_UP_TO = 8;
/** A zoomed window of the run: [from, to] in ms. */
export type Window = readonly [number, number];
