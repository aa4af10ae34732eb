/**
 * `POST /remove`: stop watching, by name or by address range.
 *
 * @module
 */

import { Hono } from "hono";
import type { RemoveRequest, WatchService } from "../watch/types.ts";
import { readJsonObject } from "./_body.ts";
import { badRequest } from "./_errors.ts";
import { nameField, pidField, u64Field } from "./_fields.ts";

const FIELDS = ["name", "addr", "length", "pid"] as const;

/**
 * Validates a `POST /remove` body: `{name[, pid]}` or `{addr, length[, pid]}`.
 *
 * @example
 * ```ts
 * import { removeRequest } from "./remove.ts";
 * removeRequest({ addr: "0x1000", length: 64 }); // { addr: 4096n, length: 64n }
 * ```
 */
export function removeRequest(body: Record<string, unknown>): RemoveRequest {
  const present = (key: string) =>
    body[key] !== undefined && body[key] !== null;
  const byName = present("name");
  const byRange = present("addr") || present("length");
  if (byName && byRange) {
    badRequest(
      "Conflicting fields: give either name, or addr and length, not both",
    );
  }
  if (!byName && !byRange) {
    badRequest("Missing field name: give the watch's name, or addr and length");
  }
  const pid = present("pid") ? pidField(body.pid) : undefined;
  const request: RemoveRequest = byName ? { name: nameField(body.name) } : {
    addr: u64Field(body.addr, "addr"),
    length: u64Field(body.length, "length"),
  };
  if (pid !== undefined) request.pid = pid;
  return request;
}

/**
 * The `POST /remove` route; answers 200 with `{removed: [...]}`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { WatchService } from "../watch/types.ts";
 * import { removeRoutes } from "./remove.ts";
 * export function mount(service: WatchService): Hono {
 *   return new Hono().route("/remove", removeRoutes(service));
 * }
 * ```
 */
export function removeRoutes(service: WatchService): Hono {
  return new Hono().post("/", async (c) => {
    const request = removeRequest(await readJsonObject(c, FIELDS));
    return c.json({ removed: await service.removeWatch(request) });
  });
}
