"""A population's pool of bot files in Ray's object store, mirrored into each learner's folder.

A league reads its population from a folder (`cardlab.training.arena.league`).
Learners on one machine, or on machines sharing a file system, can simply
share that folder. Without a shared file system, a sweep starts one `BotPool`
actor that holds the snapshots' bytes, and each trial runs a `PoolMirror`: a
background thread that sends the trial's own new snapshots to the pool and
writes the others' into the trial's local folder, where the league finds
them. Only bot files and their names travel: a name that is not a
snapshot's is never used as a file name, and a file is checked with
`load_bot` on arrival; one that fails is left out (with a warning) rather
than stopping the learner.
"""

from __future__ import annotations

import logging
import pathlib
import re
import threading
from typing import Any

from cardlab.cluster.botfiles import BotFile
from cardlab.cluster.runtime import import_ray
from cardlab.envs.checked_json import excerpt
from cardlab.training.arena.league import POPULATION_SEPARATOR, SNAPSHOT_PREFIX

SNAPSHOT_NAME = re.compile(rf"[A-Za-z0-9_.-]+{POPULATION_SEPARATOR}{SNAPSHOT_PREFIX}[0-9]+")
"""What a published snapshot is called: ``<learner>__snapshot_<steps>`` (no path separators)."""
log = logging.getLogger(__name__)


class BotPool:
    """The pool (a Ray actor): snapshots' bytes by name, the newest `keep` of each learner."""

    def __init__(self, keep: int = 10) -> None:
        self.keep = keep
        self.bots: dict[str, BotFile] = {}

    def publish(self, name: str, bot: BotFile) -> None:
        if not SNAPSHOT_NAME.fullmatch(name):
            raise ValueError(f"{excerpt(name)} is not a snapshot's name (<learner>__snapshot_<steps>)")
        self.bots[name] = bot
        learner = name.rpartition(POPULATION_SEPARATOR)[0]
        mine = sorted((n for n in self.bots if n.rpartition(POPULATION_SEPARATOR)[0] == learner),
                      key=lambda n: int(n.rpartition("_")[2]))
        for old in mine[:-self.keep]:
            del self.bots[old]

    def names(self) -> list[str]:
        return sorted(self.bots)

    def fetch(self, names: list[str]) -> dict[str, BotFile]:
        return {n: self.bots[n] for n in names if n in self.bots}


def start_pool(keep: int = 10) -> Any:
    """A new pool actor (it takes no CPU; it lives as long as the driver that started it)."""
    return import_ray().remote(num_cpus=0)(BotPool).remote(keep)


class PoolMirror:
    """Keeps a learner's population folder and the pool in step, every `interval` seconds."""

    def __init__(self, pool: Any, folder: str | pathlib.Path, learner: str, interval: float = 5.0) -> None:
        self.pool = pool
        self.folder = pathlib.Path(folder)
        self.mine = f"{learner}{POPULATION_SEPARATOR}"  # the learner's run folders are named <learner>__...
        self.interval = interval
        self.sent: set[str] = set()
        self.refused: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cardlab-pool-mirror", daemon=True)

    def sync(self) -> int:
        """Send the learner's new snapshots, write the others' new ones; returns how many were written."""
        ray = import_ray()
        self.folder.mkdir(parents=True, exist_ok=True)
        present = {p.stem for p in self.folder.glob("*.json")}
        for name in sorted(present - self.sent):
            if name.startswith(self.mine) and SNAPSHOT_NAME.fullmatch(name):
                ray.get(self.pool.publish.remote(name, BotFile.read(self.folder / name)))
                self.sent.add(name)
        wanted = [n for n in ray.get(self.pool.names.remote()) if n not in present and n not in self.refused
                  and not n.startswith(self.mine) and SNAPSHOT_NAME.fullmatch(n)]
        received = ray.get(self.pool.fetch.remote(wanted)) if wanted else {}
        written = 0
        for name, bot in received.items():
            try:
                bot.load()  # every check of load_bot, before the league may pick it
            except ValueError as err:
                log.warning("population pool: %s refused: %s", name, err)
                self.refused.add(name)
                continue
            if name in wanted:
                bot.write(self.folder, name)
                written += 1
        return written

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sync()
            except Exception as err:  # the pool is gone (the sweep ended): training goes on without it
                log.warning("population pool: %s", err)
                return

    def __enter__(self) -> PoolMirror:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
