/**
 * JSON errors for the HTTP API: every failure answers
 * `{"error": "<sentence-case message with the detail after a colon>"}`.
 * Service errors keep their status and message; anything unexpected becomes
 * a generic 500 and goes to the daemon's log, never to the client.
 *
 * @module
 */

import type { Context, ErrorHandler } from "hono";
import { ApiError } from "../watch/types.ts";

/** Every endpoint, as the 404 answer lists them. */
export const ENDPOINTS = [
  "POST /watch",
  "POST /remove",
  "GET /watches",
  "GET /watches/{name}",
  "GET /dumps",
  "GET /dumps/{file}",
  "GET /processes",
  "GET /health",
  "POST /marks",
  "GET /leaks",
  "GET /fluctuation",
  "POST /check_leaks",
] as const;

/**
 * Throws a 400 with the given message.
 *
 * @example
 * ```ts
 * import { badRequest } from "./_errors.ts";
 * export function requirePid(pid: unknown): number {
 *   if (typeof pid !== "number") badRequest("Invalid pid: expected a number");
 *   return pid;
 * }
 * ```
 */
export function badRequest(message: string): never {
  throw new ApiError(400, message);
}

/**
 * The app's error handler.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { errorHandler } from "./_errors.ts";
 * new Hono().onError(errorHandler(console.error));
 * ```
 */
export function errorHandler(logError: (error: unknown) => void): ErrorHandler {
  return (error, c) => {
    if (error instanceof ApiError) {
      return c.json({ error: error.message }, error.status);
    }
    logError(error);
    return c.json({
      error:
        "Internal error: the daemon could not handle this request; its log has the details",
    }, 500);
  };
}

/**
 * The answer to a route that does not exist.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { notFound } from "./_errors.ts";
 * new Hono().notFound(notFound);
 * ```
 */
export function notFound(c: Context): Response {
  return c.json({
    error: `Unknown route: ${c.req.method} ${c.req.path}; endpoints are ${
      ENDPOINTS.join(", ")
    }`,
    endpoints: ENDPOINTS,
  }, 404);
}
