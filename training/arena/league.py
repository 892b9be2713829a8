"""The league: who sits in the opponent seats of each training hand.

The learner trains against a pool of fixed agents (spec strings such as
``expert`` or ``random``, with weights) and, with self-play on, against frozen
snapshots of its own policy. Each opponent seat of each hand is filled
independently: with probability `snapshot_share` by a snapshot drawn uniformly
from the newest `pool_size` ones, otherwise by a spec drawn by weight.

Snapshots are bot files (`cardlab.agents.bot`) and travel to the environment
processes as files: the trainer exports ``snapshot_<steps>`` into the snapshot
folder (moved in place by renames, the metadata last) and every `League`
lists the folder at the start of each hand. This needs no messages between
processes and survives a resume for free. A snapshot plays through
`load_bot`: torch only, no stable-baselines3.

A population (learners training against each other) shares one more folder:
each learner also publishes its snapshots there as ``<run>__snapshot_<steps>``
(`publish_snapshot`), and a seat not taken by its own snapshot is taken, with
probability `population_share`, by one of the newest `population_size` of the
other learners' (`list_population`). The folder may be on a shared file
system, or mirrored between machines by `cardlab.cluster.pool`.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent, as_game
from cardlab.agents.bot import bot_paths, export_bot, load_bot
from cardlab.envs.checked_json import excerpt

SNAPSHOT_PREFIX = "snapshot_"


def save_snapshot(policy: Any, folder: Path, steps: int, *, game: str, rules: dict[str, Any],
                  num_players: int) -> Path:
    """Export the policy as the bot `folder/snapshot_<steps>`; returns its metadata path.

    The files are written in a scratch folder and renamed into place, weights
    first, so a reader never sees a half-written snapshot.
    """
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{SNAPSHOT_PREFIX}{steps:012d}"
    with tempfile.TemporaryDirectory(dir=folder, prefix=".tmp-") as tmp:
        meta = export_bot(policy, Path(tmp) / name, game=game, rules=rules, num_players=num_players,
                          summary={"snapshot_steps": steps})
        final_meta, final_weights = bot_paths(folder / name)
        os.replace(bot_paths(meta)[1], final_weights)
        os.replace(meta, final_meta)
    return final_meta


def snapshot_steps(path: Path) -> int:
    """The training step a snapshot was taken at (from its name)."""
    return int(Path(path).stem.rpartition(SNAPSHOT_PREFIX)[2])


def list_snapshots(folder: Path) -> list[Path]:
    """Metadata paths of the snapshots in `folder`, oldest first."""
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"{SNAPSHOT_PREFIX}*.json"), key=snapshot_steps)


# ---------------------------------------------------------------- a population's shared folder
POPULATION_SEPARATOR = "__"


def publish_snapshot(snapshot: Path, folder: Path, learner: str) -> Path:
    """Copy a snapshot into a population folder as ``<learner>__snapshot_<steps>``, the metadata last."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{learner}{POPULATION_SEPARATOR}{Path(snapshot).stem}"
    for source, final in zip(bot_paths(snapshot)[::-1], bot_paths(target)[::-1], strict=True):
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        os.close(fd)
        shutil.copyfile(source, tmp)
        os.replace(tmp, final)
    return bot_paths(target)[0]


def list_population(folder: Path, learner: str = "") -> list[Path]:
    """Metadata paths of the other learners' snapshots in a population folder, oldest first."""
    if not folder.is_dir():
        return []
    mine = f"{learner}{POPULATION_SEPARATOR}"
    found = [p for p in folder.glob(f"*{POPULATION_SEPARATOR}{SNAPSHOT_PREFIX}*.json")
             if not (learner and p.name.startswith(mine))]
    return sorted(found, key=lambda p: (snapshot_steps(p), p.name))


# ---------------------------------------------------------------- the league
@dataclasses.dataclass(frozen=True)
class LeagueSettings:
    """What a `League` needs, as plain picklable data (it crosses into env processes)."""

    opponents: tuple[tuple[str, float], ...]
    """(agent spec, weight) pairs; a seat not taken by a snapshot gets a spec drawn by weight"""
    snapshot_dir: str | None = None
    """folder of snapshot files; None: no self-play"""
    snapshot_share: float = 0.0
    """probability that an opponent seat is taken by a snapshot (once one exists)"""
    pool_size: int = 5
    """how many of the newest snapshots are in play"""
    snapshot_deterministic: bool = False
    """snapshots play their masked argmax (True) or sample their masked distribution (False)"""
    population_dir: str | None = None
    """folder shared by a population of learners (`publish_snapshot`); None: no population"""
    population_share: float = 0.0
    """probability that a seat not taken by an own snapshot gets another learner's (once there is one)"""
    population_size: int = 10
    """how many of the other learners' newest snapshots are in play"""
    learner: str = ""
    """this learner's name in the population folder (its own files there are skipped)"""

    @classmethod
    def of(cls, opponents: LeagueSettings | Sequence[str]) -> LeagueSettings:
        """Settings as given, or equal weights over a list of spec strings."""
        if isinstance(opponents, LeagueSettings):
            return opponents
        if isinstance(opponents, str) or not opponents:
            raise ValueError(
                f"opponents must be LeagueSettings or a non-empty list of agent specs, got "
                f"{excerpt(opponents)}"
            )
        return cls(tuple((spec, 1.0) for spec in opponents))


class League:
    """Builds (and caches) the opponent agents of each hand for one game env."""

    def __init__(self, game: Any, settings: LeagueSettings, seed: int | None = None) -> None:
        self.game = as_game(game)
        self.settings = settings
        specs = [spec for spec, _ in settings.opponents]
        weights = np.array([w for _, w in settings.opponents], dtype=np.float64)
        if not specs or (weights <= 0).any():
            raise ValueError(
                f"the league needs at least one opponent spec, all with weight > 0: {settings.opponents}"
            )
        self._specs = specs
        self._probs = weights / weights.sum()
        self._folder = Path(settings.snapshot_dir) if settings.snapshot_dir else None
        self._pool: list[Path] = []
        self._population_folder = Path(settings.population_dir) if settings.population_dir else None
        self._population: list[Path] = []
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Forget the built agents; new ones get seeds from a generator seeded with `seed`."""
        self._seeds = np.random.default_rng(seed)
        self._agents: dict[tuple[str, int], Agent] = {}
        self._snapshot_agents: dict[tuple[Path, int], Agent] = {}

    @property
    def pool(self) -> list[Path]:
        """The snapshots in play (metadata paths of the newest `pool_size`)."""
        self._refresh()
        return list(self._pool)

    def _refresh(self) -> None:
        """Rescan the snapshot folders (a listing per hand is cheap, and never misses a new file)."""
        pool, population = self._pool, self._population
        if self._folder is not None and self.settings.snapshot_share > 0:
            pool = list_snapshots(self._folder)[-self.settings.pool_size:]
        if self._population_folder is not None and self.settings.population_share > 0:
            found = list_population(self._population_folder, self.settings.learner)
            population = found[-self.settings.population_size:]
        if pool != self._pool or population != self._population:
            self._pool, self._population = pool, population
            kept = {*pool, *population}
            self._snapshot_agents = {k: a for k, a in self._snapshot_agents.items() if k[0] in kept}

    def pick(self, rng: np.random.Generator, count: int) -> list[tuple[str, Agent]]:
        """(label, agent) for `count` opponent seats; the label is the spec or the snapshot name."""
        self._refresh()
        picks = []
        for slot in range(count):
            if self._pool and rng.random() < self.settings.snapshot_share:
                path = self._pool[int(rng.integers(len(self._pool)))]
                picks.append((path.stem, self._snapshot_agent(path, slot)))
            elif self._population and rng.random() < self.settings.population_share:
                path = self._population[int(rng.integers(len(self._population)))]
                picks.append((path.stem, self._snapshot_agent(path, slot)))
            else:
                spec = self._specs[int(rng.choice(len(self._specs), p=self._probs))]
                picks.append((spec, self._agent(spec, slot)))
        return picks

    def _new_seed(self) -> int:
        return int(self._seeds.integers(2**63))

    def _agent(self, spec: str, slot: int) -> Agent:
        key = (spec, slot)
        if key not in self._agents:
            self._agents[key] = make_agent(spec, self.game, seed=self._new_seed())
        return self._agents[key]

    def _snapshot_agent(self, path: Path, slot: int) -> Agent:
        key = (path, slot)
        if key not in self._snapshot_agents:
            self._snapshot_agents[key] = load_bot(path, self.game, seed=self._new_seed(),
                                                  sample=not self.settings.snapshot_deterministic)
        return self._snapshot_agents[key]
