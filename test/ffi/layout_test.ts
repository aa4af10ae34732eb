/**
 * ffi/bindings.ts copies the ring layout of stompwatch_ring.h by hand; the
 * daemon-side library reports what the compiler made of the header, and
 * every constant must agree with it, both ways.
 */
import assert from "node:assert/strict";
import { compiledLayout, REC, RING, SPEC } from "../../ffi/bindings.ts";
import { MAX_OP_NAME_BYTES } from "../../watch/limits.ts";

/** `{ RING: { H: { head: 64 } } }` as `RING.H.head -> 64n`. */
function flatten(prefix: string, value: unknown, out: Map<string, bigint>) {
  if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      flatten(`${prefix}.${k}`, v, out);
    }
  } else {
    out.set(prefix, BigInt(value as number | bigint));
  }
  return out;
}

Deno.test("every ring, record and watch-spec constant of bindings.ts is what the compiler made of the C headers", () => {
  const ours = new Map<string, bigint>();
  flatten("RING", RING, ours);
  flatten("REC", REC, ours);
  flatten("SPEC", SPEC, ours);
  const compiled = compiledLayout();
  const differ = [...ours].filter(([k, v]) => compiled.get(k) !== v)
    .map(([k, v]) => `${k}: bindings.ts ${v}, compiled ${compiled.get(k)}`);
  assert.deepEqual(differ, []);
  const unmirrored = [...compiled.keys()].filter((k) => !ours.has(k));
  assert.deepEqual(unmirrored, [], "reported by C, missing from bindings.ts");
});

Deno.test("the op-name limit checked at the edge is what the ring holds, its NUL aside", () => {
  assert.equal(MAX_OP_NAME_BYTES, RING.OP_NAME_MAX - 1);
});
