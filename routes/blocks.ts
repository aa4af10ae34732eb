/**
 * `GET /processes/{pid}/blocks`: the live allocations of one traced
 * process, newest first, so a curl user knows which address to watch.
 *
 * @module
 */

import { Hono } from "hono";
import { POOLS } from "../analysis/events.ts";
import type { BlockFilter, WatchService } from "../watch/types.ts";
import { readQuery } from "./_body.ts";
import { badRequest } from "./_errors.ts";
import { queryPid } from "./_fields.ts";

/** Blocks listed when no `limit` is given. */
export const DEFAULT_BLOCK_LIMIT = 100;
/** The most blocks one answer lists. */
export const MAX_BLOCK_LIMIT = 10_000;

function count(
  text: string | undefined,
  { name, min, max }: { name: string; min: number; max: number },
): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]{1,16}$/.test(text) || Number(text) < min || Number(text) > max) {
    badRequest(
      `Invalid ${name}: ${
        JSON.stringify(text.slice(0, 40))
      } is not an integer from ${min} to ${max}`,
    );
  }
  return Number(text);
}

/**
 * Validates the query of `GET /processes/{pid}/blocks`.
 *
 * @example
 * ```ts
 * import { blockFilter } from "./blocks.ts";
 * blockFilter({ pool: "HAL", min_size: "4096" }); // { pool: "HAL", minSize: 4096, limit: 100 }
 * ```
 */
export function blockFilter(
  query: Record<string, string | undefined>,
): BlockFilter {
  const filter: BlockFilter = {
    limit:
      count(query.limit, { name: "limit", min: 1, max: MAX_BLOCK_LIMIT }) ??
        DEFAULT_BLOCK_LIMIT,
  };
  const device = count(query.device, {
    name: "device",
    min: 0,
    max: 2147483647,
  });
  if (device !== undefined) filter.device = device;
  const minSize = count(query.min_size, {
    name: "min_size",
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
  });
  if (minSize !== undefined) filter.minSize = minSize;
  if (query.pool !== undefined) {
    const pool = POOLS.find((p) => p === query.pool);
    if (pool === undefined) {
      badRequest(
        `Invalid pool: ${JSON.stringify(query.pool.slice(0, 40))}; use one of ${
          POOLS.join(", ")
        }`,
      );
    }
    filter.pool = pool;
  }
  return filter;
}

/**
 * The `/processes/{pid}/blocks` route; answers
 * `{pid, liveAllocations, matched, blocks: [...]}`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { WatchService } from "../watch/types.ts";
 * import { blocksRoutes } from "./blocks.ts";
 * export function mount(service: WatchService): Hono {
 *   return new Hono().route("/processes", blocksRoutes(service));
 * }
 * ```
 */
export function blocksRoutes(service: WatchService): Hono {
  return new Hono().get("/:pid/blocks", async (c) => {
    const pid = queryPid(c.req.param("pid"))!;
    const query = readQuery(c, ["device", "pool", "min_size", "limit"]);
    return c.json(await service.listBlocks(pid, blockFilter(query)));
  });
}
