/**
 * The watch domain: parsing `--watch`, naming and reading dump files, the
 * checksum CSV, the verdict on a watched block, and the service types routes
 * see.
 *
 * @example
 * ```ts
 * import { binFileName, parseWatchSpec, WatchVerdict } from "./mod.ts";
 * const spec = parseWatchSpec("Fill:0,Mul");
 * const verdict = new WatchVerdict();
 * binFileName({ device: 0, tid: 1, op: spec.end, callCount: 1, name: "w", outid: 0, phase: "after" });
 * ```
 *
 * @module
 */

export * from "./types.ts";
export * from "./limits.ts";
export * from "./watch_spec.ts";
export * from "./dump_names.ts";
export * from "./parse_dump_name.ts";
export * from "./checksum_csv.ts";
export * from "./verdict.ts";
