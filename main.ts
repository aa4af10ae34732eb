/**
 * stompwatch's command line: parses arguments and dispatches. Every error a
 * person can cause ends here as one line on stderr and exit code 2.
 *
 * @module
 */
import { parse, USAGE, UsageError, usageOf } from "./cli/_usage.ts";
import { exitWith } from "./cli/_top.ts";
// Each command's modules are imported when it runs: an offline analysis
// never loads the daemon, hono or the FFI tables, which took most of its
// start-up (about 70 of 100 ms before the file was opened). ./stompwatch
// starts each analysis at its own entry point (cli/check_leaks_main.ts and
// its two siblings), bundled, which Deno's start-up does not walk from here
// to the daemon.

function checksumOf(value: string | undefined): "xxh3" | "crc64-msmemscope" {
  if (value === undefined || value === "xxh3" || value === "crc64-msmemscope") {
    return value ?? "xxh3";
  }
  throw new UsageError(
    `Invalid --checksum value: ${value}; use xxh3 (default) or crc64-msmemscope`,
  );
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

async function main(args: string[]): Promise<number> {
  const [cmd, ...rest] = args;
  switch (cmd) {
    case "daemon":
      return await daemonCommand(rest);
    case "run":
      return await runCommand(rest);
    case "env":
      return await envCommand(rest);
    case "check-leaks":
      return await (await import("./cli/check_leaks_main.ts"))
        .checkLeaksCommand(rest);
    case "compare":
      return await (await import("./cli/compare_main.ts")).compareCommand(rest);
    case "snapshot":
      return await (await import("./cli/snapshot_main.ts"))
        .snapshotCommand(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h": {
      // `stompwatch COMMAND --help` arrives as `help COMMAND` (the launcher).
      const usage = rest[0] ? usageOf(rest[0]) : USAGE;
      if (usage === undefined) {
        throw new UsageError(`Unknown command: ${rest[0]}\n${USAGE}`);
      }
      console.log(usage);
      return 0;
    }
    default:
      throw new UsageError(`Unknown command: ${cmd}\n${USAGE}`);
  }
}

if (import.meta.main) await exitWith(() => main(Deno.args));
