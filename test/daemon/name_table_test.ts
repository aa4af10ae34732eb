import assert from "node:assert/strict";
import { NameTable } from "../../daemon/name_table.ts";

/** Writes `names` 8-byte aligned into one buffer, as records hold them, with
 * garbage after each name (the ring never clears the pad bytes). */
function layout(names: string[]) {
  const buf = new ArrayBuffer(64 * 1024);
  const bytes = new Uint8Array(buf);
  const at: Array<{ start: number; length: number }> = [];
  let start = 0;
  for (const name of names) {
    const { written } = new TextEncoder().encodeInto(
      name,
      bytes.subarray(start),
    );
    at.push({ start, length: written });
    const next = start + ((written + 8) & ~7);
    bytes.fill(at.length * 37, start + written, next); // different each time
    start = next;
  }
  return { words: new Uint32Array(buf), at };
}

Deno.test("a name gets one id, whatever follows it in the ring", () => {
  const { words, at } = layout(["Add", "Mul", "Add", "Addx", ""]);
  const t = new NameTable();
  const ids = at.map(({ start, length }) => t.intern(words, start, length));
  assert.deepEqual(ids, [0, 1, 0, 2, 3]);
  assert.deepEqual(t.texts, ["Add", "Mul", "Addx", ""]);
  assert.equal(t.idOf("Mul"), 1);
  assert.equal(t.idOf("Sub"), undefined);
});

Deno.test("names of every length up to 4 words, and UTF-8, keep their ids as the table grows", () => {
  const names = Array.from(
    { length: 2000 },
    (_, i) => `op${"ä".repeat(i % 7)}${i}`.slice(0, 1 + (i % 17)) + i,
  );
  const { words, at } = layout(names);
  const t = new NameTable();
  const first = at.map(({ start, length }) => t.intern(words, start, length));
  const again = at.map(({ start, length }) => t.intern(words, start, length));
  assert.deepEqual(again, first);
  first.forEach((id, i) => assert.equal(t.texts[id], names[i]));
});

Deno.test("once full, new names get no id and known ones keep theirs", () => {
  const t = new NameTable();
  const words = new Uint32Array(2);
  for (let i = 0; i < NameTable.MAX; i++) {
    words[0] = i;
    assert.equal(t.intern(words, 0, 4), i);
  }
  words[0] = NameTable.MAX;
  assert.equal(t.intern(words, 0, 4), -1);
  words[0] = 7;
  assert.equal(t.intern(words, 0, 4), 7);
});
