/**
 * The HTTP API of the daemon, assembled from one route file per resource.
 * Handlers stay thin: they validate at the edge and call the
 * {@linkcode WatchService}; every error is JSON `{"error": "..."}`.
 *
 * @module
 */

import { Hono } from "hono";
import type { MemoryService } from "../analysis/memory_api.ts";
import type { WatchService } from "../watch/types.ts";
import { bearerToken } from "./_auth.ts";
import { bodyLimit } from "./_body.ts";
import { endpointsOf, errorHandler, notFound } from "./_errors.ts";
import { blocksRoutes } from "./blocks.ts";
import { dumpsRoutes } from "./dumps.ts";
import { healthRoutes } from "./health.ts";
import { leaksRoutes } from "./leaks.ts";
import { marksRoutes } from "./marks.ts";
import { processesRoutes } from "./processes.ts";
import { removeRoutes } from "./remove.ts";
import { snapshotRoutes } from "./snapshot.ts";
import { watchRoutes } from "./watch.ts";
import { watchesRoutes } from "./watches.ts";

/** Options of {@linkcode createApp}. */
export interface AppOptions {
  /** When set, every request needs `Authorization: Bearer <token>`; `GET /health` without it answers only `{ok: true}`. */
  token?: string;
  /** Where unexpected errors go (the client only gets a generic 500). Default `console.error`. */
  logError?: (error: unknown) => void;
  /** Marks, leaks, fluctuation and check_leaks; those routes exist only with it. */
  memory?: MemoryService;
}

/**
 * The API as a hono app; serve it with `Deno.serve(app.fetch)` or call
 * `app.request()` in tests.
 *
 * @example
 * ```ts
 * import { createApp } from "./mod.ts";
 * import type { WatchService } from "../watch/types.ts";
 * export function serve(service: WatchService): Deno.HttpServer {
 *   return Deno.serve({ port: 0 }, createApp(service, { token: "s3cret" }).fetch);
 * }
 * ```
 */
export function createApp(
  service: WatchService,
  options: AppOptions = {},
): Hono {
  if (options.token === "") {
    throw new Error("Cannot create the HTTP API: the bearer token is empty");
  }
  const app = new Hono();
  app.onError(errorHandler(options.logError ?? console.error));
  if (options.token !== undefined) app.use("*", bearerToken(options.token));
  app.use("*", bodyLimit());
  app
    .route("/watch", watchRoutes(service))
    .route("/remove", removeRoutes(service))
    .route("/watches", watchesRoutes(service))
    .route("/dumps", dumpsRoutes(service))
    .route("/processes", processesRoutes(service))
    .route("/processes", blocksRoutes(service))
    .route("/health", healthRoutes(service));
  if (options.memory) {
    app
      .route("/marks", marksRoutes(options.memory))
      .route("/", leaksRoutes(options.memory))
      .route("/snapshot", snapshotRoutes(options.memory));
  }
  app.notFound(notFound(endpointsOf(app)));
  return app;
}
