"""Owner tags for tensor memory, as msMemScope's ``describe.describer``:
a decorator, a context manager, or a call on a tensor. Storages created
while tags are open carry them, joined with ``@``, in ``owner:`` of their
MALLOC row. At most 3 tags nest; a fourth is refused.

>>> from stompwatch import describe
>>> with describe.describer(owner="model"):   # doctest: +SKIP
...     model = build()
>>> @describe.describer(owner="step")          # doctest: +SKIP
... def step(): ...
>>> describe.describer(t, owner="kv_cache")    # doctest: +SKIP
"""

import functools
from typing import Any, Callable, Optional

from . import _checks
from ._client import CLIENT

__all__ = ["describer"]


class _Context:
    """Tags what is allocated while open; also usable as a decorator."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    def __enter__(self):
        if len(CLIENT.owners) >= _checks.OWNER_DEPTH:
            raise ValueError(f"Cannot describe: at most {_checks.OWNER_DEPTH} owner tags nest "
                             f"({'@'.join(CLIENT.owners)} are open); close one before opening {self.owner}")
        CLIENT.owners.append(self.owner)
        CLIENT.changed()  # the dispatch mode's fast path is for unlabelled storages
        return self

    def __exit__(self, exc_type=None, exc_val=None, exc_tb=None):
        # The innermost occurrence of this tag: msMemScope's manual
        # __enter__/__exit__ pairs may use two objects with one owner.
        for i in range(len(CLIENT.owners) - 1, -1, -1):
            if CLIENT.owners[i] == self.owner:
                del CLIENT.owners[i]
                break
        CLIENT.changed()
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(f"Cannot describe: a describer decorates a function, got {type(func).__name__}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _Context(self.owner):
                return func(*args, **kwargs)
        return wrapper


class Describer:
    """``describer(owner=...)`` opens a context; ``describer(t, owner=...)``
    tags a tensor's storage (or an address) at once."""

    def __call__(self, obj: Any = None, owner: str = "") -> Optional[_Context]:
        owner = _checks.check_owner(owner)
        if obj is None:
            return _Context(owner)
        from . import _memory
        if _checks.is_tensor(obj):
            CLIENT.hook()
            _memory.tag(obj, owner)
        elif isinstance(obj, int) and not isinstance(obj, bool):
            _checks.check_int("Cannot describe: the address", obj, 1)
            CLIENT.hook()
            _memory.tag_address(obj, owner)
        else:
            raise TypeError(f"Cannot describe: expected a tensor, an int address or no object, got "
                            f"{type(obj).__name__}")
        return None


describer = Describer()
