/**
 * `GET /watches` and `GET /watches/{name}`: the watches and their verdicts.
 *
 * @module
 */

import { Hono } from "hono";
import type { WatchInfo, WatchService } from "../watch/types.ts";
import { HttpError } from "./_errors.ts";
import { readQuery } from "./_body.ts";
import { queryPid } from "./_fields.ts";

/**
 * The one watch with this name (and pid, when given).
 *
 * @throws {HttpError} 404 when none matches, 409 when several pids have one.
 * @example
 * ```ts
 * import { pickWatch } from "./watches.ts";
 * import type { WatchInfo } from "../watch/types.ts";
 * export function forPid(found: WatchInfo[]): WatchInfo {
 *   return pickWatch(found, "w", 4242);
 * }
 * ```
 */
export function pickWatch(
  found: WatchInfo[],
  name: string,
  pid: number | undefined,
): WatchInfo {
  const matches = pid === undefined
    ? found
    : found.filter((w) => w.pid === pid);
  if (matches.length === 0) {
    const where = pid === undefined ? "" : ` in pid ${pid}`;
    throw new HttpError(
      404,
      `Unknown watch: no watch named ${
        JSON.stringify(name)
      }${where}; see GET /watches`,
    );
  }
  if (matches.length > 1) {
    const pids = matches.map((w) => w.pid).join(", ");
    throw new HttpError(
      409,
      `Several watches are named ${
        JSON.stringify(name)
      }: add ?pid= with one of ${pids}`,
    );
  }
  return matches[0];
}

/**
 * The `/watches` routes.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { WatchService } from "../watch/types.ts";
 * import { watchesRoutes } from "./watches.ts";
 * export function mount(service: WatchService): Hono {
 *   return new Hono().route("/watches", watchesRoutes(service));
 * }
 * ```
 */
export function watchesRoutes(service: WatchService): Hono {
  return new Hono()
    .get("/", (c) => {
      readQuery(c, []);
      return c.json({ watches: service.listWatches() });
    })
    .get("/:name", (c) => {
      const name = c.req.param("name");
      const { pid } = readQuery(c, ["pid"]);
      return c.json(pickWatch(service.findWatches(name), name, queryPid(pid)));
    });
}
