"""Actor processes for the lean trainer: each plays its own games with a recent copy of the policy.

With ``actors: N`` (N > 0) the learner (`cardlab.training.trainers.lean`) starts N
processes (multiprocessing with spawn: a clean interpreter each, no forked
torch or numba state). Each builds a `RolloutActor`, its own `SelfPlayBatch`
of ``num_envs`` games seeded apart from the others, one torch thread, and
loops: take the newest weights, play one rollout (`rollouts.play`), send it.
The learner scores and learns from the rollouts as they come while the
actors go on playing, so the engines and the update run at once.

The transport is multiprocessing's own: one pipe per actor for the
rollouts (a pipe holds one rollout in flight, so an actor waits for the
learner rather than running ahead of it), and shared memory for the actor
network's weights (`SharedWeights`), which the learner writes after each
update with a sequence number around the write (odd while writing), read
by the actors without a lock: an actor killed at any moment leaves no lock
held and no queue half written, only its own pipe, which is dropped.

An actor whose process ends (killed, out of memory) is started again with
new seeds and the run goes on; one that fails `MAX_FAILURES` times without
sending a rollout stops the run (its error is on stderr). The actors ignore
Ctrl-C, which the learner handles (a checkpoint, then `close`).
"""

from __future__ import annotations

import pickle
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
import torch.multiprocessing as mp
from torch import nn

from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.harness.config import TrainConfig
from cardlab.training.harness.config_tables import header_game
from cardlab.training.harness.runs import league_settings
from cardlab.training.trainers.dmc_model import MonteCarlo, build_model
from cardlab.training.trainers.rollouts import Rollout, play

MAX_FAILURES = 3
"""an actor that ends this many times in a row without sending a rollout stops the run"""
WAIT_SECONDS = 1.0
"""how often the learner, waiting for a rollout, looks for actors that ended"""


def actor_seeds(cfg: TrainConfig, start_steps: int, index: int, start: int) -> tuple[int, int]:
    """(games seed, sampling seed) of actor `index`'s `start`-th process in a run resumed at `start_steps`."""
    games, sampling = np.random.SeedSequence([cfg.seed, start_steps, index, start]).generate_state(2)
    return int(games), int(sampling)


class RolloutActor:
    """One actor: its games and a CPU copy of the policy; plays one rollout at a time (`play`), cut to the
    learner's moves (`Rollout.cut`: the rest is never sent), or with ``algorithm: dmc`` to the learner's moves
    whose hands have ended, with their returns (`dmc_model.MonteCarlo`, which keeps the others till then).

    The same class runs in an actor process (`ProcessActors`) and as a Ray
    actor (`cardlab.training.ray_actors`); the learner sends it the actor
    network's weights (`load`) and it plays with the last ones it got.
    """

    def __init__(self, cfg: TrainConfig, league_dir: str, seeds: tuple[int, int]) -> None:
        torch.set_num_threads(1)
        self.cfg = cfg
        self.model = build_model(cfg)
        self.monte_carlo = MonteCarlo() if cfg.algorithm == "dmc" else None
        """``algorithm: dmc``: the moves of this actor's games waiting for their episodes' ends"""
        game = header_game(cfg)
        self.table = SelfPlayBatch(game, cfg.num_envs, league_settings(cfg, Path(league_dir)),
                                   learner_share=cfg.self_play.learner_share, seed=seeds[0],
                                   reward=cfg.reward, episode=cfg.episode, equity=cfg.equity)
        self.generator = torch.Generator().manual_seed(seeds[1])
        self.version = -1
        """the learner's update count when the weights played with were taken (-1: none yet)"""

    def load(self, state: dict[str, torch.Tensor], version: int) -> None:
        self.model.actor.load_state_dict(state)
        self.version = version

    def play(self, state: dict[str, torch.Tensor] | None = None, version: int = -1) -> Rollout:
        """A rollout with the newest weights: `state` (of `version`) where given, else the last loaded."""
        if state is not None and version != self.version:
            self.load(state, version)
        played = play(self.model, self.table, self.cfg, values=False, generator=self.generator)
        rollout = played.cut() if self.monte_carlo is None else self.monte_carlo.finish(played)
        rollout.version = self.version
        return rollout


class ActorPool(Protocol):
    """The learner's side of its actors, whatever carries the rollouts (processes here, or Ray)."""

    restarts: int
    """actors started again after theirs ended"""

    def publish(self, actor: nn.Sequential, version: int) -> None:
        """Make `actor`'s weights (`version`: the learner's update count) the ones played next."""

    def next_rollout(self) -> Rollout:
        """The next rollout an actor played (waiting for one; an actor that ended is started again)."""

    def close(self) -> None:
        """Stop every actor."""


PoolFactory = Callable[[TrainConfig, Path, int, Callable[[str], None]], ActorPool]
"""what starts a run's actors: (config, league folder, steps the run starts at, where to say things)"""


def pool_factory(cfg: TrainConfig, remote: PoolFactory | None) -> PoolFactory:
    """What starts `cfg`'s actors: `remote` with ``ray.address`` (refused without one), else processes."""
    if not cfg.ray.address:
        return ProcessActors
    if remote is None:
        raise ValueError(f"ray.address={cfg.ray.address!r} needs the Ray actors: train with `cardlab train "
                         "--ray-address`, or give cardlab.cluster.lean_actors.RayActors as train's remote")
    return remote


class SharedWeights:
    """The actor network's weights in shared memory, written by the learner and read by the actors.

    `sequence` is twice the version once a write is done and odd during one;
    a reader copies the weights, then keeps them only if the sequence was even
    and unchanged around its copy (a seqlock: no lock for a killed actor to hold).
    """

    def __init__(self, actor: nn.Sequential) -> None:
        self.tensors = {k: v.detach().cpu().clone().share_memory_() for k, v in actor.state_dict().items()}
        self.sequence: Any = mp.get_context("spawn").Value("q", -2, lock=False)  # a ctypes int64

    def write(self, actor: nn.Sequential, version: int) -> None:
        self.sequence.value = 2 * version + 1
        for key, value in actor.state_dict().items():
            self.tensors[key].copy_(value.detach())  # from the learner's device to the CPU
        self.sequence.value = 2 * version

    def read(self, current: int) -> tuple[dict[str, torch.Tensor], int] | None:
        """(a copy of the weights, their version) when newer than `current`, else None (also mid-write)."""
        before = self.sequence.value
        if before < 0 or before % 2 or before // 2 == current:
            return None
        state = {k: v.clone() for k, v in self.tensors.items()}
        return (state, before // 2) if self.sequence.value == before else None


def actor_main(cfg: TrainConfig, league_dir: str, seeds: tuple[int, int], weights: SharedWeights,
               sender: Connection, stop: Any) -> None:
    """An actor process: play and send rollouts with the newest weights until `stop` is set."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the learner's to handle
    actor = RolloutActor(cfg, league_dir, seeds)
    try:
        while not stop.is_set():
            newer = weights.read(actor.version)
            if newer is not None:
                actor.load(*newer)
            if actor.version < 0:  # nothing published yet
                stop.wait(0.01)
                continue
            sender.send_bytes(pickle.dumps(actor.play(), protocol=pickle.HIGHEST_PROTOCOL))
    except (BrokenPipeError, ConnectionResetError):  # the learner closed its end: the run is over
        pass


class ProcessActors:
    """`cfg.actors` actor processes on this machine, the learner's side of them (the module doc)."""

    def __init__(self, cfg: TrainConfig, league_dir: Path, start_steps: int,
                 say: Callable[[str], None]) -> None:
        self.cfg, self.league_dir, self.start_steps, self.say = cfg, str(league_dir), start_steps, say
        self.context = mp.get_context("spawn")
        self.weights: SharedWeights | None = None
        self.stop = self.context.Event()
        self.processes: list[Any] = [None] * cfg.actors
        self.receivers: list[Connection | None] = [None] * cfg.actors
        self.starts = [0] * cfg.actors
        self.failures = [0] * cfg.actors
        self.restarts = 0
        """actor processes started again after theirs ended"""
        self.turn = 0
        self.closed = False

    def publish(self, actor: nn.Sequential, version: int) -> None:
        """Make `actor`'s weights the ones the actors play with next (starts them the first time)."""
        if self.weights is None:
            self.weights = SharedWeights(actor)
        self.weights.write(actor, version)
        for index, process in enumerate(self.processes):
            if process is None:
                self._start(index)

    def _start(self, index: int) -> None:
        assert self.weights is not None, "publish starts the actors"
        receiver, sender = self.context.Pipe(duplex=False)
        seeds = actor_seeds(self.cfg, self.start_steps, index, self.starts[index])
        args = (self.cfg, self.league_dir, seeds, self.weights, sender, self.stop)
        process = self.context.Process(target=actor_main, name=f"cardlab-actor-{index}", daemon=True,
                                       args=args)
        process.start()
        sender.close()  # the actor's end: only the reading one stays here, so a dead actor reads as EOF
        self.processes[index], self.receivers[index] = process, receiver
        self.starts[index] += 1

    def _restart(self, index: int) -> None:
        """Start actor `index` again after its process ended (or broke its pipe)."""
        process, receiver = self.processes[index], self.receivers[index]
        if receiver is not None:
            receiver.close()
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join()
        self.failures[index] += 1
        if self.failures[index] >= MAX_FAILURES:
            raise RuntimeError(f"actor {index} ended {MAX_FAILURES} times in a row without sending a rollout "
                               f"(last exit code {process.exitcode}): see its error above")
        self.say(f"actor {index} ended (exit code {process.exitcode}); started again")
        self.restarts += 1
        self._start(index)

    def next_rollout(self) -> Rollout:
        """The next rollout any actor sends (taking the actors in turn when several are ready)."""
        while True:
            for index, process in enumerate(self.processes):
                if process is not None and not process.is_alive():
                    self._restart(index)
            receivers = [r for r in self.receivers if r is not None]
            ready = set(map(id, wait(receivers, timeout=WAIT_SECONDS)))
            count = len(self.receivers)
            for index in sorted(range(count), key=lambda i: (i - self.turn) % count):
                receiver = self.receivers[index]
                if receiver is None or id(receiver) not in ready:
                    continue
                try:
                    data = receiver.recv_bytes()
                except (EOFError, OSError):  # its process ended, maybe mid-rollout: the pipe goes with it
                    self._restart(index)
                    continue
                self.failures[index], self.turn = 0, index + 1
                rollout: Rollout = pickle.loads(data)
                return rollout

    def close(self) -> None:
        """Stop every actor process (they are daemons too: none outlives the learner)."""
        if self.closed:
            return
        self.closed = True
        self.stop.set()
        for receiver in self.receivers:
            if receiver is not None:
                receiver.close()  # an actor blocked sending gets a broken pipe
        for process in self.processes:
            if process is not None:
                process.join(timeout=10)
                if process.is_alive():
                    process.kill()
                    process.join()
