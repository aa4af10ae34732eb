import assert from "node:assert/strict";
import { WatchBook } from "../../watch/watch_book.ts";
import { ServiceError, type WatchRequest } from "../../watch/types.ts";
import { binFileName } from "../../watch/dump_names.ts";

function request(name: string): WatchRequest {
  return {
    pid: 4242,
    name,
    addr: 0x12c0000n,
    length: 64n,
    dumpNums: -1,
    fullContent: false,
  };
}

function window(name: string) {
  return {
    name,
    addr: 0x12c0000,
    length: 64,
    outid: 0,
    device: 0,
    fullContent: false,
  };
}

/** The after file of a watch named `name` at one op call: equal names overwrite each other. */
function afterFile(name: string): string {
  return binFileName({
    device: 0,
    tid: 7,
    op: "Mul",
    callCount: 1,
    name,
    outid: 0,
    phase: "after",
  });
}

function refusedWith(book: WatchBook, name: string, message: RegExp): void {
  assert.throws(() => book.add(request(name)), (e: ServiceError) => {
    assert.ok(e instanceof ServiceError);
    assert.equal(e.kind, "conflict");
    assert.match(e.message, message);
    return true;
  });
}

Deno.test("WatchBook refuses a second watch whose dump files would overwrite the first's, naming the first", () => {
  const book = new WatchBook(4242);
  book.add(request("c/d"));
  assert.equal(afterFile("c/d"), afterFile("c.d"));
  refusedWith(
    book,
    "c.d",
    /^Cannot watch block: pid 4242 already has a watch named "c\/d", whose dump files would have the same names \("\/" and control characters become "\." in file names\); remove it first or pick another name$/,
  );
  refusedWith(
    book,
    "c/d",
    /^Cannot watch block: pid 4242 already has a watch named "c\/d"; remove it first/,
  );
  assert.deepEqual(book.live().map((w) => w.name), ["c/d"]);
});

Deno.test("WatchBook takes the name again once the first watch is removed", () => {
  const book = new WatchBook(4242);
  book.add(request("c/d"));
  book.remove((w) => w.name === "c/d");
  assert.equal(book.add(request("c.d")).name, "c.d");
});

Deno.test("WatchBook refuses an API watch whose files a live --watch window already writes", () => {
  const book = new WatchBook(4242);
  book.openWindow(0x80000001, window("aten/add"));
  refusedWith(book, "aten.add", /already has a watch named "aten\/add"/);
});

Deno.test("WatchBook names a --watch window so that no two live watches write the same files", () => {
  const book = new WatchBook(4242);
  assert.equal(book.windowName("Fill", 1), "Fill");
  book.openWindow(0x80000001, window("Fill"));
  assert.equal(book.windowName("Fill", 2), "Fill.2");
  // An API watch already writes under Fill.3: the window goes around it.
  book.add(request("Fill.3"));
  assert.equal(book.windowName("Fill", 3), "Fill.3.2");
  book.openWindow(0x80000002, window(book.windowName("Fill", 3)));
  assert.equal(book.windowName("Fill", 3), "Fill.3.3");
  // A start op whose name has a "/" clashes with an API watch spelt with ".".
  book.add(request("a.b"));
  assert.equal(book.windowName("a/b", 1), "a/b.1");
  const files = book.live().map((w) => afterFile(w.name));
  assert.equal(new Set(files).size, files.length);
});
