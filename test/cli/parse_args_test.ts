import assert from "node:assert/strict";
import { parseArgs as nodeParseArgs } from "node:util";
import { parseArgs } from "../../cli/_parse_args.ts";

const OPTIONS = {
  output: { type: "string" as const, short: "o" },
  input: { type: "string" as const },
  json: { type: "boolean" as const },
  verbose: { type: "boolean" as const, short: "v" },
};

/** What a parser gives: its values and positionals, or its error's text. */
function outcome(parse: () => { values: object; positionals: string[] }) {
  try {
    const r = parse();
    return { values: { ...r.values }, positionals: r.positionals };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

Deno.test("the command line parser gives what node:util's strict parseArgs gives, values and errors alike", () => {
  const cases = [
    ["--input", "a.csv", "-o", "x.pickle", "--json"],
    ["--input=a=b", "-ofile"],
    ["-o=x"],
    ["-vv", "-vofile"],
    ["-o", "-"],
    ["--input", "-"],
    ["-o", "-x"],
    ["--input", "-x"],
    ["--=x"],
    ["-q"],
    ["--bogus"],
    ["--json=1"],
    ["--input"],
    ["-o"],
    ["a", "--", "-x", "--input"],
    ["-"],
    ["--__proto__", "x"],
    ["--input", "a", "--input", "b"],
  ];
  for (const args of cases) {
    assert.deepEqual(
      outcome(() => parseArgs(args, OPTIONS)),
      outcome(() =>
        nodeParseArgs({
          args,
          options: OPTIONS,
          strict: true,
          allowPositionals: true,
        })
      ),
      JSON.stringify(args),
    );
  }
});
