/**
 * The app:// scheme the renderer is loaded over (`app://mailscope/index.html`)
 * instead of file://, so that the module worker of the simulation loads:
 * Chromium refuses module workers from file URLs. Requests map onto files of
 * dist/renderer, and nothing outside it.
 */
import { readFile } from "node:fs/promises";
import { extname, join, normalize, relative, isAbsolute } from "node:path";

export const APP_SCHEME = "app";
export const APP_HOST = "mailscope";
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_INDEX = `${APP_ORIGIN}/index.html`;

/** What Electron's protocol.registerSchemesAsPrivileged is given, before the app is ready. */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true },
} as const;

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".wasm": "application/wasm",
};

/** The media type of a file by its extension. */
export function contentType(path: string): string {
  return TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
}

/**
 * The file under `root` an app:// URL names, or undefined for another host,
 * a path that leaves `root` (`..`, encoded or not), or a malformed URL.
 * `app://mailscope/` is the index.
 */
export function resolveAppPath(url: string, root: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== APP_HOST) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(parsed.pathname);
  } catch {
    return undefined;
  }
  // An encoded `..` (`%2e%2e`) is not resolved by the URL parser: refuse any left after decoding.
  if (path.includes("\0") || path.split(/[\\/]/).includes("..")) return undefined;
  if (path === "/" || path === "") path = "/index.html";
  const file = normalize(join(root, path));
  const rel = relative(root, file);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return file;
}

/** Answers one app:// request: the file with its type and the page's policy, or 404. */
export async function serveAppRequest(url: string, root: string, csp: string): Promise<Response> {
  const file = resolveAppPath(url, root);
  if (file === undefined) return new Response("not found", { status: 404 });
  try {
    const body = await readFile(file);
    return new Response(new Uint8Array(body), {
      headers: { "content-type": contentType(file), "content-security-policy": csp },
    });
  } catch {
    return new Response("not found", { status: 404 });
  }
}
