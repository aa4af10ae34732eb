"""Requests to the daemon over its Unix socket, for what needs an answer
(watch, remove): HTTP with http.client over an AF_UNIX socket, with a
timeout on every request, so a daemon that is gone is an error, never a hang.
"""

import http.client
import json
import os
import socket

TIMEOUT_S = 10.0

_HOW_TO_START = ("start one with ./stompwatch daemon --output DIR and the job with "
                 "./stompwatch run --daemon DIR/stompwatch.sock -- python3 SCRIPT "
                 "(or just ./stompwatch run -- python3 SCRIPT), or call stompwatch.connect(DIR)")


class _UnixConnection(http.client.HTTPConnection):

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


def socket_path():
    """The daemon's socket as the environment names it, or None."""
    return os.environ.get("STOMPWATCH_SOCKET") or None


def request(method: str, path: str, body=None, sock=None, timeout: float = TIMEOUT_S):
    """Sends one request; returns (status, decoded JSON body).

    >>> request("GET", "/health")  # doctest: +SKIP
    (200, {'outputDir': ...})
    """
    sock = sock or socket_path()
    if not sock:
        raise RuntimeError(f"Cannot reach the stompwatch daemon: no daemon socket is known (STOMPWATCH_SOCKET is "
                           f"not set); {_HOW_TO_START}")
    conn = _UnixConnection(sock, timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
    except socket.timeout:
        raise RuntimeError(f"Cannot reach the stompwatch daemon: {sock} did not answer in {timeout:g} s; "
                           f"check that it is running, or {_HOW_TO_START}") from None
    except OSError as e:
        raise RuntimeError(f"Cannot reach the stompwatch daemon: {sock}: {e.strerror or e}; {_HOW_TO_START}") from None
    finally:
        conn.close()
    try:
        answer = json.loads(raw.decode() or "{}")
    except ValueError:
        answer = {"error": raw.decode(errors="replace")}
    return resp.status, answer
