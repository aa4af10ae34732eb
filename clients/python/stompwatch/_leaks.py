"""check_leaks: msMemScope's offline leak check over an event log, run by
stompwatch's own implementation (``./stompwatch check-leaks``), so the rule
has one owner."""

import json
import os
import shutil
import subprocess
from typing import List, Optional

from . import _checks

TIMEOUT_S = 600
WAIT_MS = 3000


def _launcher() -> str:
    home = os.environ.get("STOMPWATCH_HOME")
    here = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    for candidate in ([os.path.join(home, "stompwatch")] if home else []) + [os.path.join(here, "stompwatch")]:
        if os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            return candidate
    found = shutil.which("stompwatch")
    if found:
        return found
    raise RuntimeError("Cannot check leaks: the stompwatch command was not found; set STOMPWATCH_HOME to the "
                       "stompwatch checkout")


def check_leaks(input_path: str, mstx_info: str, start_index: int = 0,
                event_type: Optional[str] = None) -> List[dict]:
    """Prints msMemScope's leak lines for the blocks allocated between marks
    A and B (the ``start_index``-th mark named ``mstx_info`` and the next)
    and not freed by mark C; returns those leaks as dicts (``device``,
    ``bytes``, ``ptr``, ``id``, ``owner``, ...). ``event_type`` (ours, not
    msMemScope's) picks the pool: ``HAL`` by default, ``HOST`` for CPU tensors.

    >>> stompwatch.check_leaks(input_path="out/host/memscope_dump_1.csv", mstx_info="step", start_index=0)  # doctest: +SKIP
    """
    if not isinstance(input_path, str):
        raise TypeError(f"Cannot check leaks: input_path must be a str, got {type(input_path).__name__}")
    if not os.path.isfile(input_path):
        raise ValueError(f"Cannot check leaks: {input_path} is not a file; give a memscope_dump_*.csv")
    if not isinstance(mstx_info, str) or not mstx_info:
        raise (TypeError if not isinstance(mstx_info, str) else ValueError)(
            "Cannot check leaks: mstx_info must be the non-empty message of the marks A, B and C")
    _checks.check_int("Cannot check leaks: start_index", start_index, 0)
    if event_type is not None and event_type not in ("HAL", "HOST", "PTA", "HOST_PINNED", "ATB", "MINDSPORE"):
        raise ValueError(f"Cannot check leaks: event_type {event_type!r} is not a pool; use HAL, HOST or PTA")
    from . import _memory
    from ._client import CLIENT
    hook = CLIENT.hook(required=False)
    if hook is not None:
        # Checking this job's own log: what it did so far must be in it.
        _memory.flush()
        hook.wait_consumed(WAIT_MS)
    args = [_launcher(), "check-leaks", "--input", os.path.abspath(input_path), "--mstx-info", mstx_info,
            "--start-index", str(start_index)]
    if event_type:
        args += ["--event-type", event_type]
    text = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
    if text.returncode not in (0, 1):
        raise RuntimeError(text.stderr.strip() or f"Cannot check leaks: check-leaks exited {text.returncode}")
    if text.stdout:
        print(text.stdout, end="" if text.stdout.endswith("\n") else "\n")
    data = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=TIMEOUT_S)
    result = json.loads(data.stdout)
    return [{"device": device["device"], **leak} for device in result.get("devices", [])
            for leak in device.get("leaks", [])]
