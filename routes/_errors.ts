/**
 * JSON errors for the HTTP API: every failure answers
 * `{"error": "<sentence-case message with the detail after a colon>"}`.
 * Service errors keep their status and message; anything unexpected becomes
 * a generic 500 and goes to the daemon's log, never to the client.
 *
 * @module
 */

import type { Context, ErrorHandler, Hono, NotFoundHandler } from "hono";
import { ServiceError, type ServiceErrorKind } from "../watch/types.ts";

/** The status each kind of service error answers with. */
const STATUS: Record<ServiceErrorKind, 400 | 404 | 409 | 422 | 503> = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
  not_live: 422,
  unavailable: 503,
};

/** An error the edge itself answers with a status (bad input, body too large). */
export class HttpError extends Error {
  /** HTTP status to answer with. */
  readonly status: 400 | 404 | 408 | 409 | 413;
  /**
   * @example
   * ```ts
   * import { HttpError } from "./_errors.ts";
   * const e = new HttpError(404, "No such dump file: x.bin; use a name from GET /dumps");
   * ```
   */
  constructor(status: HttpError["status"], message: string) {
    super(message);
    this.status = status;
  }
}

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
  throw new HttpError(400, message);
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
    if (error instanceof HttpError) {
      return c.json({ error: error.message }, error.status);
    }
    if (error instanceof ServiceError) {
      return c.json({ error: error.message }, STATUS[error.kind]);
    }
    logError(error);
    return c.json({
      error:
        "Internal error: the daemon could not handle this request; its log has the details",
    }, 500);
  };
}

/**
 * The endpoints of an assembled app as `METHOD /path/{param}`, in the order
 * they were mounted: the routes themselves are the one list of them.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { endpointsOf } from "./_errors.ts";
 * endpointsOf(new Hono().get("/watches/:name", (c) => c.text(""))); // ["GET /watches/{name}"]
 * ```
 */
export function endpointsOf(app: Hono): string[] {
  const seen = new Set<string>();
  for (const { method, path } of app.routes) {
    if (method === "ALL") continue; // middleware
    const shown = path.replace(/:(\w+)/g, "{$1}").replace(/(.)\/$/, "$1");
    seen.add(`${method} ${shown}`);
  }
  return [...seen];
}

/**
 * The answer to a route that does not exist: it lists `endpoints`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { notFound } from "./_errors.ts";
 * new Hono().notFound(notFound(["GET /health"]));
 * ```
 */
export function notFound(endpoints: readonly string[]): NotFoundHandler {
  return (c: Context) =>
    c.json({
      error: `Unknown route: ${c.req.method} ${c.req.path}; endpoints are ${
        endpoints.join(", ")
      }`,
      endpoints,
    }, 404);
}
