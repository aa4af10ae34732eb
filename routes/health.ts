/**
 * `GET /health`: whether the daemon answers, and where it keeps its files.
 * Over TCP a caller without the bearer token gets only `{ok: true}` (see
 * `_auth.ts`); this route answers those who may see the rest.
 *
 * @module
 */

import { Hono } from "hono";
import type { WatchService } from "../watch/types.ts";

/**
 * The `/health` route; answers `{ok: true, ...}` with every field of the
 * service's {@linkcode WatchService.health} (outputDir, ringDir, pid, version
 * and whatever the daemon adds).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { WatchService } from "../watch/types.ts";
 * import { healthRoutes } from "./health.ts";
 * export function mount(service: WatchService): Hono {
 *   return new Hono().route("/health", healthRoutes(service));
 * }
 * ```
 */
export function healthRoutes(service: WatchService): Hono {
  return new Hono().get("/", (c) => c.json({ ok: true, ...service.health() }));
}
