"""Where a lean run's parts go: the learner's device, and how many actors the machine can carry.

Checked when a config is validated, so a run that cannot go where it asks is
refused in one line before its folder is made: ``device: cuda`` where torch
sees no GPU (``auto`` then falls back to the CPU), ``actors`` below 0 or past
four per core of this machine. With ``ray.address`` the actors run on a
cluster, whose cores are counted when the driver joins it
(`cardlab.training.ray_actors`), so only the sign is checked here.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from cardlab.envs.declared import check_that, refusal

DEVICES = ("cpu", "cuda", "auto")
"""what `device` accepts"""
ACTORS_PER_CORE = 4
"""most actors per core: past that they only share the cores more finely, each holding its games' memory"""


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system says, else every core)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS and Windows have no affinity call
        return os.cpu_count() or 1


def check_actors(actors: int, cores: int | None, where: str) -> None:
    """Refuse fewer than 0 actors, or more than `ACTORS_PER_CORE` per core of `where` (`cores` of them;
    None: not counted yet)."""
    if isinstance(actors, bool) or not isinstance(actors, int) or actors < 0:
        raise ValueError(refusal("actors", actors, "not a whole number >= 0",
                                 "0 (one process) or a number of actor processes >= 1"))
    if cores is not None and actors > ACTORS_PER_CORE * cores:
        raise ValueError(refusal("actors", actors, f"more than {where}'s {cores} cores take",
                                 f"at most {ACTORS_PER_CORE * cores} ({ACTORS_PER_CORE} per core)"))


def check_device(device: str) -> None:
    """Refuse ``cuda`` where torch sees no GPU (any other value is the caller's to check)."""
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(refusal("device", device, "not usable: torch sees no GPU here "
                                 "(torch.cuda.is_available() is false)",
                                 "'cpu', or 'auto' (a GPU where there is one, else the CPU)"))


def learner_device(device: str) -> torch.device:
    """The torch device of a config's `device`: ``auto`` is the GPU where torch sees one, else the CPU."""
    check_device(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def check_placement(cfg: Any) -> None:
    """A training config's device and actors (`TrainConfig`), as the module doc says."""
    check_device(cfg.device)
    if cfg.ray.address:
        check_actors(cfg.actors, None, "the Ray cluster")  # its cores are counted on joining it
        check_that(cfg.actors > 0, "ray.address", cfg.ray.address, "not accepted with actors: 0",
                   "'' (this machine's processes), or actors of 1 or more (the cluster runs the actors)")
    else:
        check_actors(cfg.actors, usable_cores(), "this machine")
