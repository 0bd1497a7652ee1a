import { z } from "zod";
import { kindOfFileName } from "../app/trace/fileNames.ts";
import type { ChannelName } from "./channels.ts";

/**
 * Argument schemas per channel. Main validates every payload before a handler
 * sees it: the renderer is treated as untrusted.
 */
const fileName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^/\\]+$/, "a file name, not a path");

/** The largest scenario the editor saves. */
export const MAX_SCENARIO_CHARS = 16 * 1024 * 1024;

export const channelValidators = {
  "app:info": z.tuple([]),
  "scenarios:list": z.tuple([]),
  "file:save": z.tuple([
    z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^/\\]+$/, "a file name, not a path"),
    z.string().max(512 * 1024 * 1024),
  ]),
  "file:save-bytes": z.tuple([
    z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^/\\]+$/, "a file name, not a path"),
    z.instanceof(Uint8Array).refine((b) => b.byteLength <= 256 * 1024 * 1024, "at most 256 MB"),
  ]),
  "file:open": z.tuple([z.enum(["scenario", "trace"])]),
  "files:pending": z.tuple([]),
  "recent:list": z.tuple([]),
  "recent:open": z.tuple([z.string().min(1).max(4096)]),
  "file:dropped": z.tuple([
    z
      .string()
      .min(1)
      .max(4096)
      .refine(
        (p) => kindOfFileName(p) !== undefined,
        "a scenario (.yaml, .yml) or a trace (.mstrace, .msbundle, .json)",
      ),
  ]),
  "scenario:save": z.tuple([
    z
      .string()
      .min(1)
      .max(4096)
      .regex(/\.ya?ml$/i, "a scenario file (.yaml)"),
    z.string().max(MAX_SCENARIO_CHARS),
  ]),
  "scenario:save-as": z.tuple([fileName, z.string().max(MAX_SCENARIO_CHARS)]),
} satisfies Record<ChannelName, z.ZodType>;
