/**
 * Imported first by main.tsx, before any module builds a zod schema: the
 * page's Content-Security-Policy allows no eval, and zod, unless told it is
 * jitless, probes `new Function` when it builds an object schema — a probe
 * it catches, but that the browser still reports as a CSP violation. Under
 * the policy the probe fails anyway, so validation runs as it did.
 */
import { z } from "zod";

z.config({ jitless: true });
