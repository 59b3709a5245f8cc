"""Ctrl-C while tuning: noted by a signal handler, acted on at points where nothing is half-written."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_requested = threading.Event()


def check() -> None:
    """Raise KeyboardInterrupt here if Ctrl-C was pressed: call only where stopping is safe."""
    if _requested.is_set():
        raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """Within the block the first Ctrl-C only sets a flag for `check`; a second one interrupts."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def note(signum, frame):
        if _requested.is_set():
            raise KeyboardInterrupt
        _requested.set()

    _requested.clear()
    previous = signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _requested.clear()
