import assert from "node:assert/strict";
import { checkLeaksRequest } from "../../routes/leaks.ts";
import { HttpError } from "../../routes/_errors.ts";

function refused(body: Record<string, unknown>): string {
  try {
    checkLeaksRequest(body);
  } catch (e) {
    assert.ok(e instanceof HttpError);
    assert.equal(e.status, 400);
    return e.message;
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

Deno.test("POST /check_leaks checks its fields by the same rules as the command line, named as the body names them", () => {
  assert.deepEqual(checkLeaksRequest({ mstx_info: "step", start_index: 1 }), {
    mstxInfo: "step",
    startIndex: 1,
    eventType: "HAL",
  });
  assert.equal(
    checkLeaksRequest({ mstx_info: "s", event_type: "pta" }).eventType,
    "PTA",
  );
  assert.match(refused({}), /^Missing mstx_info: /);
  assert.match(refused({ mstx_info: " " }), /^Empty mstx_info: /);
  assert.match(
    refused({ mstx_info: "s", start_index: "1" }),
    /^Invalid start_index value: "1"; use a whole number from 0/,
  );
  assert.match(
    refused({ mstx_info: "s", event_type: "GPU" }),
    /^Invalid event_type value: "GPU"; use one of HAL, /,
  );
  assert.match(
    refused({ mstx_info: "s", input_path: "rel.csv" }),
    /^Invalid input_path: /,
  );
});
