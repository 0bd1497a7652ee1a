/** The views of the window. */
export type View = "run" | "rules" | "editor" | "compare" | "explore" | "probe" | "sweep";
