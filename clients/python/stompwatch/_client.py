"""What this process knows of stompwatch: the hook, the daemon's socket,
what is being recorded, the open watches and owner tags. One instance,
``CLIENT``; the public modules read and change it, and every change that
could start or stop the dispatch mode goes through ``CLIENT.changed()``.
"""

import os
import sys

from . import _daemon, _ring


def _call_stack_depth(value: str) -> int:
    for part in value.replace("，", ",").split(","):
        kind, _, depth = part.strip().partition(":")
        if kind == "python":
            return int(depth) if depth.isdigit() else 50
    return 0


class Client:
    """Process-wide state of the Python client."""

    def __init__(self) -> None:
        self._hook = None
        self._looked = False
        self.socket = _daemon.socket_path()
        # Recording tensor memory is on under `run` unless it was turned off.
        events = [e.strip() for e in os.environ.get("STOMPWATCH_EVENTS", "alloc,free,launch").split(",")]
        self.recording = "alloc" in events or "free" in events
        self.access = "access" in events
        self.call_stack = _call_stack_depth(os.environ.get("STOMPWATCH_CALL_STACK", ""))
        self.started = True
        # `run --watch`: the hook opens windows on op names, so Aten ops are
        # bracketed from the start for it to see them.
        self.cli_watch = bool(os.environ.get("STOMPWATCH_WATCH"))
        # From config(watch=...): op names that open and close later watches.
        self.watch_start = ""
        self.watch_end = ""
        self.full_content = False
        # name -> (addr, length, keep): a storage kept alive while it is watched.
        self.watches = {}
        self.owners = []
        self.listeners = []

    def hook(self, required: bool = True):
        """The hook in this process, attached to a daemon; None (or an error
        when ``required``) otherwise."""
        if not self._looked:
            self._looked = True
            self._hook = _ring.loaded_hook()
        hook = self._hook
        if hook is not None and hook.attached():
            return hook
        if required:
            raise RuntimeError(
                "Cannot reach the stompwatch daemon: this process is not traced (the stompwatch hook is " +
                ("loaded but has no ring: STOMPWATCH_RING_DIR is unset or the daemon is gone" if hook else
                 "not loaded") + "); start the job with ./stompwatch run -- python3 SCRIPT, or call "
                "stompwatch.connect(DIR) with the output directory of a running ./stompwatch daemon")
        return None

    def adopt(self, hook, socket: str) -> None:
        self._hook = hook
        self._looked = True
        self.socket = socket

    @property
    def active(self) -> bool:
        """Whether the dispatch mode has anything to do."""
        return self.started and (bool(self.watches) or self.cli_watch or self.recording or self.access) and \
            self.hook(required=False) is not None

    def changed(self) -> None:
        """Installs or removes the dispatch mode to match what is asked."""
        if "torch" not in sys.modules:
            return  # installed when torch is first given (see _dispatch.when_torch)
        from . import _dispatch
        _dispatch.sync(self)


CLIENT = Client()
