/**
 * The one-go number parse of memory rows (WebAssembly) against the row's
 * getters, and the filtered scan's separators against a plain parser.
 */
import assert from "node:assert/strict";
import {
  MEM_DEVICE,
  MEM_ID,
  MEM_PID,
  MEM_PTR,
  MEM_SIZE,
  MEM_SLOTS,
  MEM_STACKS,
  MEM_TIME_US,
  MEMSCOPE_HEADER,
  readMemscopeBytes,
} from "../../../analysis/memscope_csv/mod.ts";

const HEADER = MEMSCOPE_HEADER.join(",");
const enc = new TextEncoder();

function random(seed: number) {
  return (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
}

Deno.test("memoryNumbers gives exactly what the getters give, and declines every row it cannot read plainly", () => {
  const rand = random(11);
  // The plain form (first) most of the time, any form otherwise.
  const pick = <T>(xs: T[]) => xs[rand(8) ? 0 : rand(xs.length)];
  const lines = [HEADER];
  for (let id = 1; id <= 3000; id++) {
    const ids = [`${id}`, `${id}`, ` ${id}`, `"${id}"`, `1_${id}`, "x", ""];
    const ts = [
      `17647530839974${rand(100000)}`,
      `1764753083997${rand(1000)}`,
      `9999999999999999999`,
      `17647530839974982x0`,
      `"1764753083997498270"`,
      "",
    ];
    const devices = ["0", "3", "N/A", "cpu", "host", "1048576", "07", ""];
    const ptrs = [
      `0x${(rand(1 << 30) * 512).toString(16).padStart(16, "0")}`,
      "0x000012C049CB1600",
      "0xfffffffffffff000",
      "0x0020000000000000",
      `${rand(1 << 30)}`,
      "N/A",
      "0x",
      "0xg1",
      "9007199254740993",
    ];
    const sizes = [
      `size:${rand(1 << 20)}`,
      `size:-${rand(1 << 20)}`,
      "size: 512 ",
      "size:1_024",
      "size:+5",
      "size:-",
      "sizes:5,size:7",
      "x:1",
      "size:99999999999999999",
    ];
    const attr = pick([
      `"{allocation_id:${id},addr:0x10,${pick(sizes)},total:5}"`,
      `"{${pick(sizes)}}"`,
      `{${pick(sizes)}}`,
      `"{owner:a@b, ${pick(sizes)}}"`,
      "",
    ]);
    const stacks = pick([",", ",", `,"a.py(3): f",`, `,,"x.c:1 g"`, `,""`]);
    lines.push(
      `${pick(ids)},MALLOC,PTA,N/A,${pick(ts)},${pick(["7", "07", "-7"])},7,${
        pick(devices)
      },${pick(ptrs)},${attr}${stacks}`,
    );
  }
  const out = new Float64Array(MEM_SLOTS);
  let plain = 0, declined = 0;
  readMemscopeBytes(enc.encode(lines.join("\n") + "\n"), (r) => {
    if (!r.memoryNumbers(out)) {
      declined++;
      return;
    }
    plain++;
    assert.equal(out[MEM_ID], r.id);
    assert.equal(out[MEM_TIME_US], r.timestampUs);
    assert.equal(out[MEM_PID], r.pid);
    assert.equal(out[MEM_DEVICE], Number(r.device));
    assert.equal(out[MEM_PTR], r.ptr);
    assert.equal(out[MEM_SIZE], r.size ?? 0);
    const stacks = r.column("Call Stack(Python)") !== "" ||
      r.column("Call Stack(C)") !== "";
    // Quotes around an empty stack count as text (the getters then decide).
    if (stacks) assert.equal(out[MEM_STACKS], 1);
  });
  assert.ok(plain > 300 && declined > 300, `${plain} plain, ${declined} not`);
});

Deno.test("memoryNumbers reads a row as msMemScope writes it", () => {
  const text = `${HEADER}
12,FREE,PTA,N/A,1764753083997707775,3101864,3101864,1,0x000012c049cb1600,"{allocation_id:1,addr:0x000012c049cb1600,size:57856,total:20971520,used:0}",,
`;
  const out = new Float64Array(MEM_SLOTS);
  let ok = false;
  readMemscopeBytes(enc.encode(text), (r) => ok = r.memoryNumbers(out));
  assert.ok(ok);
  assert.deepEqual(
    [...out],
    [12, 1764753083997707, 3101864, 1, 0x12c049cb1600, 57856, 0],
  );
});

Deno.test("memscope_csv startsWith keeps the fields of rows with quoted commas and newlines whole", () => {
  const rand = random(3);
  const pieces = ["a", "b,c", 'say ""hi""', "x\ny", "", "long,".repeat(30)];
  let text = HEADER + "\n";
  const want: string[][] = [];
  for (let id = 1; id <= 2000; id++) {
    const event = rand(2) ? "MALLOC" : "KERNEL_LAUNCH";
    const name = pieces[rand(pieces.length)];
    const attr = `{k:${id},${pieces[rand(pieces.length)]},size:${id}}`;
    const stack = pieces[rand(pieces.length)];
    text += `${id},${event},PTA,"${name}",${id},1,1,${
      rand(3)
    },0x10,"${attr}","${stack}",c${id}\n`;
    if (event === "MALLOC") {
      const unq = (s: string) => s.replaceAll('""', '"');
      want.push([`${id}`, unq(name), unq(attr), unq(stack), `c${id}`]);
    }
  }
  const got: string[][] = [];
  readMemscopeBytes(enc.encode(text), (r) => {
    got.push([
      r.idText,
      r.name,
      r.attr,
      r.column("Call Stack(Python)"),
      r.column("Call Stack(C)"),
    ]);
  }, { startsWith: { Event: "M" }, bufferSize: 65536 });
  assert.deepEqual(got, want);
});
