"""What importing the package sets going: standard library only, so the
dispatch mode waits for torch: installed now if torch is already imported,
else right after ``import torch`` finishes (a meta path finder that wraps
torch's loader)."""

import atexit
import importlib.abc
import sys

from ._client import CLIENT


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Runs the client's start once the ``torch`` module has executed."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            CLIENT.changed()
        loader.exec_module = exec_module
        return spec


def _at_exit() -> None:
    from . import _memory
    _memory.close()


def begin() -> None:
    atexit.register(_at_exit)
    if "torch" in sys.modules:
        CLIENT.changed()
    elif CLIENT.hook(required=False) is not None:
        sys.meta_path.insert(0, _AfterTorch())
