"""Shared by the Ctrl-C tests: run a script in a child, interrupt it inside its long native call,
and require that it stopped with KeyboardInterrupt rather than running to its end."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

#: Prepended to every child script: Python leaves SIGINT ignored when it starts with it ignored
#: (a background job of a non-interactive shell, as a CI runner may start the tests), so the
#: child restores what an interactive Ctrl-C meets.
RESTORE_SIGINT = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"


def assert_stops_on_sigint(script: str, *args: str, what: str) -> None:
    """``script`` prints a line starting with ``started`` before its long call, then prints
    ``interrupted`` and exits 42 on KeyboardInterrupt (``finished`` if the call ran to its end).
    SIGINT goes 2 s after ``started``; 120 s is a hang guard, not a speed bound."""
    child = subprocess.Popen(
        [sys.executable, "-c", RESTORE_SIGINT + script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout = child.stdout
        assert stdout is not None
        started: list[str] = []
        reader = threading.Thread(target=lambda: started.append(stdout.readline()), daemon=True)
        reader.start()
        reader.join(300)
        assert started, ("no output from the child", child.poll())
        assert started[0].startswith("started"), (started, child.poll())
        time.sleep(2.0)  # well inside the native call
        child.send_signal(signal.SIGINT)
        try:
            out, err = child.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{what} ignored Ctrl-C for 120 s")
        assert child.returncode == 42, (out, err[-2000:])
        assert "interrupted" in out
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
