"""``import msmemscope.describe as describe``: stompwatch's describer."""

from stompwatch.describe import describer

__all__ = ["describer"]
