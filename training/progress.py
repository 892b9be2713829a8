"""What a run shows as it goes, and its clock: shared by both trainers.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from tqdm import tqdm


class Progress:
    """What a run shows as it goes (see the module doc): bars on a terminal, lines in a log, or nothing.

    Lines go to stdout, above any bar; bars go to stderr, and only when stderr
    is a terminal (as `cardlab eval` does), so a redirected log gets a line per
    event instead of thousands of bar updates.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bars = enabled and sys.stderr.isatty()

    def say(self, text: str) -> None:
        if self.enabled:
            tqdm.write(text, file=sys.stdout)
            sys.stdout.flush()

    def bar(self, **kwargs: Any) -> tqdm:
        """A bar on stderr when on a terminal; its rate and ETA average over all the time since it began."""
        return tqdm(disable=not self.bars, file=sys.stderr, dynamic_ncols=True, smoothing=0, **kwargs)


class Deadline:
    """`max_minutes` of wall clock from now (0: never out of time)."""

    def __init__(self, minutes: float) -> None:
        self.end = time.monotonic() + minutes * 60.0 if minutes > 0 else None

    def passed(self) -> bool:
        return self.end is not None and time.monotonic() >= self.end


def next_multiple(steps: int, every: int) -> int:
    return (steps // every + 1) * every
