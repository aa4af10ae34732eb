/**
 * `POST /marks`: a mark from outside the job, written into the event log of
 * one traced process or of every live one, as an mstx mark would be.
 *
 * @module
 */

import { Hono } from "hono";
import type { MemoryService } from "../analysis/memory_api.ts";
import { kindOf, readJsonObject } from "./_body.ts";
import { badRequest } from "./_errors.ts";
import { pidField } from "./_fields.ts";

const FIELDS = ["message", "pid"] as const;
/** The real mstx's message limit. */
const MAX_MESSAGE_BYTES = 156;

/**
 * Validates a `POST /marks` body: `{message[, pid]}`.
 *
 * @example
 * ```ts
 * import { markRequest } from "./marks.ts";
 * markRequest({ message: "step" }); // { message: "step" }
 * ```
 */
export function markRequest(
  body: Record<string, unknown>,
): { message: string; pid?: number } {
  const message = body.message;
  const hint = 'give the mark\'s text, e.g. {"message":"step"}';
  if (message === undefined || message === null) {
    badRequest(`Missing field message: ${hint}`);
  }
  if (typeof message !== "string") {
    badRequest(`Invalid message: got ${kindOf(message)}; ${hint}`);
  }
  if (message === "") badRequest(`Invalid message: it is empty; ${hint}`);
  if (new TextEncoder().encode(message).length > MAX_MESSAGE_BYTES) {
    badRequest(
      `Invalid message: longer than mstx's ${MAX_MESSAGE_BYTES} bytes`,
    );
  }
  if ([...message].some((ch) => ch < " " || ch === "\x7f")) {
    badRequest("Invalid message: control characters are not allowed");
  }
  return body.pid === undefined || body.pid === null
    ? { message }
    : { message, pid: pidField(body.pid) };
}

/**
 * The `POST /marks` route; answers `{marked: [pids]}`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { MemoryService } from "../analysis/memory_api.ts";
 * import { marksRoutes } from "./marks.ts";
 * export function mount(service: MemoryService): Hono {
 *   return new Hono().route("/marks", marksRoutes(service));
 * }
 * ```
 */
export function marksRoutes(service: MemoryService): Hono {
  return new Hono().post("/", async (c) => {
    const { message, pid } = markRequest(await readJsonObject(c, FIELDS));
    return c.json({ marked: await service.mark(message, pid) });
  });
}
