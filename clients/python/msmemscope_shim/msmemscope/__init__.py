"""msMemScope's Python API, answered by stompwatch: what
``./stompwatch run --as-msmemscope`` puts first on the job's path, so a
script written for msMemScope runs unchanged. Names with no stompwatch
counterpart raise RuntimeError saying so.
"""

from stompwatch import check_leaks, config, start, step, stop, watcher
from stompwatch import mstx

from . import describe

__all__ = ["watcher", "describe", "mstx", "check_leaks", "config", "start", "stop", "step", "check_inefficient",
           "analyze", "list_analyzers", "take_snapshot"]


def _missing(name: str):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"msmemscope.{name} is not available under stompwatch; see ./stompwatch --help "
                           "for the analyses it runs")
    refuse.__name__ = name
    return refuse


check_inefficient = _missing("check_inefficient")
take_snapshot = _missing("take_snapshot")


def list_analyzers() -> list:
    """The analyzers ``analyze`` takes here."""
    return ["leaks"]


def analyze(analyzer_type: str, **kwargs):
    """``analyze("leaks", input_path=..., mstx_info=..., start_index=...)``."""
    if analyzer_type != "leaks":
        raise ValueError(f"Unsupported analyzer: {analyzer_type!r}; stompwatch runs {list_analyzers()}")
    return check_leaks(**kwargs)
