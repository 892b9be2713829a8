"""The lean trainer's actors as Ray actors: the same `RolloutActor`, on a Ray cluster or a local Ray.

With ``ray.address`` (or ``cardlab train --ray-address ADDR``, which passes
`RayActors` to `cardlab.training.trainers.train.train`) the learner, in the driver,
joins the cluster (`cardlab.cluster.runtime.ray_session`;
``local`` starts a Ray on this machine for the run) and starts ``actors``
Ray actors of `cardlab.training.trainers.actors.RolloutActor`. Ray is the transport:
the weights go out once per update with ``ray.put``, each actor always has
one ``play`` call in flight (given the newest weights' reference), and the
learner takes whichever finishes first with ``ray.wait`` and ``ray.get``,
then hands that actor its next call at once, so it plays while the learner
updates. An actor that dies (``RayActorError``) is started again.

An address that does not answer within `CONNECT_SECONDS` is refused in one
line before Ray is asked to join it (Ray itself keeps trying for minutes).
More actors than four per CPU of the cluster are refused too; each actor
asks Ray for one CPU, or its share when there are more actors than CPUs.
The actors read the league's snapshots from the run folder, so on a cluster
of several machines the run folder must be on a file system they share (as
a population's folder must).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torch import nn

from cardlab.cluster.runtime import import_ray, ray_session, task_error
from cardlab.envs.declared import refusal
from cardlab.training.harness.config import TrainConfig
from cardlab.training.harness.placement import check_actors
from cardlab.training.trainers.actors import MAX_FAILURES, RolloutActor, actor_seeds
from cardlab.training.trainers.rollouts import Rollout

CONNECT_SECONDS = 5.0
"""how long the address of a Ray cluster has to answer"""
DEFAULT_PORT = 6379
"""the head's port when an address gives none (Ray's own default)"""


KEY = "ray.address"
"""the config key (and --ray-address) a refused address is named by"""
ADDRESSES = "HOST:PORT (what `ray start --head` prints), ray://HOST:PORT, 'auto' or 'local'"
"""what a cluster address may be"""


def check_address(address: str, timeout: float = CONNECT_SECONDS) -> None:
    """Refuse a cluster address whose host does not answer on its port within `timeout` seconds.

    ``local`` (a Ray started here) and ``auto`` (Ray finds the one running here) are not probed.
    """
    if address in ("local", "auto"):
        return
    host_port = address.removeprefix("ray://").rstrip("/")
    host, _, port = host_port.rpartition(":") if ":" in host_port else (host_port, "", str(DEFAULT_PORT))
    if not host or not port.isdigit():
        raise ValueError(refusal(KEY, address, "not a cluster address", ADDRESSES))
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        reason = "no answer" if isinstance(err, TimeoutError) else (err.strerror or type(err).__name__)
        problem = f"a Ray cluster that cannot be reached ({reason} within {timeout:g} s)"
        raise ValueError(refusal(KEY, address, problem, f"{ADDRESSES}, of a cluster that answers (`ray "
                                 "status` on its head node)")) from None


class RayActors:
    """`cfg.actors` Ray actors and their calls in flight, the learner's side of them (the module doc)."""

    def __init__(self, cfg: TrainConfig, league_dir: Path, start_steps: int,
                 say: Callable[[str], None]) -> None:
        check_address(cfg.ray.address)
        self.cfg, self.start_steps, self.say = cfg, start_steps, say
        self.league_dir = str(league_dir.resolve())
        self.ray = import_ray()
        self.session = contextlib.ExitStack()
        local = cfg.ray.address == "local"
        self.session.enter_context(ray_session(address=None if local else cfg.ray.address))
        cpus = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        try:
            check_actors(cfg.actors, cpus, "the Ray cluster")
        except ValueError:
            self.session.close()
            raise
        self.remote = self.ray.remote(num_cpus=min(1.0, cpus / cfg.actors))(RolloutActor)
        self.handles: list[Any] = [None] * cfg.actors
        self.calls: dict[Any, int] = {}
        """each actor's play call in flight -> the actor's index"""
        self.starts = [0] * cfg.actors
        self.failures = [0] * cfg.actors
        self.restarts = 0
        self.weights: Any = None
        self.version = -1
        say(f"{cfg.actors} Ray actors on {'a local Ray' if local else cfg.ray.address} ({cpus} CPUs)")

    def publish(self, actor: nn.Sequential, version: int) -> None:
        """The weights of the next calls (``ray.put`` once); starts the actors the first time."""
        self.weights = self.ray.put({k: v.detach().cpu() for k, v in actor.state_dict().items()})
        self.version = version
        for index, handle in enumerate(self.handles):
            if handle is None:
                self._start(index)

    def _start(self, index: int) -> None:
        seeds = actor_seeds(self.cfg, self.start_steps, index, self.starts[index])
        self.handles[index] = self.remote.remote(self.cfg, self.league_dir, seeds)
        self.starts[index] += 1
        self._call(index)

    def _call(self, index: int) -> None:
        self.calls[self.handles[index].play.remote(self.weights, self.version)] = index

    def next_rollout(self) -> Rollout:
        """The first rollout any actor finishes; that actor gets its next call at once."""
        while True:
            ready, _ = self.ray.wait(list(self.calls), num_returns=1)
            index = self.calls.pop(ready[0])
            try:
                rollout: Rollout = self.ray.get(ready[0])
            except self.ray.exceptions.RayActorError as err:
                self.failures[index] += 1
                if self.failures[index] >= MAX_FAILURES:
                    detail = " ".join(str(task_error(err)).split())[:300]
                    raise RuntimeError(f"Ray actor {index} died {MAX_FAILURES} times in a row without "
                                       f"sending a rollout: {detail}") from None
                self.say(f"Ray actor {index} died; started again")
                self.restarts += 1
                self._start(index)
                continue
            self.failures[index] = 0
            self._call(index)
            return rollout

    def close(self) -> None:
        """Stop the actors and leave the cluster (a local Ray is shut down)."""
        for handle in self.handles:
            if handle is not None:
                self.ray.kill(handle)
        self.handles = [None] * len(self.handles)
        self.calls.clear()
        self.session.close()
