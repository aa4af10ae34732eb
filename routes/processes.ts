/**
 * `GET /processes`: the traced processes the daemon knows.
 *
 * @module
 */

import { Hono } from "hono";
import type { WatchService } from "../watch/types.ts";
import { readQuery } from "./_body.ts";

/**
 * The `/processes` route; answers `{processes: [...]}`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { WatchService } from "../watch/types.ts";
 * import { processesRoutes } from "./processes.ts";
 * export function mount(service: WatchService): Hono {
 *   return new Hono().route("/processes", processesRoutes(service));
 * }
 * ```
 */
export function processesRoutes(service: WatchService): Hono {
  return new Hono().get("/", (c) => {
    readQuery(c, []);
    return c.json({ processes: service.listProcesses() });
  });
}
