/**
 * stompwatch's command line: parses arguments and dispatches. Every error a
 * person can cause ends here as one line on stderr and exit code 2.
 *
 * @module
 */
import { parseArgs } from "./cli/_parse_args.ts";
// Each command's modules are imported when it runs: an offline analysis
// never loads the daemon, hono or the FFI tables, which took most of its
// start-up (about 70 of 100 ms before the file was opened).

const USAGE = `usage:
  stompwatch daemon [--output DIR] [--listen 127.0.0.1:PORT] [--checksum xxh3|crc64-msmemscope]
  stompwatch run [--watch=[start[:outid]],end[,full-content]] [--output DIR] [--daemon SOCKET]
                 [--checksum xxh3|crc64-msmemscope] [--as-msmemscope] [--events alloc,free,access]
                 [--call-stack python:N] -- CMD [ARGS...]
  stompwatch env [--output DIR] [--watch=[start[:outid]],end[,full-content]]
                                     print export lines that attach a job started by hand
  stompwatch compare --input BASE.csv,COMPARE.csv [--level op|kernel] [--output DIR]
                                     per-op memory of two steps' event logs, side by side
  stompwatch check-leaks --input F.csv --mstx-info TEXT [--start-index N] [--event-type HAL]
                         [--max-leaks N] [--json]
                                     blocks allocated between marks A and B, not freed by C
  stompwatch snapshot --input F.csv -o FILE [--device N] [--pid P] [--format pickle|json]
                      [--max-entries N]
                                     a snapshot pytorch.org/memory_viz opens, from any event log
  stompwatch test                    fmt, lint, type check, build and run every test
  stompwatch bench                   run the benchmarks`;

class UsageError extends Error {}

function checksumOf(value: string | undefined): "xxh3" | "crc64-msmemscope" {
  if (value === undefined || value === "xxh3" || value === "crc64-msmemscope") {
    return value ?? "xxh3";
  }
  throw new UsageError(
    `Invalid --checksum value: ${value}; use xxh3 (default) or crc64-msmemscope`,
  );
}

interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

function parse(args: string[], names: string[]): Parsed {
  const options = Object.fromEntries(
    names.map((n) => [n, { type: "string" as const }]),
  );
  let parsed: Parsed;
  try {
    parsed = parseArgs(args, options);
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n${USAGE}`);
  }
  // `--output ''` would be the working directory, `--listen ''` no listener.
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === "") {
      throw new UsageError(
        `Empty value for --${name}: give it a value or leave the option out\n${USAGE}`,
      );
    }
  }
  return parsed;
}

/** OUT from --output, refused when its socket path could not be bound. */
async function outputOf(
  value: string | boolean | undefined,
): Promise<string> {
  const { absolute, checkSocketPath } = await import("./daemon/config.ts");
  const dir = absolute(value as string ?? "stompwatch_out");
  checkSocketPath(dir);
  return dir;
}

async function daemonCommand(args: string[]): Promise<number> {
  const { values } = parse(args, ["output", "listen", "checksum"]);
  const { startDaemon, stopOnSignals } = await import("./daemon/daemon.ts");
  const daemon = await startDaemon({
    outputDir: await outputOf(values.output),
    listen: values.listen as string | undefined,
    checksum: checksumOf(values.checksum as string | undefined),
  });
  stopOnSignals(daemon);
  const { socket, ringDir } = daemon.paths;
  console.log(
    `stompwatch daemon ${Deno.pid} listening on ${socket}${
      values.listen ? ` and ${values.listen}` : ""
    }`,
  );
  console.log(
    `attach a job by hand with: eval "$(./stompwatch env --output ${daemon.paths.outputDir})"  (rings in ${ringDir})`,
  );
  await daemon.stopped;
  return 0;
}

/** A --watch value the hook will read as it is meant; refused otherwise. */
async function checkedWatch(
  watch: string | undefined,
): Promise<string | undefined> {
  if (watch === undefined) return undefined;
  const { parseWatchSpec } = await import("./daemon/watch_spec.ts");
  try {
    parseWatchSpec(watch);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return watch;
}

async function runCommand(args: string[]): Promise<number> {
  const split = args.indexOf("--");
  if (split < 0 || split === args.length - 1) {
    throw new UsageError(`run needs the job after --\n${USAGE}`);
  }
  const own = args.slice(0, split);
  const asMsmemscope = own.includes("--as-msmemscope");
  const { values, positionals } = parse(
    own.filter((a) => a !== "--as-msmemscope"),
    ["watch", "output", "daemon", "checksum", "events", "call-stack"],
  );
  if (positionals.length) {
    throw new UsageError(
      `Unexpected argument: ${positionals[0]}; put the job after --`,
    );
  }
  const watch = await checkedWatch(values.watch as string | undefined);
  const { absolute } = await import("./daemon/config.ts");
  const { runJob } = await import("./daemon/run.ts");
  return await runJob({
    command: args.slice(split + 1),
    watch,
    outputDir: await outputOf(values.output),
    daemonSocket: values.daemon ? absolute(values.daemon as string) : undefined,
    checksum: checksumOf(values.checksum as string | undefined),
    python: {
      asMsmemscope,
      events: checkedEvents(values.events as string | undefined),
      callStack: checkedCallStack(values["call-stack"] as string | undefined),
    },
  });
}

/** msMemScope's --events list; the Python client reads it. */
function checkedEvents(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const known = ["alloc", "free", "launch", "access"];
  const parts = value.split(/[,，]/).map((p) => p.trim());
  const bad = parts.filter((p) => !known.includes(p));
  if (!value.trim() || bad.length) {
    throw new UsageError(
      `Invalid --events value: ${value}; use a comma-separated list of ${
        known.join(", ")
      }`,
    );
  }
  return parts.join(",");
}

/** msMemScope's --call-stack (`c:N`, `python:N`); Python frames are ours to fill. */
function checkedCallStack(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ok = value.split(/[,，]/).every((p) =>
    /^(c|python)(:(\d{1,4}))?$/.test(p.trim()) &&
    Number(p.split(":")[1] ?? 0) <= 1000
  );
  if (!ok) {
    throw new UsageError(
      `Invalid --call-stack value: ${value}; use python:N and/or c:N, N from 0 to 1000`,
    );
  }
  return value;
}

async function envCommand(args: string[]): Promise<number> {
  const { values } = parse(args, ["output", "watch"]);
  const watch = await checkedWatch(values.watch as string | undefined);
  const { jobEnv } = await import("./daemon/config.ts");
  const { answeringDaemon } = await import("./daemon/run.ts");
  // Exports for a daemon that is gone would leave the job untraced.
  const paths = await answeringDaemon(
    `${await outputOf(values.output)}/stompwatch.sock`,
    { orElse: ", then run this again" },
  );
  const env = jobEnv(paths, { watch });
  // Single quotes: `eval` expands nothing in them ($, `, \, "); only the
  // job's own LD_PRELOAD and PYTHONPATH, after ours, are left to the shell.
  const quote = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`;
  for (const [k, v] of Object.entries(env)) {
    const keep = k === "LD_PRELOAD"
      ? '"${LD_PRELOAD:+:$LD_PRELOAD}"'
      : k === "PYTHONPATH"
      ? '"${PYTHONPATH:+:$PYTHONPATH}"'
      : "";
    console.log(`export ${k}=${quote(v)}${keep}`);
  }
  return 0;
}

async function compareCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, ["input", "level", "output"]);
  if (positionals.length) {
    throw new UsageError(
      `Unexpected argument: ${
        positionals[0]
      }; give both logs as --input BASE.csv,COMPARE.csv`,
    );
  }
  const { compareSummary, runCompare } = await import("./cli/compare.ts");
  const { path, rows } = await runCompare({
    input: values.input as string | undefined,
    level: values.level as string | undefined,
    outputDir: values.output as string ?? "stompwatch_out",
    at: new Date(),
  });
  for (const line of compareSummary(path, rows)) console.log(line);
  return 0;
}

async function main(args: string[]): Promise<number> {
  const [cmd, ...rest] = args;
  if (cmd === "check-leaks" || cmd === "compare" || cmd === "snapshot") {
    // A command line serves no one else: small reads need no thread.
    const { readSmallLogPiecesOnLoop } = await import("./ffi/bindings.ts");
    readSmallLogPiecesOnLoop();
  }
  switch (cmd) {
    case "daemon":
      return await daemonCommand(rest);
    case "run":
      return await runCommand(rest);
    case "env":
      return await envCommand(rest);
    case "compare":
      return await compareCommand(rest);
    case "check-leaks": {
      const { checkLeaksCli } = await import("./cli/check_leaks.ts");
      const { lines, code } = await checkLeaksCli(rest);
      if (lines.length) console.log(lines.join("\n"));
      return code;
    }
    case "snapshot": {
      const { snapshotCli } = await import("./cli/snapshot.ts");
      const { lines, warnings } = await snapshotCli(rest);
      for (const line of lines) console.log(line);
      for (const line of warnings) console.error(line);
      return 0;
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      console.log(USAGE);
      return 0;
    default:
      throw new UsageError(`Unknown command: ${cmd}\n${USAGE}`);
  }
}

/**
 * The one line a person sees for an error that ends the command. Deno's own
 * permission message ("run again with the --allow-... flag") is no advice
 * for a stompwatch user, who cannot pass Deno flags through ./stompwatch.
 */
function errorLine(e: unknown): string {
  if (e instanceof Deno.errors.NotCapable) {
    const m = /^Requires (\w+) access to (.+?),/.exec(e.message);
    const what = m ? `${m[1]} access to ${m[2]}` : "an access it needs";
    return `Cannot go on: this command is not allowed ${what}; ./stompwatch grants each command only the files and loopback addresses named on its command line, so check those`;
  }
  return e instanceof Error ? e.message : String(e);
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (e) {
    console.error(`stompwatch: ${errorLine(e)}`);
    Deno.exit(2);
  }
}
