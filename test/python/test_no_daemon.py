"""The client outside ./stompwatch run: importing it takes the standard
library only, and everything that needs the daemon fails at once with a
RuntimeError that says how to start one; a daemon that does not answer is a
timeout, never a hang. Run with python3 -m unittest, no hook preloaded."""

import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "..", "..", "clients", "python")


class NoDaemon(unittest.TestCase):

    def run_python(self, code: str) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("STOMPWATCH_") and k != "LD_PRELOAD"}
        env["PYTHONPATH"] = CLIENT
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)

    def test_import_takes_the_standard_library_only(self):
        r = self.run_python("import sys, stompwatch; print('torch' in sys.modules)")
        self.assertEqual(r.stdout.strip(), "False", r.stderr)

    def test_watch_and_mark_without_a_daemon_say_how_to_start_one(self):
        r = self.run_python(
            "import stompwatch\n"
            "for call in (lambda: stompwatch.watcher.watch(4096, length=8, name='w'),\n"
            "             lambda: stompwatch.mstx.mark('step'), stompwatch.step):\n"
            "    try:\n"
            "        call()\n"
            "    except RuntimeError as e:\n"
            "        print(e)\n")
        lines = r.stdout.strip().split("\n")
        self.assertEqual(len(lines), 3, r.stdout + r.stderr)
        for line in lines:
            self.assertIn("Cannot reach the stompwatch daemon: this process is not traced", line)
            self.assertIn("./stompwatch run -- python3 SCRIPT", line)

    def test_a_daemon_that_never_answers_is_a_timeout(self):
        sys.path.insert(0, CLIENT)
        from stompwatch import _daemon
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "silent.sock")
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(1)
            began = time.monotonic()
            with self.assertRaisesRegex(RuntimeError, "did not answer in 0.5 s; check that it is running"):
                _daemon.request("GET", "/health", sock=path, timeout=0.5)
            self.assertLess(time.monotonic() - began, 30)
            server.close()

    def test_a_socket_that_is_gone_says_how_to_start_a_daemon(self):
        sys.path.insert(0, CLIENT)
        from stompwatch import _daemon
        with self.assertRaisesRegex(RuntimeError, "Cannot reach the stompwatch daemon: /nonexistent.sock: .*"
                                    "./stompwatch daemon --output DIR"):
            _daemon.request("GET", "/health", sock="/nonexistent.sock")


if __name__ == "__main__":
    unittest.main()
