"""Argument checks shared by the public functions, with msMemScope's limits
and the messages a Python user expects (ValueError, TypeError)."""

NAME_MAX = 64
OWNER_MAX = 128
OWNER_DEPTH = 3
MESSAGE_MAX = 156
# Characters that would break the event log's Attr map or the owner chain.
_OWNER_FORBIDDEN = set('@,{}:"\t\r\n')


def is_tensor(obj) -> bool:
    return type(obj).__module__.startswith("torch") and hasattr(obj, "untyped_storage")


def check_name(name) -> str:
    if name is None:
        raise TypeError("Cannot watch: name is required, e.g. watcher.watch(t, name=\"w\")")
    if not isinstance(name, str):
        raise TypeError(f"Cannot watch: name must be a str, got {type(name).__name__}")
    if not name or len(name) > NAME_MAX:
        raise ValueError(f"Cannot watch: name must have 1 to {NAME_MAX} characters, got {len(name)}")
    if any(c in name for c in "/\\\0\n\r") or name.strip() != name:
        raise ValueError(f"Cannot watch: name {name!r} has a slash, a control character or surrounding spaces; "
                         "it becomes part of file names")
    return name


def check_int(what: str, value, lowest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if value < lowest:
        raise ValueError(f"{what} must be at least {lowest}, got {value}")
    return value


def check_dump_nums(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Cannot watch: dump_nums must be an int (-1 for unlimited), got {type(value).__name__}")
    if value < -1 or value == 0:
        raise ValueError(f"Cannot watch: dump_nums must be -1 (unlimited) or at least 1, got {value}")
    return value


def check_owner(owner) -> str:
    if not isinstance(owner, str):
        raise TypeError(f"Cannot describe: owner must be a str, got {type(owner).__name__}")
    if not owner or len(owner) > OWNER_MAX:
        raise ValueError(f"Cannot describe: owner must have 1 to {OWNER_MAX} characters, got {len(owner)}")
    bad = sorted(set(owner) & _OWNER_FORBIDDEN)
    if bad:
        raise ValueError(f"Cannot describe: owner {owner!r} contains {''.join(bad)!r}; "
                         "@ joins nested owners and , { } : \" break the event log's Attr")
    return owner


def check_message(what: str, message) -> bytes:
    if not isinstance(message, str):
        raise TypeError(f"Cannot {what}: the message must be a str, got {type(message).__name__}")
    data = message.encode()
    if not data or len(data) > MESSAGE_MAX or b"\0" in data:
        raise ValueError(f"Cannot {what}: the message must have 1 to {MESSAGE_MAX} bytes of UTF-8 and no NUL, "
                         f"got {len(data)} bytes")
    return data


def check_stream(what: str, stream) -> None:
    if stream is not None and not isinstance(stream, int) and not hasattr(stream, "npu_stream") \
            and not hasattr(stream, "cuda_stream"):
        raise TypeError(f"Cannot {what}: stream must be None or a stream, got {type(stream).__name__}")
