"""The batch reads of a connection's scans, stopped and waited for when the check ends.

polars runs a scan's batch generator on its own threads and may leave one fetching after
the query that asked for it has its rows (a `head`, a filter's sample). A generator still
running Python on a polars thread when the interpreter exits aborts the process (`FATAL:
exception not rethrown`), and meanwhile it holds the source's connection. So the reads are
counted while they run (not while they wait at a `yield`), and `stop` tells them to end at
their next batch and waits until none runs.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from typing import TypeVar

T = TypeVar("T")

#: How long a closing scan waits for a running batch (one fetch) to end.
_WAIT_SECONDS = 60.0


class Reads:
    """The running batch generators of a connection's scans (`batches`) and the flag that
    stops them."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running = 0
        self._stopped = False

    def batches(self, fetched: Generator[T]) -> Iterator[T]:
        """`fetched`'s items, counted as running while each is made, and none after `stop`.
        `fetched` is the whole read: opening its cursor, each batch, closing the cursor."""
        self._enter()
        try:
            if self._stopped:  # a read that starts after its scan closed reads nothing
                return
            for item in fetched:
                if self._stopped:
                    return
                self._leave()
                try:
                    yield item
                finally:
                    self._enter()
        finally:
            fetched.close()  # its cursor closed while counted
            self._leave()

    def stop(self) -> None:
        """No more batches: wait (a while) until no generator is fetching one."""
        with self._changed:
            self._stopped = True
            self._changed.wait_for(lambda: self._running == 0, timeout=_WAIT_SECONDS)

    def _enter(self) -> None:
        with self._changed:
            self._running += 1

    def _leave(self) -> None:
        with self._changed:
            self._running -= 1
            self._changed.notify_all()
