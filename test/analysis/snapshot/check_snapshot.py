"""Checks snapshot files the way pytorch.org/memory_viz and PyTorch read them.

    python3 check_snapshot.py FILE[=LOG.csv] ...

For every file: the pickle opcodes (protocol 4 exactly, nothing the viewer's
unpickler lacks, no objects), the value types, the structure and invariants
the viewer relies on (PYTORCH.md section 4), a replay of its allocator-state
view (MemoryViz.js `simulate_memory` at every event, and `find_segment` for
every live block), and the installed torch/cuda/_memory_viz.py run on it
(`segsum`, `trace`, `segments`, `memory`, `trace_plot`, `segment_plot`).
With `=LOG.csv` (`=LOG.csv@PID` for one process), the live bytes at the end are recomputed from the log on
their own and compared. Prints one JSON object per file; exits 1 on any
failure.
"""

import csv
import io
import json
import pickle
import pickletools
import re
import sys

ALLOWED_OPS = {
    "PROTO", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "SETITEM",
    "APPENDS", "APPEND", "BININT1", "BININT2", "BININT", "LONG1",
    "SHORT_BINUNICODE", "BINUNICODE", "NONE", "NEWTRUE", "NEWFALSE",
    "MEMOIZE", "BINGET", "LONG_BINGET", "BINFLOAT", "STOP", "FRAME",
}
MAX_APPENDS = 1000  # the viewer spreads one APPENDS batch into one call
RUNTIME_POOLS = {"HAL", "HOST", "HOST_PINNED"}


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class NoObjects(pickle.Unpickler):
    def find_class(self, module, name):
        raise Fail(f"pickle names a class: {module}.{name}")


def check_opcodes(raw):
    ops = list(pickletools.genops(raw))
    check(ops[0][0].name == "PROTO" and ops[0][1] == 4, f"not protocol 4: {ops[0][0].name} {ops[0][1]}")
    marks = []
    for op, arg, _ in ops:
        check(op.name in ALLOWED_OPS, f"opcode {op.name} is not one the viewer reads")
        check(op.proto <= 4, f"opcode {op.name} is from protocol {op.proto}")
        if op.name == "LONG1":
            check(-(2**63) <= arg < 2**63, f"integer {arg} wider than 8 bytes")
    # APPENDS batch sizes: count items between a MARK and its APPENDS at one depth.
    depth_items = []
    for op, _, _ in ops:
        n = op.name
        if n == "MARK":
            depth_items.append(0)
            continue
        if n in ("APPENDS", "SETITEMS"):
            items = depth_items.pop()
            if n == "APPENDS":
                check(items <= MAX_APPENDS, f"APPENDS of {items} items")
        if depth_items:
            # one value finished at this depth per value-producing opcode
            if n in ("EMPTY_DICT", "EMPTY_LIST", "BININT1", "BININT2", "BININT",
                     "LONG1", "SHORT_BINUNICODE", "BINUNICODE", "NONE",
                     "NEWTRUE", "NEWFALSE", "BINGET", "LONG_BINGET", "BINFLOAT"):
                depth_items[-1] += 1
    return len(ops)


def check_types(v, path="$"):
    stack = [(v, path)]
    while stack:
        x, p = stack.pop()
        t = type(x)
        if t is dict:
            for k, val in x.items():
                check(type(k) is str, f"{p}: key {k!r} is not a str")
                stack.append((val, f"{p}.{k}"))
        elif t is list:
            stack.extend((val, f"{p}[{i}]") for i, val in enumerate(x))
        else:
            check(t in (str, int, float, bool, type(None)), f"{p}: a {t.__name__}")


def check_structure(snap):
    check(isinstance(snap, dict), "top level is not a dict")
    check("segments" in snap and "device_traces" in snap, "segments or device_traces missing")
    traces = snap["device_traces"]
    check(isinstance(traces, list) and len(traces) >= 1, "device_traces must list at least one device")
    categories = set()
    for d, trace in enumerate(traces):
        check(isinstance(trace, list), f"device_traces[{d}] is not a list")
        for i, e in enumerate(trace):
            a = e.get("action")
            check(a in ("alloc", "free_requested", "free_completed", "segment_alloc",
                        "segment_free", "segment_map", "segment_unmap", "oom", "snapshot"),
                  f"device {d} entry {i}: action {a!r}")
            if a == "oom":
                check("device_free" in e and "size" in e, f"device {d} entry {i}: oom without size/device_free")
            elif a != "snapshot":
                check(isinstance(e.get("addr"), int) and isinstance(e.get("size"), int),
                      f"device {d} entry {i}: addr/size")
            check("time_us" in e and isinstance(e.get("frames"), list), f"device {d} entry {i}: time_us/frames")
            if a == "free_requested":
                nxt = trace[i + 1] if i + 1 < len(trace) else None
                check(nxt is not None and nxt["action"] == "free_completed" and nxt["addr"] == e["addr"],
                      f"device {d} entry {i}: free_requested not followed by its free_completed")
            if "category" in e:
                categories.add(e["category"])
    check(not categories or "unknown" in categories, "trace categories without 'unknown' (the viewer throws)")
    for s, seg in enumerate(snap["segments"]):
        for k in ("device", "address", "total_size", "stream", "segment_type", "allocated_size",
                  "active_size", "requested_size", "frames", "blocks"):
            check(k in seg, f"segment {s}: {k} missing")
        check(0 <= seg["device"] < len(traces), f"segment {s}: device {seg['device']} has no trace list")
        at = seg["address"]
        for b, blk in enumerate(seg["blocks"]):
            check(blk["state"] in ("active_allocated", "active_pending_free", "inactive"), f"segment {s} block {b}: state")
            check(("frames" in blk) == ("requested_size" in blk), f"segment {s} block {b}: frames without requested_size")
            check(blk["address"] == at, f"segment {s} block {b}: at {blk['address']}, tiling says {at}")
            check(blk["size"] > 0, f"segment {s} block {b}: size {blk['size']}")
            at += blk["size"]
        check(at == seg["address"] + seg["total_size"], f"segment {s}: blocks add up to {at - seg['address']}, not {seg['total_size']}")
        active = sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
        check(seg["allocated_size"] == active, f"segment {s}: allocated_size {seg['allocated_size']} != {active}")


def viewer_replay(snap, device):
    """MemoryViz.js annotate_snapshot elision + simulate_memory at every index."""
    trace = []
    for e in snap["device_traces"][device]:
        if e["action"] == "free_completed" and trace and trace[-1]["action"] == "free_requested" \
                and trace[-1]["addr"] == e["addr"]:
            trace[-1] = dict(trace[-1], action="free")
            continue
        trace.append(e)
    segs = []  # [addr, size]
    blocks = {}
    for seg in snap["segments"]:
        if seg["device"] != device:
            continue
        segs.append([seg["address"], seg["total_size"]])
        for b in seg["blocks"]:
            if b["state"] in ("active_allocated", "active_pending_free"):
                blocks[b["address"]] = b["size"]

    def covered(addr):
        return any(s <= addr < s + n for s, n in segs)

    for addr in blocks:
        check(covered(addr), f"device {device}: end-state block {addr} outside every segment")
    for i in range(len(trace) - 1, 0, -1):
        e = trace[i]
        a = e["action"]
        if a in ("free", "free_completed"):
            blocks[e["addr"]] = e["size"]
            check(covered(e["addr"]), f"device {device} event {i}: undoing {a} puts block {e['addr']} outside every segment")
        elif a == "free_requested":
            check(e["addr"] in blocks, f"device {device} event {i}: free_requested of unknown block {e['addr']}")
        elif a == "alloc":
            blocks.pop(e["addr"], None)
        elif a in ("segment_free", "segment_unmap"):
            segs.append([e["addr"], e["size"]])
        elif a in ("segment_alloc", "segment_map"):
            idx = next((k for k, s in enumerate(segs) if s[0] == e["addr"]), None)
            check(idx is not None, f"device {device} event {i}: undoing segment_alloc of unknown segment {e['addr']}")
            gone = segs.pop(idx)
            for addr in blocks:
                if gone[0] <= addr < gone[0] + gone[1]:
                    check(covered(addr), f"device {device} event {i}: block {addr} left outside every segment")
    return len(trace)


def run_memory_viz(snap):
    from torch.cuda import _memory_viz as mv

    out = {}
    stats = mv.segsum(snap)
    out["total_reserved"] = sum(s["total_size"] for s in snap["segments"])
    m = re.search(r"segments: (\d+)", stats)
    out["segsum_segments"] = int(m.group(1))
    t = mv.trace(snap)
    out["trace_entries"] = [int(x) for x in re.findall(r"^(\d+) entries$", t, re.M)]
    mv.segments(snap, format_flamegraph=lambda s: s)
    flame = mv.memory(snap, format_flamegraph=lambda s: s)
    out["allocated"] = sum(int(line.rsplit(" ", 1)[1]) for line in flame.splitlines()
                           if ";active_allocated;" in line)
    for d, trace in enumerate(snap["device_traces"]):
        if trace or any(s["device"] == d for s in snap["segments"]):
            mv.trace_plot(snap, device=d)
            mv.segment_plot(snap, device=d)
    return out


def stamp_us(text):
    t = text.strip()
    return int(t[:-3]) if len(t) >= 18 else int(t)


def live_from_log(path, pid=None):
    """Bytes in use at the end of the log, per device, from the CSV alone.

    The log's rules: rows by timestamp, then ID; a FREE with device N/A
    frees what its process allocated at that address; a process that records
    allocator blocks on a device uses them (its runtime allocations are
    reserve, and freeing one frees the blocks in it); one that does not uses
    its runtime allocations whole; an allocation over live memory of its
    device means that memory's free was lost.
    """
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Event"] in ("MALLOC", "FREE")
                and (pid is None or r["Process Id"] == pid)]
    rows.sort(key=lambda r: (stamp_us(r["Timestamp(ns)"]), int(r["ID"])))
    devs = {r["Device Id"] for r in rows}
    numeric = [int(d) for d in devs if d.isdigit()]
    cpu = (max(numeric) + 1 if numeric else 0) if devs & {"cpu", "host"} else None
    dev_of = lambda d: cpu if d in ("cpu", "host") else int(d)
    block_pids = {(r["Process Id"], dev_of(r["Device Id"])) for r in rows
                  if r["Event Type"] not in RUNTIME_POOLS and r["Device Id"] != "N/A"}
    owner = {}  # (pid, blockish, addr) -> device
    segs = {}  # device -> {addr: size} of runtime allocations
    used = {}  # device -> {addr: size} of memory in use
    for r in rows:
        blockish = r["Event Type"] not in RUNTIME_POOLS
        ptr = r["Ptr"]
        addr = int(ptr, 16) if ptr.startswith("0x") else int(ptr)
        key = (r["Process Id"], blockish, addr)
        if r["Event"] == "MALLOC":
            size = int(re.search(r"size:(\d+)", r["Attr"]).group(1))
            d = dev_of(r["Device Id"])
            owner[key] = d
            u = used.setdefault(d, {})
            sg = segs.setdefault(d, {})
            if blockish:
                for a in [a for a, n in u.items() if a < addr + size and addr < a + n]:
                    del u[a]
                u[addr] = size
                continue
            if addr in sg:  # a runtime allocation again at a live address
                old = sg.pop(addr)
                for a in [a for a in u if addr <= a < addr + old]:
                    del u[a]
            sg[addr] = size
            if (r["Process Id"], d) not in block_pids:
                u[addr] = size
            continue
        d = owner.pop(key, None)
        if d is None:
            continue
        u = used.setdefault(d, {})
        if blockish:
            u.pop(addr, None)
        else:
            size = segs.get(d, {}).pop(addr, 0)
            for a in [a for a in u if addr <= a < addr + size]:
                del u[a]
    return {d: sum(v.values()) for d, v in used.items()}


def main(args):
    failed = False
    for arg in args:
        path, _, log = arg.partition("=")
        log, _, pid = log.partition("@")
        result = {"file": path}
        try:
            with open(path, "rb") as f:
                raw = f.read()
            if raw[:1] == b"\x80":
                result["opcodes"] = check_opcodes(raw)
                snap = NoObjects(io.BytesIO(raw)).load()
            else:
                snap = json.loads(raw)
            check_types(snap)
            check_structure(snap)
            result["devices"] = len(snap["device_traces"])
            result["viewer_events"] = [viewer_replay(snap, d) for d in range(len(snap["device_traces"]))]
            result.update(run_memory_viz(snap))
            result["allocated_by_device"] = {}
            for seg in snap["segments"]:
                n = sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
                key = str(seg["device"])
                result["allocated_by_device"][key] = result["allocated_by_device"].get(key, 0) + n
            if log:
                expected = {str(k): v for k, v in live_from_log(log, pid or None).items() if v}
                got = {k: v for k, v in result["allocated_by_device"].items() if v}
                check(expected == got, f"live bytes per device {got}, the log says {expected}")
            result["ok"] = True
        except Fail as e:
            result["ok"] = False
            result["error"] = str(e)
            failed = True
        except Exception as e:  # a crash in PyTorch's own code on our file
            result["ok"] = False
            result["error"] = f"{type(e).__name__}: {e}"
            failed = True
        print(json.dumps(result))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
