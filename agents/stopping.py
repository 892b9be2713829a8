"""A cooperative stop for a long agent call, asked from another thread (a web client that has gone).

Why thread-local and not a parameter: the call that should stop (a search's
play-outs) is many frames below the one that runs it (a search worker of the
web app), behind the `Agent.act` interface that has no place for it. The
runner wraps the call in `stoppable(event)`; the loops that spend the time
ask `stop_asked()` where they check their deadline, and end as if it had
passed. Nothing is killed: a thread cannot be.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_asked = threading.local()


@contextlib.contextmanager
def stoppable(event: threading.Event) -> Iterator[None]:
    """Within the block, `stop_asked()` on this thread is whether `event` is set."""
    previous = getattr(_asked, "event", None)
    _asked.event = event
    try:
        yield
    finally:
        _asked.event = previous


def stop_asked() -> bool:
    """Whether the call running on this thread was asked to stop (False outside `stoppable`)."""
    event: threading.Event | None = getattr(_asked, "event", None)
    return event is not None and event.is_set()
