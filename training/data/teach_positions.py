"""A teach run's positions: the base bot's own play, some of its decisions labelled by the teacher search.

Why apart from the trainer (`cardlab.training.trainers.expert_iteration`): the
positions come from one of two play loops, chosen by what the teacher sees.
A teacher that plays from its observation alone is labelled in the batched
engine (`SelfPlayBatch`, fast, its games played at once). A teacher that is
shown more (a search with ``belief=learned`` or another belief reads the
hand's public record; ``cheat=1`` deals the true hands) needs what only the
rules engine keeps, so its positions come from hands played one at a time
in the AEC env, the base in a seat that rotates by hand, the teacher shown
the table (`show_table`) before each labelled decision, as every evaluation
loop shows it. Both loops keep the same rule: at a learner decision with a
choice, labelled with probability `label_share`, else kept unlabelled (for
the trainer's KL term) with probability `keep_share`; the base's own move is
played either way. Both are reproducible from the config's seed (C2) with a
teacher of ``ms=0`` and no `max_minutes`.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent, show_table
from cardlab.agents.bot import BotAgent, network_actions
from cardlab.agents.search import SearchAgent
from cardlab.envs import make_env
from cardlab.envs.aec import live_turns
from cardlab.envs.game_spec import Game
from cardlab.evaluation.episodes import derive_seed
from cardlab.training.arena.league import LeagueSettings
from cardlab.training.arena.selfplay import SelfPlayBatch
from cardlab.training.harness.progress import Deadline, Progress


class LabelPlan(Protocol):
    """What of a teach config the positions need (`TeachConfig` has it)."""

    seed: int
    teacher: str
    opponents: list[str]
    labels: int
    label_share: float
    keep_share: float
    max_minutes: float
    num_envs: int


LABELLING = tuple(key for key in LabelPlan.__annotations__ if key != "seed")
"""the keys of a teach config read only while its labels are made (not beside ``labels_from``)"""


class Positions:
    """The labelled positions and the kept unlabelled ones, as they are found; `arrays` gives them whole."""

    def __init__(self, plan: LabelPlan, teacher: SearchAgent, progress: Progress, bar: Any) -> None:
        self.plan, self.teacher, self.progress, self.bar = plan, teacher, progress, bar
        self.found: dict[str, list[Any]] = {k: [] for k in ("obs", "mask", "action", "value", "base_action",
                                                             "kept_obs", "kept_mask")}

    @property
    def missing(self) -> int:
        """Labels still to make."""
        return self.plan.labels - len(self.found["action"])

    def label(self, obs: np.ndarray, mask: np.ndarray, base_action: int) -> None:
        """Ask the teacher (already shown what it sees) for its move here, and keep it with its value."""
        move = self.teacher.act({"observation": obs, "action_mask": mask.astype(np.int8)})
        decision = self.teacher.last_decision
        assert decision is not None  # a decision with a choice is searched
        value = decision.values[int(np.searchsorted(decision.candidates, move))]
        for key, item in (("obs", obs), ("mask", mask), ("action", move),
                          ("value", value if decision.worlds else math.nan), ("base_action", base_action)):
            self.found[key].append(item)
        self.bar.update(1)
        self.progress.heartbeat(lambda: f"{len(self.found['action']):,} of {self.plan.labels:,} labels")

    def keep(self, obs: np.ndarray, mask: np.ndarray) -> None:
        """Keep unlabelled positions (rows) for the KL term."""
        self.found["kept_obs"].append(obs)
        self.found["kept_mask"].append(mask)

    def arrays(self, game: Game) -> dict[str, np.ndarray]:
        """Every column as one array of the table's sizes (empty ones too), as `write_labels` takes them."""
        size, actions_n = game.layout.size, game.num_actions
        found = self.found
        labels = {key: np.asarray(found[key], dtype=kind).reshape(shape) for key, kind, shape in (
            ("obs", np.float32, (-1, size)), ("mask", np.bool_, (-1, actions_n)),
            ("action", np.int64, (-1,)), ("value", np.float32, (-1,)), ("base_action", np.int64, (-1,)))}
        for key, width in (("kept_obs", size), ("kept_mask", actions_n)):
            labels[key] = np.concatenate([np.zeros((0, width)), *found[key]]).astype(
                np.float32 if key == "kept_obs" else np.bool_)
        return labels


def make_positions(plan: LabelPlan, game: Game, base: BotAgent, progress: Progress) -> dict[str, np.ndarray]:
    """The labelled positions (obs, mask, action, value, base_action) and the kept unlabelled ones
    (kept_obs, kept_mask) of the base's play against the opponents: in the batched engine, or hand by
    hand where the teacher sees more than its observation (module doc)."""
    seeds = np.random.SeedSequence(plan.seed).spawn(3)
    draws = np.random.default_rng(seeds[1])
    teacher = make_agent(plan.teacher, game, seed=int(seeds[2].generate_state(1)[0]))
    assert isinstance(teacher, SearchAgent)  # the trainer's validation refused any other
    deadline = Deadline(plan.max_minutes)
    with progress.bar(total=plan.labels, desc=f"labels of {plan.teacher}", unit="label") as bar:
        positions = Positions(plan, teacher, progress, bar)
        play = hand_by_hand if teacher.sees else batched
        play(plan, game, base, positions, draws, int(seeds[0].generate_state(1)[0]), deadline)
    return positions.arrays(game)


def batched(plan: LabelPlan, game: Game, base: BotAgent, positions: Positions, draws: np.random.Generator,
            seed: int, deadline: Deadline) -> None:
    """Positions of `plan.num_envs` games at once in the batched engine (a teacher that sees nothing more)."""
    table = SelfPlayBatch(game, plan.num_envs, LeagueSettings.of(plan.opponents), learner_share=0.0,
                          seed=seed)
    while positions.missing > 0 and not deadline.passed():
        view = table.observe()
        obs, mask, _, learner = view
        actions = np.zeros(plan.num_envs, dtype=np.int64)
        rows = np.flatnonzero(learner)
        if rows.size:
            actions[rows] = network_actions(base.network, obs[rows], mask[rows])
            choice = rows[mask[rows].sum(axis=1) > 1]
            labelled = draws.random(choice.size) < plan.label_share
            kept = ~labelled & (draws.random(choice.size) < plan.keep_share)
            positions.keep(obs[choice[kept]], mask[choice[kept]])
            for b in choice[labelled][: positions.missing]:
                positions.label(obs[b], mask[b], int(actions[b]))
        table.step(actions, view)


def hand_by_hand(plan: LabelPlan, game: Game, base: BotAgent, positions: Positions,
                 draws: np.random.Generator, seed: int, deadline: Deadline) -> None:
    """Positions of hands played one at a time in the AEC env (a teacher shown the record or the state):
    the base in seat ``hand mod n``, each other seat an opponent spec drawn per hand."""
    env = make_env(game.id, **game.rules.to_dict(), episode="hand")
    n = game.num_players
    seated: dict[tuple[int, int], Agent] = {}
    hand = 0
    while positions.missing > 0 and not deadline.passed():
        learner = hand % n
        agents: list[Agent] = [base] * n
        for seat in range(n):
            if seat != learner:
                pick = int(draws.integers(len(plan.opponents)))
                if (seat, pick) not in seated:
                    seated[seat, pick] = make_agent(plan.opponents[pick], game,
                                                    seed=derive_seed(seed, seat, pick))
                agents[seat] = seated[seat, pick]
        for agent in {id(a): a for a in (*agents, positions.teacher)}.values():
            agent.reset()
        env.reset(seed=derive_seed(seed, hand))
        for name, seat, observation in live_turns(env):
            if seat != learner:
                show_table(agents[seat], env, name)
                env.step(agents[seat].act(observation))
                continue
            obs = np.asarray(observation["observation"], dtype=np.float32)
            mask = np.asarray(observation["action_mask"]).astype(np.bool_)
            action = int(network_actions(base.network, obs[None], mask[None])[0])
            if np.count_nonzero(mask) > 1:
                if draws.random() < plan.label_share and positions.missing > 0:
                    show_table(positions.teacher, env, name)
                    positions.label(obs, mask, action)
                elif draws.random() < plan.keep_share:
                    positions.keep(obs[None], mask[None])
            env.step(action)
        hand += 1
