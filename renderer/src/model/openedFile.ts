/**
 * What an opened trace file is, read as the app opens it: a bug bundle (its format says so: its trace, with
 * the bundle), a probe's report or trace (its cases), a trace, or a file that cannot be opened — and then why,
 * with each violation's place (`events[3].seq: …`).
 */
import { isProbeReport } from "../../../app/probe/report.ts";
import { isBundleValue, readBundleValue, type Bundle } from "../../../app/trace/bundle.ts";
import { importTrace, importTraceValue } from "../../../app/trace/importer.ts";
import type { Trace } from "../../../app/trace/schema.ts";
import { isProbeTrace } from "./probe.ts";

export type OpenedTraceFile =
  | { readonly kind: "bundle"; readonly trace: Trace; readonly bundle: Bundle }
  | { readonly kind: "probe"; readonly trace: Trace }
  | { readonly kind: "trace"; readonly trace: Trace }
  | { readonly kind: "cannot-open"; readonly message: string };

const said = (violations: readonly { readonly path: string; readonly message: string }[]) =>
  violations.map((v) => `${v.path}: ${v.message}`).join("; ");

/** Reads `text`, the file `name`, as the Open trace… button, File ▸ Open Trace… and a drop do. */
export async function readTraceFile(name: string, text: string): Promise<OpenedTraceFile> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // A bug bundle (its format says so) opens as its trace, with the bundle's panel above it.
  if (isBundleValue(json)) {
    const read = await readBundleValue(json);
    if (!read.ok)
      return { kind: "cannot-open", message: `${name} cannot be opened as a bug bundle: ${said(read.violations)}` };
    return { kind: "bundle", trace: read.value.trace, bundle: read.value };
  }
  // A probe's JSON report carries its trace; a probe's trace opens as the report it is.
  const probeReport = isProbeReport(json);
  const parsed =
    json === undefined ? importTrace(text) : importTraceValue(probeReport ? (json as { trace?: unknown }).trace : json);
  if (parsed.ok && (probeReport || isProbeTrace(parsed.value.events))) return { kind: "probe", trace: parsed.value };
  if (!parsed.ok)
    return { kind: "cannot-open", message: `${name} cannot be opened as a trace: ${said(parsed.violations)}` };
  return { kind: "trace", trace: parsed.value };
}
