import assert from "node:assert/strict";
import { parseWatchSpec, WATCH_SPEC_FORM } from "../../daemon/watch_spec.ts";

function rejects(value: string, reason: RegExp): void {
  assert.throws(() => parseWatchSpec(value), (error: Error) => {
    assert.ok(
      error.message.startsWith(
        `Invalid --watch value ${JSON.stringify(value)}: `,
      ),
      error.message,
    );
    assert.ok(error.message.endsWith(`; accepted form: ${WATCH_SPEC_FORM}`));
    assert.match(error.message, reason);
    return true;
  });
}

Deno.test("parseWatchSpec reads start, outid, end and full-content", () => {
  assert.deepEqual(parseWatchSpec("Fill:0,Mul,full-content"), {
    start: "Fill",
    outid: 0,
    end: "Mul",
    fullContent: true,
  });
});

Deno.test("parseWatchSpec reads ,end as a window with no start", () => {
  assert.deepEqual(parseWatchSpec(",Mul"), {
    outid: 0,
    end: "Mul",
    fullContent: false,
  });
});

Deno.test("parseWatchSpec accepts a start without outid and takes output 0", () => {
  assert.deepEqual(
    parseWatchSpec(
      "token0/layer0/module0/op0,token0/layer0/module0/op1,full-content",
    ),
    {
      start: "token0/layer0/module0/op0",
      outid: 0,
      end: "token0/layer0/module0/op1",
      fullContent: true,
    },
  );
});

Deno.test("parseWatchSpec reads a multi-digit outid", () => {
  assert.equal(parseWatchSpec("Add:12,Mul").outid, 12);
});

Deno.test("parseWatchSpec accepts the full-width comma as a separator", () => {
  assert.deepEqual(parseWatchSpec("Fill:1，Mul，full-content"), {
    start: "Fill",
    outid: 1,
    end: "Mul",
    fullContent: true,
  });
  assert.deepEqual(parseWatchSpec("，Mul"), {
    outid: 0,
    end: "Mul",
    fullContent: false,
  });
});

Deno.test("parseWatchSpec keeps dots, slashes and underscores of real op names", () => {
  const spec = parseWatchSpec(
    "torch._ops.aten.mse_loss.default:0,0/0_ElewiseOperation/0_AddI32Kernel",
  );
  assert.equal(spec.start, "torch._ops.aten.mse_loss.default");
  assert.equal(spec.end, "0/0_ElewiseOperation/0_AddI32Kernel");
});

Deno.test("parseWatchSpec splits start:outid at the last colon", () => {
  const spec = parseWatchSpec("aten::add:3,aten::mul");
  assert.equal(spec.start, "aten::add");
  assert.equal(spec.outid, 3);
  assert.equal(spec.end, "aten::mul");
});

Deno.test("parseWatchSpec refuses a start whose text after the last colon is not a number", () => {
  rejects(
    "aten::add,Mul",
    /outid must be a non-negative integer, got "add".*aten::add:0/,
  );
  rejects("Fill:x,Mul", /outid must be a non-negative integer, got "x"/);
  rejects("Fill:-1,Mul", /outid must be a non-negative integer/);
  rejects("Fill:+1,Mul", /outid must be a non-negative integer/);
  rejects("Fill:1.5,Mul", /outid must be a non-negative integer/);
});

Deno.test("parseWatchSpec refuses a value without a comma", () => {
  rejects("Mul", /a comma before end is required/);
  rejects("", /a comma before end is required/);
});

Deno.test("parseWatchSpec refuses a missing end op", () => {
  rejects(",", /end op is required/);
  rejects("Fill:0,", /end op is required/);
  rejects("Fill:0,,full-content", /end op is required/);
});

Deno.test("parseWatchSpec refuses start:outid with either part missing", () => {
  rejects(":0,Mul", /start op is missing before :outid/);
  rejects("Fill:,Mul", /outid is missing after the colon/);
  rejects(":,Mul", /outid is missing after the colon/);
});

Deno.test("parseWatchSpec refuses an outid with leading zeros", () => {
  rejects("Fill:01,Mul", /leading zeros, got 01/);
  rejects("Fill:00,Mul", /leading zeros/);
});

Deno.test("parseWatchSpec refuses an outid too large for the hook", () => {
  assert.equal(parseWatchSpec("Fill:2147483647,Mul").outid, 2147483647);
  rejects("Fill:2147483648,Mul", /larger than 2147483647/);
});

Deno.test("parseWatchSpec refuses a third field other than full-content", () => {
  rejects(
    "Fill:0,Mul,full",
    /third field must be exactly full-content, got "full"/,
  );
  rejects("Fill:0,Mul,Full-Content", /exactly full-content/);
  rejects("Fill:0,Mul,", /exactly full-content, got ""/);
  rejects("Fill:0,Mul, full-content", /exactly full-content/);
});

Deno.test("parseWatchSpec refuses more than three fields", () => {
  rejects("Fill:0,Mul,full-content,x", /4 fields given, at most 3/);
});

Deno.test("parseWatchSpec refuses op names with surrounding whitespace", () => {
  rejects("Fill:0, Mul", /end op " Mul" starts or ends with whitespace/);
  rejects(" Fill,Mul", /start op " Fill" starts or ends with whitespace/);
});

Deno.test("parseWatchSpec refuses op names with control characters", () => {
  rejects("Fi\u0000ll,Mul", /start op contains a control character/);
  rejects("Fill,M\nul", /end op contains a control character/);
});

Deno.test("parseWatchSpec refuses op names longer than the ring holds", () => {
  const long = "x".repeat(96);
  assert.equal(parseWatchSpec(`${"x".repeat(95)},Mul`).start, "x".repeat(95));
  rejects(`${long},Mul`, /start op is longer than 95 bytes/);
  rejects(`Fill,${long}`, /end op is longer than 95 bytes/);
  rejects(`Fill,${"算".repeat(32)}`, /end op is longer than 95 bytes/);
});

Deno.test("parseWatchSpec mixes both commas and gives the full-width value the ASCII value's fields", () => {
  assert.deepEqual(
    parseWatchSpec("Fill:0，Add"),
    parseWatchSpec("Fill:0,Add"),
  );
  assert.deepEqual(parseWatchSpec("aten::add:2，Mul,full-content"), {
    start: "aten::add",
    outid: 2,
    end: "Mul",
    fullContent: true,
  });
  rejects("Fill，Mul，full-content，x", /4 fields given, at most 3/);
});

Deno.test("parseWatchSpec refuses op names that JavaScript's trim() would shorten, whatever the space", () => {
  rejects("Fill:0,Mul\u3000", /end op "Mul\u3000" starts or ends/);
  rejects("\u00a0Fill,Mul", /start op "\u00a0Fill" starts or ends/);
  rejects("Fill,\ufeffMul", /end op .* starts or ends with whitespace/);
  rejects("Fill\u2029:1,Mul", /start op .* starts or ends with whitespace/s);
  // Spaces inside a name, and characters trim() keeps, are the op's own.
  assert.equal(parseWatchSpec("Fi ll,M\u200bul").end, "M\u200bul");
  assert.equal(parseWatchSpec("Fi ll,Mul").start, "Fi ll");
});

Deno.test("parseWatchSpec gives names back exactly as written, a lone surrogate or a BOM included", () => {
  assert.equal(parseWatchSpec("Fill\ud800:1,Mul").start, "Fill\ud800");
  assert.equal(parseWatchSpec("算子:1，M\u00e9l").end, "M\u00e9l");
  rejects("Fill,\ufeffMul", /end op "\ufeffMul" starts or ends/);
});
