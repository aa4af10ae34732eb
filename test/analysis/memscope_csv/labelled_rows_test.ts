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

Deno.test("an access is an ACCESS row typed READ, WRITE or UNKNOWN, naming the op, the tensor, its dtype, shape and bytes", () => {
  const w = new RowWriter();
  writeEventRow(w, 4, {
    kind: "access",
    pid: 7,
    tid: 8,
    ts: 5,
    device: 0,
    op: "torch._ops.aten.add_.Tensor",
    addr: 0x2000,
    size: 48,
    access: "WRITE",
    dtype: "torch.float32",
    shape: "4x3",
  }, 0);
  assert.equal(
    new TextDecoder().decode(w.view()),
    '4,ACCESS,WRITE,torch._ops.aten.add_.Tensor,5,7,8,0,0x0000000000002000,"{dtype:torch.float32,shape:4x3,size:48}",,\n',
  );
});

Deno.test("a framework op's start and end are OP_LAUNCH rows, ATEN_START and ATEN_END", () => {
  const w = new RowWriter();
  for (const framework of ["start", "end"] as const) {
    writeEventRow(w, 1, {
      kind: "op",
      pid: 7,
      tid: 8,
      ts: 5,
      device: 0,
      name: "torch._ops.aten.add_.Tensor",
      result: 0,
      framework,
    }, 0);
  }
  assert.equal(
    new TextDecoder().decode(w.view()),
    "1,OP_LAUNCH,ATEN_START,torch._ops.aten.add_.Tensor,5,7,8,0,N/A,,,\n" +
      "1,OP_LAUNCH,ATEN_END,torch._ops.aten.add_.Tensor,5,7,8,0,N/A,,,\n",
  );
});

Deno.test("a framework op's row carries its Python call stack", () => {
  const w = new RowWriter();
  writeEventRow(w, 2, {
    kind: "op",
    pid: 7,
    tid: 8,
    ts: 5,
    device: 0,
    name: "torch._ops.aten.add_.Tensor",
    result: 0,
    framework: "end",
    pythonStack: "train.py(3): <module>",
  }, 0);
  assert.equal(
    new TextDecoder().decode(w.view()),
    "2,OP_LAUNCH,ATEN_END,torch._ops.aten.add_.Tensor,5,7,8,0,N/A,,train.py(3): <module>,\n",
  );
});
