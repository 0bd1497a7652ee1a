/**
 * What the window may do beyond drawing the app: nothing. No navigation away
 * from the app's own pages (top level or in a frame), no redirects, no new
 * windows, no webviews, no permission (camera, notifications, …) and no
 * device (HID, serial, USB, Bluetooth) — apart from writing plain text to the
 * clipboard from the app's own page (the inspector's Copy buttons).
 *
 * Apart from main.ts so that tests drive each handler with a stand-in for
 * Electron's session and web contents (main.test.ts).
 */
import type { Session, WebContents } from "electron";
import { APP_ORIGIN } from "./scheme.ts";

/** A page of the app itself (served over app://mailscope/). */
export function isOwnPage(url: string): boolean {
  return url.startsWith(`${APP_ORIGIN}/`);
}

/** The Content-Security-Policy of every page: no eval, no remote code, no inline scripts. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self'; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'none'";

/** The only permissions granted, and only to the app's own page: writing text to the clipboard. */
export const GRANTED_PERMISSIONS: readonly string[] = ["clipboard-sanitized-write"];

/** Whether the page at `origin` (an origin or a URL) gets `permission`. */
export function grantsPermission(permission: string, origin: string): boolean {
  const own = origin === APP_ORIGIN || isOwnPage(origin);
  return own && GRANTED_PERMISSIONS.includes(permission);
}

/**
 * Navigation stays on the app's pages: top level (`will-navigate`) and in any
 * frame (`will-frame-navigate`); no redirects, no webviews, no new windows;
 * Web Bluetooth chooses no device.
 */
export function lockDownContents(contents: WebContents): void {
  // Electron 45 hands a details object (the positional url is deprecated).
  contents.on("will-navigate", (details) => {
    if (!isOwnPage(details.url)) details.preventDefault();
  });
  contents.on("will-frame-navigate", (details) => {
    if (!isOwnPage(details.url)) details.preventDefault();
  });
  contents.on("will-redirect", (event) => event.preventDefault());
  contents.on("will-attach-webview", (event) => event.preventDefault());
  contents.on("select-bluetooth-device", (event, _devices, callback) => {
    event.preventDefault();
    callback("");
  });
  contents.setWindowOpenHandler(() => ({ action: "deny" }));
}

/** Permissions and devices of a session: all refused (bar {@link GRANTED_PERMISSIONS}). */
export function lockDownSession(session: Session): void {
  session.setPermissionRequestHandler((contents, permission, callback, details) => {
    callback(grantsPermission(permission, details.requestingUrl || contents.getURL()));
  });
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin) =>
    grantsPermission(permission, requestingOrigin),
  );
  session.setDevicePermissionHandler(() => false);
  // A page asking for a device is handed none: the request is cancelled.
  session.on("select-hid-device", (event, _details, callback) => {
    event.preventDefault();
    callback();
  });
  session.on("select-serial-port", (event, _ports, _contents, callback) => {
    event.preventDefault();
    callback("");
  });
  session.on("select-usb-device", (event, _details, callback) => {
    event.preventDefault();
    callback();
  });
}
