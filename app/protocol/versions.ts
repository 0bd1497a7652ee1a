/**
 * Major versions (SPEC.md, "Versioning"): the first path segment names the
 * major version (`/v1/...`), capabilities list the majors a receiver serves,
 * and the sender uses the highest one both sides have, without probing.
 *
 * Reading taken (see docs/decisions): a first path segment of the form `v`
 * followed by digits is "a path under a major version" even when it does not
 * match `^v[1-9][0-9]*$` (`/v0/x`, `/v01/messages`). Such a segment names no
 * version anyone can serve, so the receiver answers it like any other unknown
 * major version: 404 `unsupported_version` with `versions`. Segments of
 * another shape (`/V1/...`, `/v1beta/...`, `/foo`) are not version paths.
 */

/** The pattern of a version, as in the capabilities' `versions` and a problem's `versions`. */
export const VERSION_PATTERN = /^v[1-9][0-9]*$/;

/** The versions this implementation speaks. */
export const SUPPORTED_VERSIONS: readonly string[] = ["v1"];

export type Negotiated =
  | { readonly ok: true; readonly version: string; readonly major: number }
  | { readonly ok: false; readonly outcome: "no-common-version" };

/** The resources under a version path. */
export type VersionedResource = "messages" | "capabilities";

/**
 * The major number of a version string (`"v10"` → 10), or `undefined` when the
 * string does not match `^v[1-9][0-9]*$`.
 */
export function versionMajor(version: string): number | undefined {
  if (!VERSION_PATTERN.test(version)) return undefined;
  const major = Number(version.slice(1));
  return Number.isSafeInteger(major) ? major : undefined;
}

/**
 * The highest major version common to both lists, compared by number (`v10`
 * is above `v9`), per VER-5. Entries that do not match the version pattern are
 * skipped. Pure: the sender calls this on the advertised list and never tries
 * version paths to find out (VER-6).
 */
export function negotiateVersion(ours: readonly string[], theirs: readonly string[]): Negotiated {
  const theirMajors = new Set(theirs.map(versionMajor).filter((m): m is number => m !== undefined));
  let best: number | undefined;
  for (const version of ours) {
    const major = versionMajor(version);
    if (major !== undefined && theirMajors.has(major) && (best === undefined || major > best)) best = major;
  }
  return best === undefined
    ? { ok: false, outcome: "no-common-version" }
    : { ok: true, version: `v${best}`, major: best };
}

/** `/v1/messages`: the path of a resource under a version (VER-1). */
export function versionPath(version: string, resource: VersionedResource): string {
  return `/${version}/${resource}`;
}

export type VersionPath =
  | {
      readonly versioned: true;
      /** The first path segment as written, e.g. `v1`, `v0`, `v01`. */
      readonly segment: string;
      /** The major number when the segment matches `^v[1-9][0-9]*$`; `undefined` for `v0`, `v01`. */
      readonly major: number | undefined;
      /** The rest of the path after the segment, with its leading `/`; `""` for `/v2`. */
      readonly rest: string;
    }
  | { readonly versioned: false };

/**
 * Reads the major-version segment of a request path (VER-1). `/v2/anything`,
 * `/v2` and `/v2/` are all under `v2`; `/v0/x` and `/v01/messages` are under a
 * version-shaped segment that no receiver can serve (`major` is `undefined`).
 */
export function parseVersionPath(pathname: string): VersionPath {
  const match = /^\/(v[0-9]+)(\/.*)?$/.exec(pathname);
  if (match === null) return { versioned: false };
  const segment = match[1] ?? "";
  return { versioned: true, segment, major: versionMajor(segment), rest: match[2] ?? "" };
}

/**
 * Whether a receiver serving `served` must answer this path with 404
 * `unsupported_version` (GET-10, ERR-14, VER-7): the path is under a
 * version-shaped segment that is not one of the served versions.
 */
export function isUnservedVersionPath(pathname: string, served: readonly string[]): boolean {
  const path = parseVersionPath(pathname);
  return path.versioned && !served.includes(path.segment);
}
