/**
 * `GET /dumps` (filtered by name, op, pid) and `GET /dumps/{file}`, which
 * streams one file of the dump directory.
 *
 * @module
 */

import { Hono } from "hono";
import type { WatchService } from "../watch/types.ts";
import { readQuery } from "./_body.ts";
import { openDump } from "./_dump_file.ts";
import { queryPid } from "./_fields.ts";

/**
 * The `/dumps` routes.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { WatchService } from "../watch/types.ts";
 * import { dumpsRoutes } from "./dumps.ts";
 * export function mount(service: WatchService): Hono {
 *   return new Hono().route("/dumps", dumpsRoutes(service));
 * }
 * ```
 */
export function dumpsRoutes(service: WatchService): Hono {
  return new Hono()
    .get("/", (c) => {
      const { name, op, pid } = readQuery(c, ["name", "op", "pid"]);
      const filter = {
        ...(name === undefined ? {} : { name }),
        ...(op === undefined ? {} : { op }),
        ...(pid === undefined ? {} : { pid: queryPid(pid) }),
      };
      return c.json({ dumps: service.listDumps(filter) });
    })
    .get("/:file", async (c) => {
      const dump = await openDump(service.dumpDir, c.req.param("file"));
      return c.body(dump.file.readable, 200, {
        "Content-Type": dump.contentType,
        "Content-Length": String(dump.size),
        "X-Content-Type-Options": "nosniff",
      });
    });
}
