/**
 * `GET /snapshot?pid=&device=&format=&max_entries=`: a snapshot of a traced
 * process's memory now, with its history so far (the newest `max_entries`
 * trace entries of each device, as the CLI's `--max-entries`), that
 * pytorch.org/memory_viz opens (pickle by default, or JSON). The body is
 * streamed as it is written.
 *
 * @module
 */
import { Hono } from "hono";
import type { MemoryService } from "../analysis/memory_api.ts";
import { readQuery } from "./_body.ts";
import { badRequest } from "./_errors.ts";
import { queryPid } from "./_fields.ts";

/**
 * The route; mount it at `/snapshot`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { MemoryService } from "../analysis/memory_api.ts";
 * import { snapshotRoutes } from "./snapshot.ts";
 * export function mount(service: MemoryService): Hono {
 *   return new Hono().route("/snapshot", snapshotRoutes(service));
 * }
 * ```
 */
export function snapshotRoutes(service: MemoryService): Hono {
  return new Hono().get("/", async (c) => {
    const q = readQuery(c, ["pid", "device", "format", "max_entries"]);
    const pid = queryPid(q.pid);
    if (pid === undefined) {
      badRequest(
        "Missing pid: give ?pid= of a traced process (GET /processes lists them)",
      );
    }
    let device: number | undefined;
    if (q.device !== undefined) {
      if (!/^(0|[1-9][0-9]{0,5})$/.test(q.device)) {
        badRequest(
          `Invalid device: ${JSON.stringify(q.device)} is not a device number`,
        );
      }
      device = Number(q.device);
    }
    const format = q.format ?? "pickle";
    if (format !== "pickle" && format !== "json") {
      badRequest(
        `Invalid format: ${
          JSON.stringify(format)
        }; use pickle (default) or json`,
      );
    }
    let maxEntries: number | undefined;
    if (q.max_entries !== undefined) {
      maxEntries = Number(q.max_entries);
      if (
        !/^[0-9]+$/.test(q.max_entries) || !Number.isSafeInteger(maxEntries)
      ) {
        badRequest(
          `Invalid max_entries: ${
            JSON.stringify(q.max_entries)
          }; give a whole number of 0 or more`,
        );
      }
    }
    const body = await service.snapshot({ pid, device, format, maxEntries });
    return c.body(body, 200, {
      "Content-Type": format === "json"
        ? "application/json"
        : "application/octet-stream",
      "Content-Disposition": `attachment; filename="snapshot_${pid}.${format}"`,
    });
  });
}
