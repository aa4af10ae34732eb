/**
 * A refused field says what was given and what is accepted: a value of the
 * wrong type is not called missing, and a number JSON.parse reads as
 * Infinity is not shown as null.
 */
import assert from "node:assert/strict";
import { checkLeaksRequest } from "../../routes/leaks.ts";
import { markRequest } from "../../routes/marks.ts";
import { dumpNumsField, pidField, u64Field } from "../../routes/_fields.ts";
import { HttpError } from "../../routes/_errors.ts";

function refused(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof HttpError);
    assert.equal(e.status, 400);
    return e.message;
  }
  assert.fail("accepted");
}

Deno.test("POST /marks calls a message of the wrong type invalid and says what it got", () => {
  assert.match(
    refused(() => markRequest({ message: 123 })),
    /^Invalid message: got number 123; give the mark's text/,
  );
  assert.match(
    refused(() => markRequest({ message: "" })),
    /^Invalid message: it is empty; /,
  );
  assert.match(refused(() => markRequest({})), /^Missing field message: /);
});

Deno.test("a number too large for a double is said to be one, not shown as null", () => {
  const huge = JSON.parse("1e400");
  assert.match(
    refused(() => checkLeaksRequest({ mstx_info: "s", start_index: huge })),
    /^Invalid start_index value: a number too large to hold \(it reads as Infinity\); use a whole number from 0/,
  );
  for (
    const message of [
      refused(() => pidField(huge)),
      refused(() => u64Field(huge, "length")),
      refused(() => dumpNumsField(-huge)),
    ]
  ) {
    assert.match(
      message,
      /a number too large to hold \(it reads as -?Infinity\)/,
    );
    assert.doesNotMatch(message, /null/);
  }
});
