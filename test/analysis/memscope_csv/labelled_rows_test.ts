import assert from "node:assert/strict";
import {
  RowWriter,
  writeEventRow,
} from "../../../analysis/memscope_csv/mod.ts";

Deno.test("a labelled allocation's row names its op, carries its owners in Attr and its Python stack", () => {
  const w = new RowWriter();
  writeEventRow(w, 9, {
    kind: "alloc",
    pid: 7,
    tid: 8,
    ts: 5,
    device: -1,
    addr: 0x1000,
    size: 64,
    pool: "HOST",
    result: 0,
    allocationId: 3,
    op: "torch._ops.aten.mul.Tensor",
    owner: "model@encoder",
    pythonStack: "train.py(19): loss_of;train.py(27): <module>",
  }, 64);
  assert.equal(
    new TextDecoder().decode(w.view()),
    '9,MALLOC,HOST,torch._ops.aten.mul.Tensor,5,7,8,cpu,0x0000000000001000,"{allocation_id:3,addr:0x0000000000001000,size:64,owner:model@encoder,used:64}",train.py(19): loss_of;train.py(27): <module>,\n',
  );
});
