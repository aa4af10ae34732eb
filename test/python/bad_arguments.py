"""Test job (f): every bad argument of the public API gets a ValueError or
TypeError that states the limit, before anything reaches the daemon. Run
under ./stompwatch run; exits non-zero when a check fails."""

import os
import sys
import tempfile
import unittest

import torch

import stompwatch
from stompwatch import describe, mstx, watcher


class BadArguments(unittest.TestCase):

    def refused(self, exc, pattern, fn, *args, **kwargs):
        with self.assertRaisesRegex(exc, pattern):
            fn(*args, **kwargs)

    def test_watch(self):
        t = torch.ones(4)
        self.refused(TypeError, "name is required", watcher.watch, t)
        self.refused(TypeError, "name must be a str", watcher.watch, t, name=7)
        self.refused(ValueError, "1 to 64 characters, got 65", watcher.watch, t, name="n" * 65)
        self.refused(ValueError, "1 to 64 characters, got 0", watcher.watch, t, name="")
        self.refused(ValueError, "slash", watcher.watch, t, name="a/b")
        self.refused(ValueError, "-1 \\(unlimited\\) or at least 1, got 0", watcher.watch, t, name="t", dump_nums=0)
        self.refused(ValueError, "got -2", watcher.watch, t, name="t", dump_nums=-2)
        self.refused(TypeError, "dump_nums must be an int", watcher.watch, t, name="t", dump_nums="3")
        self.refused(TypeError, "length is required with an address", watcher.watch, t.data_ptr(), name="t")
        self.refused(TypeError, "length is only for an address", watcher.watch, t, length=4, name="t")
        self.refused(ValueError, "length must be at least 1, got 0", watcher.watch, t.data_ptr(), length=0, name="t")
        self.refused(ValueError, "address must be at least 1", watcher.watch, 0, length=4, name="t")
        self.refused(TypeError, "expected a tensor or an int address, got bool", watcher.watch, True, length=4,
                     name="t")
        self.refused(TypeError, "got list", watcher.watch, [1], name="t")
        self.refused(ValueError, "the tensor is empty", watcher.watch, torch.ones(0), name="t")
        self.refused(ValueError, "not inside one live allocation", watcher.watch, 4096, length=8, name="t")
        watcher.watch(t, name="twice")
        self.refused(ValueError, "already open", watcher.watch, torch.ones(2), name="twice")
        watcher.remove(t)
        self.refused(ValueError, "no open watch overlaps", watcher.remove, t)
        self.refused(TypeError, "length is required", watcher.remove, t.data_ptr())

    def test_mstx(self):
        self.refused(TypeError, "must be a str", mstx.mark, 5)
        self.refused(ValueError, "1 to 156 bytes", mstx.mark, "")
        self.refused(ValueError, "got 157 bytes", mstx.mark, "m" * 157)
        self.refused(ValueError, "no NUL", mstx.range_start, "a\0b")
        self.refused(TypeError, "stream must be None or a stream", mstx.mark, "m", stream="s")
        self.refused(TypeError, "range id must be an int", mstx.range_end, "1")
        self.refused(ValueError, "range id must be at least 1", mstx.range_end, 0)

    def test_describe(self):
        self.refused(ValueError, "1 to 128 characters, got 129", describe.describer, owner="o" * 129)
        self.refused(ValueError, "1 to 128 characters, got 0", describe.describer)
        self.refused(TypeError, "owner must be a str", describe.describer, owner=3)
        self.refused(ValueError, "contains '@'", describe.describer, owner="a@b")
        self.refused(TypeError, "expected a tensor, an int address or no object", describe.describer, "t",
                     owner="x")
        self.refused(ValueError, "not inside a tensor storage", describe.describer, 4096, owner="x")
        self.refused(TypeError, "decorates a function", describe.describer(owner="x"), 5)
        with describe.describer(owner="a"), describe.describer(owner="b"), describe.describer(owner="c"):
            self.refused(ValueError, "at most 3 owner tags nest", describe.describer(owner="d").__enter__)

    def test_config(self):
        self.refused(ValueError, "Unsupported config key: data_format; stompwatch takes call_stack", stompwatch.config,
                     data_format="db")
        self.refused(ValueError, "Unsupported config key: bogus", stompwatch.config, bogus="1")
        self.refused(TypeError, "values are strings", stompwatch.config, events=5)
        self.refused(ValueError, "alloc, free, launch, access", stompwatch.config, events="alloc,bogus")
        self.refused(ValueError, "python:N", stompwatch.config, call_stack="java:3")
        self.refused(ValueError, "0 to 1000", stompwatch.config, call_stack="python:5000")
        self.refused(ValueError, "full-content", stompwatch.config, watch="a b,c")
        self.refused(ValueError, "leaks, decompose, inefficient", stompwatch.config, analysis="magic")
        self.refused(ValueError, "op, kernel", stompwatch.config, level="9")
        self.refused(TypeError, "takes 0 positional", stompwatch.step, 1)

    def test_check_leaks(self):
        with tempfile.NamedTemporaryFile(suffix=".csv") as f:
            self.refused(TypeError, "input_path must be a str", stompwatch.check_leaks, 5, "step", 0)
            self.refused(ValueError, "is not a file", stompwatch.check_leaks, "/nonexistent.csv", "step", 0)
            self.refused(ValueError, "non-empty message", stompwatch.check_leaks, f.name, "", 0)
            self.refused(ValueError, "start_index must be at least 0, got -1", stompwatch.check_leaks, f.name,
                         "step", -1)
            self.refused(TypeError, "start_index must be an int", stompwatch.check_leaks, f.name, "step", "0")
            self.refused(ValueError, "is not a pool", stompwatch.check_leaks, f.name, "step", 0, event_type="GPU")

    def test_connect(self):
        self.refused(TypeError, "output directory or socket", stompwatch.connect, 5)
        with tempfile.TemporaryDirectory() as d:
            self.refused(RuntimeError, "no daemon found at .*start one with ./stompwatch daemon", stompwatch.connect,
                         d)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=1).result
    sys.exit(0 if result.wasSuccessful() and result.testsRun else 1)
