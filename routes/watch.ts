/**
 * `POST /watch`: start watching a block of a traced process.
 *
 * @module
 */

import { Hono } from "hono";
import type { WatchRequest, WatchService } from "../watch/types.ts";
import { readJsonObject } from "./_body.ts";
import { badRequest } from "./_errors.ts";
import {
  dumpNumsField,
  fullContentField,
  nameField,
  opField,
  pidField,
  u64Field,
} from "./_fields.ts";

const FIELDS = [
  "pid",
  "name",
  "addr",
  "length",
  "dump_nums",
  "full_content",
  "start",
  "end",
] as const;

/**
 * Validates a `POST /watch` body into a {@linkcode WatchRequest}.
 *
 * @example
 * ```ts
 * import { watchRequest } from "./watch.ts";
 * watchRequest({ pid: 4242, name: "w", addr: "0x1000", length: 64 });
 * // { pid: 4242, name: "w", addr: 4096n, length: 64n, dumpNums: -1, fullContent: false }
 * ```
 */
export function watchRequest(body: Record<string, unknown>): WatchRequest {
  const request: WatchRequest = {
    pid: pidField(body.pid),
    name: nameField(body.name),
    addr: u64Field(body.addr, "addr"),
    length: u64Field(body.length, "length"),
    dumpNums: dumpNumsField(body.dump_nums),
    fullContent: fullContentField(body.full_content),
  };
  if (request.addr + request.length > 1n << 64n) {
    badRequest(
      "Invalid range: addr + length runs past the end of the 64-bit address space",
    );
  }
  const start = opField(body.start, "start");
  const end = opField(body.end, "end");
  if (start !== undefined) request.start = start;
  if (end !== undefined) request.end = end;
  return request;
}

/**
 * The `POST /watch` route; answers 201 with the new watch.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { WatchService } from "../watch/types.ts";
 * import { watchRoutes } from "./watch.ts";
 * export function mount(service: WatchService): Hono {
 *   return new Hono().route("/watch", watchRoutes(service));
 * }
 * ```
 */
export function watchRoutes(service: WatchService): Hono {
  return new Hono().post("/", async (c) => {
    const request = watchRequest(await readJsonObject(c, FIELDS));
    return c.json(await service.addWatch(request), 201);
  });
}
