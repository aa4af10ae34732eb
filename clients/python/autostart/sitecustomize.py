"""Put first on a job's PYTHONPATH by ``./stompwatch run`` (and ``env``):
Python imports this at start-up, so a training script that never imports
stompwatch is traced all the same (its tensor memory recorded, its
out-of-memory errors reported, ``--watch`` windows opened on Aten ops). The
client waits for ``import torch`` and costs nothing before it.

It then runs the ``sitecustomize`` it shadows, if the job has one further
along the path, so a site's own start-up code still runs. Nothing here may
stop the job: a failure is one line on stderr.
"""

import importlib.machinery
import importlib.util
import os
import sys


def _start_client() -> None:
    try:
        import stompwatch  # noqa: F401  (standard library only until torch comes)
    except Exception as e:  # never the job's problem
        print(f"stompwatch: the Python client did not start: {type(e).__name__}: {e}; "
              "the job runs without it", file=sys.stderr)


def _run_shadowed() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_start_client()
_run_shadowed()
