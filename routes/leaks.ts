/**
 * The leak analyses: `GET /leaks` (online suspects), `GET /fluctuation`
 * (per pool and step) and `POST /check_leaks` (the real tool's offline
 * rule over a log file, or the daemon's own log).
 *
 * @module
 */

import { Hono } from "hono";
import {
  CheckLeaksError,
  checkOptions,
  formatCheckLeaks,
  type OptionNames,
} from "../analysis/leaks/mod.ts";
import type {
  CheckLeaksRequest,
  MemoryService,
} from "../analysis/memory_api.ts";
import { jsonText, readJsonObject, readQuery } from "./_body.ts";
import { badRequest } from "./_errors.ts";
import { queryPid } from "./_fields.ts";

/** How `POST /check_leaks` spells check_leaks options (JSON body fields). */
const HTTP_NAMES: OptionNames = {
  mstxInfo: "mstx_info",
  startIndex: "start_index",
  eventType: "event_type",
  maxLeaks: "max_leaks",
  show: jsonText,
};

const CHECK_FIELDS = [
  "input_path",
  "mstx_info",
  "start_index",
  "event_type",
] as const;

/**
 * Validates a `POST /check_leaks` body.
 *
 * @example
 * ```ts
 * import { checkLeaksRequest } from "./leaks.ts";
 * checkLeaksRequest({ mstx_info: "step", start_index: 1 });
 * // { mstxInfo: "step", startIndex: 1, eventType: "HAL" }
 * ```
 */
export function checkLeaksRequest(
  body: Record<string, unknown>,
): CheckLeaksRequest {
  const { input_path, mstx_info, start_index, event_type } = body;
  let options;
  try {
    options = checkOptions({
      mstxInfo: mstx_info,
      startIndex: start_index,
      eventType: event_type,
    }, HTTP_NAMES);
  } catch (e) {
    if (e instanceof CheckLeaksError) badRequest(e.message);
    throw e;
  }
  if (
    input_path !== undefined && input_path !== null &&
    (typeof input_path !== "string" || !input_path.startsWith("/"))
  ) {
    badRequest("Invalid input_path: give an absolute path to a log file");
  }
  const { mstxInfo, startIndex, eventType } = options;
  const request: CheckLeaksRequest = { mstxInfo, startIndex, eventType };
  if (typeof input_path === "string") request.inputPath = input_path;
  return request;
}

/**
 * The routes; mount them at the root.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { MemoryService } from "../analysis/memory_api.ts";
 * import { leaksRoutes } from "./leaks.ts";
 * export function mount(service: MemoryService): Hono {
 *   return new Hono().route("/", leaksRoutes(service));
 * }
 * ```
 */
export function leaksRoutes(service: MemoryService): Hono {
  const processes = (pid: number | undefined) => service.memory(pid);
  return new Hono()
    .get("/leaks", (c) => {
      const pid = queryPid(readQuery(c, ["pid"]).pid);
      return c.json({
        processes: processes(pid).map(({ pid, step, suspects }) => ({
          pid,
          step,
          suspects,
        })),
      });
    })
    .get("/fluctuation", (c) => {
      const pid = queryPid(readQuery(c, ["pid"]).pid);
      return c.json({
        processes: processes(pid).map(({ pid, step, fluctuation }) => ({
          pid,
          step,
          fluctuation,
        })),
      });
    })
    .post("/check_leaks", async (c) => {
      const request = checkLeaksRequest(await readJsonObject(c, CHECK_FIELDS));
      const results = await service.checkLeaks(request);
      return c.json({
        leaks_found: results.some((r) => r.leakCount > 0),
        results: results.map((r) => ({ ...r, report: formatCheckLeaks(r) })),
      });
    });
}
