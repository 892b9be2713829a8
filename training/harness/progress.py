"""What a run shows as it goes, and its clock: shared by both trainers.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from tqdm import tqdm

HEARTBEAT_SECONDS = 20.0
"""without bars, the longest silence of a run's log before `heartbeat` prints a line of where it is"""
WATCH_SECONDS = HEARTBEAT_SECONDS - 3.0
"""the silence after which `Progress.watched`'s thread says where the run is: under `HEARTBEAT_SECONDS`, so
the line comes in time even when the thread waits a moment for the interpreter"""


class Progress:
    """What a run shows as it goes (see the module doc): bars on a terminal, lines in a log, or nothing.

    Lines go to stdout, above any bar; bars go to stderr, and only when stderr
    is a terminal (as `cardlab eval` does), so a redirected log gets a line per
    event instead of thousands of bar updates, and a line of where the run is
    (`heartbeat`) at least every `HEARTBEAT_SECONDS` of work between events.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bars = enabled and sys.stderr.isatty()
        self.last_line = time.monotonic()
        self.status: Callable[[], str] = lambda: "working"
        """where the run is now, as `watched` repeats it (a phase sets its own: `doing`)"""
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        if self.enabled:
            with self.lock:
                tqdm.write(text, file=sys.stdout)
                sys.stdout.flush()
                self.last_line = time.monotonic()

    def doing(self, status: str | Callable[[], str]) -> None:
        """Set what `watched` says of the run from now on: a text, or a function giving it (called then)."""
        self.status = status if callable(status) else (lambda: status)

    @contextlib.contextmanager
    def watched(self) -> Iterator[None]:
        """Within the block, a log without bars gets a line at least every `HEARTBEAT_SECONDS`, however long
        one call of the run takes (compiling kernels, an update, an evaluation): a thread says `status()`
        and the seconds since the last line whenever the log has been silent for `WATCH_SECONDS`."""
        if not self.enabled or self.bars:
            yield
            return
        done = threading.Event()

        def watch() -> None:
            while not done.wait(0.5):
                silent = time.monotonic() - self.last_line
                if silent >= WATCH_SECONDS:
                    self.say(f"{self.status()} (the last line {silent:.0f} s ago)")

        thread = threading.Thread(target=watch, name="cardlab progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def heartbeat(self, text: Callable[[], str]) -> None:
        """Without bars: say `text()` when nothing was said for `HEARTBEAT_SECONDS` (cheap: call it often)."""
        if self.enabled and not self.bars and time.monotonic() - self.last_line >= HEARTBEAT_SECONDS:
            self.say(text())

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


class TrainingBar:
    """The bar of PPO training: it counts to whichever limit comes first, `total_timesteps` or the deadline.

    Why: a run capped by `max_minutes` stops long before its step ceiling, so a
    bar to the ceiling shows an ETA of hours. With a deadline the bar's total is
    the steps the average rate so far reaches by then (never past the ceiling),
    which makes the ETA the time left. `finish` labels the full bar "done", not
    with the last evaluation, which is older than the bar's end.
    """

    def __init__(self, progress: Progress, total: int, initial: int, deadline: Deadline, desc: str) -> None:
        self.ceiling, self.initial, self.deadline, self.progress = total, initial, deadline, progress
        self.start = time.monotonic()
        self.steps = initial
        self.bar = progress.bar(total=total, initial=initial, unit="step", unit_scale=True, desc=desc)
        progress.doing(self._where)

    @property
    def total(self) -> int:
        """The steps the bar counts to now: the ceiling, or fewer if the deadline comes first at this rate."""
        if self.deadline.end is None or self.steps <= self.initial:
            return self.ceiling
        now = time.monotonic()
        rate = (self.steps - self.initial) / max(now - self.start, 1e-9)
        reach = self.steps + rate * max(0.0, self.deadline.end - now)
        return max(self.steps, min(self.ceiling, int(reach)))

    def update(self, steps: int) -> None:
        """Move the bar to `steps` (the run's step count), its total re-estimated."""
        added, self.steps = steps - self.steps, steps
        self.bar.total = self.total
        self.bar.update(added)
        self.progress.heartbeat(self._where)

    def _where(self) -> str:
        rate = (self.steps - self.initial) / max(time.monotonic() - self.start, 1e-9)
        return f"training: {self.steps:,} of {self.total:,} steps ({rate:,.0f} steps/s)"

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.bar.set_postfix_str(text, refresh=refresh)

    def finish(self) -> str:
        """Fill the bar at the steps reached (whichever limit came), label it done, close it; the label."""
        label = f"done: {self.steps:,} steps"
        self.bar.total = self.steps
        self.bar.n = self.steps
        self.bar.set_postfix_str(label, refresh=False)
        self.bar.close()
        return label

    def close(self) -> None:
        """Close the bar as it is (an interrupted run: not done)."""
        self.bar.close()


class CheckpointClock:
    """When a checkpoint is due: every `checkpoint_every` steps, or `checkpoint_minutes` after the last one.

    Why: a fast run's step interval can be many minutes long; the clock keeps
    what Ctrl-C or a crash loses to a few minutes of training.
    """

    def __init__(self, steps: int, every: int, minutes: float) -> None:
        self.every, self.minutes = every, minutes
        self.reset(steps)

    def reset(self, steps: int) -> None:
        """A checkpoint was saved at `steps`: count again from here."""
        self.next = next_multiple(steps, self.every)
        self.clock = Deadline(self.minutes)

    def due(self, steps: int) -> bool:
        return steps >= self.next or self.clock.passed()
