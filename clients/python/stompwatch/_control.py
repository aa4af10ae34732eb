"""start, stop, step, config and connect: what the process records, and
which daemon it reports to."""

import json
import os
import sys

from . import _daemon, _memory, _ring
from ._client import CLIENT, _call_stack_depth

# msMemScope's config keys that mean something here; its others are refused by name.
CONFIG_KEYS = ("call_stack", "events", "watch", "analysis", "level")
EVENTS = ("alloc", "free", "launch", "access")
ANALYSES = ("leaks", "decompose", "inefficient")
LEVELS = ("0", "1", "op", "kernel")

_step_range = None


def start() -> None:
    """Resumes recording and watching after :func:`stop` (on by default)."""
    CLIENT.started = True
    CLIENT.changed()


def stop() -> None:
    """Stops recording and watching from Python until :func:`start`; with
    nothing to do, the dispatch mode is removed."""
    CLIENT.started = False
    CLIENT.changed()


def step() -> None:
    """Ends the current step and begins the next: a ``step start`` range,
    the one the daemon's online leak and fluctuation analyses count steps by."""
    global _step_range
    hook = CLIENT.hook()
    _memory.flush()
    if _step_range is not None:
        hook.range_end(_step_range)
    _step_range = int(hook.range_start(b"step start", None))


def _split(key: str, value: str, allowed) -> list:
    parts = [p.strip() for p in value.replace("，", ",").split(",") if p.strip()]
    bad = [p for p in parts if p not in allowed]
    if bad or not parts:
        raise ValueError(f"Invalid config {key}={value!r}: use a comma-separated list of {', '.join(allowed)}")
    return parts


def _watch(value: str):
    parts = [p.strip() for p in value.replace("，", ",").split(",")]
    full = parts[-1] == "full-content"
    if full:
        parts = parts[:-1]
    if len(parts) > 2 or any(len(p) > 95 or any(c.isspace() for c in p) for p in parts):
        raise ValueError(f"Invalid config watch={value!r}: use [start],[end][,full-content] with op names, "
                         "e.g. \"torch._ops.aten.add.Tensor,torch._ops.aten.mul.Tensor\" or \"full-content\"")
    start = parts[0].split(":")[0] if len(parts) == 2 else ""
    end = parts[-1] if parts else ""
    return start, end, full


def config(**kwargs: str) -> None:
    """Sets what is recorded, with msMemScope's keys and string values:
    ``call_stack="python:10"``, ``events="alloc,free,access"``,
    ``watch="start_op,end_op,full-content"``, ``analysis="leaks"``,
    ``level="op"``. Other msMemScope keys are refused by name.

    >>> stompwatch.config(events="alloc,free,access", call_stack="python:5")  # doctest: +SKIP
    """
    for key, value in kwargs.items():
        if key not in CONFIG_KEYS:
            raise ValueError(f"Unsupported config key: {key}; stompwatch takes {', '.join(CONFIG_KEYS)}")
        if not isinstance(value, str):
            raise TypeError(f"Invalid config {key}: values are strings as in msMemScope, got {type(value).__name__}")
    updates = {}
    if "events" in kwargs:
        events = _split("events", kwargs["events"], EVENTS)
        updates["recording"] = "alloc" in events or "free" in events
        updates["access"] = "access" in events
    if "call_stack" in kwargs:
        value = kwargs["call_stack"]
        for part in value.replace("，", ",").split(","):
            kind, _, depth = part.strip().partition(":")
            if kind not in ("c", "python") or (depth and not (depth.isdigit() and 0 <= int(depth) <= 1000)):
                raise ValueError(f"Invalid config call_stack={value!r}: use c:N and/or python:N, N from 0 to 1000")
        updates["call_stack"] = _call_stack_depth(value)
    if "watch" in kwargs:
        updates["watch_start"], updates["watch_end"], updates["full_content"] = _watch(kwargs["watch"])
    if "analysis" in kwargs:
        _split("analysis", kwargs["analysis"], ANALYSES)
    if "level" in kwargs:
        _split("level", kwargs["level"], LEVELS)
    for k, v in updates.items():
        setattr(CLIENT, k, v)
    CLIENT.changed()


def connect(target: str) -> None:
    """Reports to the running daemon whose output directory (or socket) is
    ``target``, for a process not started through ``./stompwatch run``.

    >>> stompwatch.connect("stompwatch_out")  # doctest: +SKIP
    """
    if not isinstance(target, str) or not target:
        raise TypeError("Cannot connect: give the daemon's output directory or socket as a str")
    out = os.path.dirname(target) if target.endswith(".sock") else target
    try:
        with open(os.path.join(out, "daemon.json")) as f:
            paths = json.load(f)
    except OSError:
        raise RuntimeError(f"Cannot connect: no daemon found at {out} (no daemon.json); start one with "
                           f"./stompwatch daemon --output {out}") from None
    status, _ = _daemon.request("GET", "/health", sock=paths["socket"], timeout=5)
    if status != 200:
        raise RuntimeError(f"Cannot connect: the daemon at {paths['socket']} answered {status}")
    hook = _ring.loaded_hook()
    if hook is None:
        if os.environ.get("ASCEND_LAUNCH_BLOCKING", "1") != "1" and "torch_npu" in sys.modules:
            raise RuntimeError("Cannot connect: this job runs NPU ops asynchronously (ASCEND_LAUNCH_BLOCKING is not 1), "
                               "so samples would not bracket them; start it with ASCEND_LAUNCH_BLOCKING=1 or through "
                               "./stompwatch run")
        # Read by the hook when it makes the ring: ops are synchronous here
        # (CPU), or will be (NPU, before torch_npu starts its queue).
        os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"
        hook = _ring.load_hook(paths["hookLibrary"], paths["ringDir"])
    if not hook.attached():
        raise RuntimeError("Cannot connect: the stompwatch hook in this process has no ring to that daemon; "
                           "start the job with ./stompwatch run --daemon " + paths["socket"] + " -- python3 SCRIPT")
    os.environ["STOMPWATCH_SOCKET"] = paths["socket"]
    CLIENT.adopt(hook, paths["socket"])
    CLIENT.changed()
