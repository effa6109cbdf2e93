"""SIGTERM handled like Ctrl-C: what ``timeout``, systemd and Kubernetes send to stop a command.

``terminate_raises()`` (installed by the CLI shell for every command) turns SIGTERM into a
``Terminated`` exception in the main thread, so ``finally`` blocks run as they do for Ctrl-C: a
monitor stores its summary and stops the command it watches, a storage benchmark removes its temp
file. The shell then exits 143 (128 + SIGTERM), the convention for a process ended by SIGTERM.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(BaseException):  # noqa: N818 - a signal, not an error
    """SIGTERM arrived. A BaseException like KeyboardInterrupt (``except Exception`` never swallows it,
    every ``finally`` runs) but not one: the CLI framework would turn a KeyboardInterrupt into exit 130."""


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def terminate_raises() -> Iterator[None]:
    """While inside, SIGTERM raises ``Terminated`` (only in the main thread, where signals land)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
