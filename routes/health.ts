/**
 * `GET /health`: whether the daemon answers, and where it keeps its files.
 * The one route that needs no bearer token.
 *
 * @module
 */

import { Hono } from "hono";
import type { WatchService } from "../watch/types.ts";

/**
 * The `/health` route; answers `{ok: true, outputDir, ringDir, pid, version}`.
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
