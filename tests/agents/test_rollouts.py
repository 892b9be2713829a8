"""A search's rollouts (`cardlab.agents.rollouts`): the fused play-out finds what the stepped rollouts find
with the same model in every seat, per-seat models play their seats (and only theirs), and a search with
the compiled rollouts repeats itself under one seed (C2)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.rollouts import Rollouts, fused_to_end
from cardlab.agents.search import SearchAgent, SearchOptions
from cardlab.envs import make_game
from cardlab.envs.game_spec import Game
from tests.agents.test_search import decisions
from tests.spies import BatchSpy


class Stepped(Agent):
    """Plays as the agent it wraps, from that agent's generator, but is no compiled heuristic: a rollout
    it plays in takes the stepped way (one `act_batch` per engine step)."""

    name = "stepped"

    def __init__(self, inner: Agent) -> None:
        super().__init__(inner.game)
        self.inner = inner

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return self.inner.act(observation)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.inner.act_batch(observations, masks)


class SeatSpy(BatchSpy):
    """A `BatchSpy` that keeps the observations it was asked about."""

    def __init__(self, game: Game, seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.seen: list[np.ndarray] = []

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.seen.append(np.array(observations))
        return super().act_batch(observations, masks)


def searched(game: Game, rollout: Agent, observation: dict[str, np.ndarray], worlds: int = 48) -> Any:
    """The decision of a search over the expert with `rollout` in every seat, no time cap."""
    base = make_agent("expert", game, seed=1)
    agent = SearchAgent(game, base, SearchOptions(worlds=worlds, ms=0), seed=3, rollout=rollout)
    agent.act(observation)
    return agent.last_decision


@pytest.mark.parametrize("game_id, players, kind", [("huit", 2, "expert"), ("huit", 4, "expert"),
                                                   ("switch", 4, "random"), ("switch", 4, "greedy"),
                                                   ("switch", 4, "expert"), ("switch", 5, "expert")])
def test_the_fused_play_out_finds_what_the_stepped_rollouts_find(game_id: str, players: int,
                                                                 kind: str) -> None:
    """``rollout=KIND`` in every seat, played to the end in one compiled call, gives each candidate the
    same value in every world as the round-by-round rollouts (one `act_batch` per step) with the same
    heuristic and generator state, so the same move: the fused loop plays the same games."""
    game = make_game(game_id, num_players=players)
    for observation in decisions(game, 6, seed=players):
        fused = searched(game, make_agent(kind, game, seed=5), observation)
        stepped = searched(game, Stepped(make_agent(kind, game, seed=5)), observation)
        assert fused.worlds == stepped.worlds == 48
        np.testing.assert_array_equal(fused.values, stepped.values)
        assert fused.action == stepped.action


@pytest.mark.parametrize("game_id", ["huit", "switch"])
def test_the_fused_way_is_taken_only_when_one_compiled_model_plays_every_seat(game_id: str) -> None:
    game = make_game(game_id, num_players=3)
    expert = make_agent("expert", game, seed=0)
    rollouts = Rollouts(game, expert, engine_seed=0)
    engine = rollouts.batch(8)
    assert rollouts.fused(engine) is not None
    rollouts.seat_models = {2: make_agent("expert", game, seed=1)}
    assert rollouts.fused(engine) is None
    rollouts.seat_models = {1: expert, 2: expert}
    assert rollouts.fused(engine) is not None
    assert Rollouts(game, Stepped(expert), engine_seed=0).fused(engine) is None
    other = make_game("switch" if game_id == "huit" else "huit", num_players=3)
    assert fused_to_end(engine, make_agent("expert", other, seed=0)) is None  # another game's heuristic
    four = make_game(game_id, num_players=4)
    assert fused_to_end(engine, make_agent("expert", four, seed=0)) is None  # other rules


def test_each_seat_s_model_is_asked_for_its_own_seat_s_moves_only() -> None:
    """One engine step of 64 slots of 4-player play: the model of seat 2 gets exactly the rows whose seat
    to move is 2 and has a choice, with that seat's observations; the rollout policy gets the others."""
    game = make_game("huit", num_players=4)
    policy, spy = SeatSpy(game, seed=0), SeatSpy(game, seed=1)
    rollouts = Rollouts(game, policy, engine_seed=0)
    engine = rollouts.batch(64)
    rng = np.random.default_rng(0)
    for _ in range(5):  # move the slots on so that every seat is to move in some
        engine.step(np.array([np.flatnonzero(row)[rng.integers(row.sum())] for row in engine.legal_mask()]))
    rollouts.seat_models = {2: spy}
    live = np.flatnonzero(~engine.over)
    mask = engine.legal_mask(live)
    chooses = live[mask.sum(axis=1) > 1]
    seats = engine.current_player()[chooses]
    assert (seats == 2).any() and (seats != 2).any()
    actions = np.full(engine.batch_size, -1, dtype=np.int64)
    rollouts.act(engine, live, actions)
    assert len(spy.seen) == len(policy.seen) == 1
    np.testing.assert_array_equal(spy.seen[0], engine.observe(seats[seats == 2], chooses[seats == 2]))
    np.testing.assert_array_equal(policy.seen[0], engine.observe(seats[seats != 2], chooses[seats != 2]))
    assert all(engine.legal_mask(live)[i, actions[slot]] for i, slot in enumerate(live))


def test_a_search_plays_its_seat_models_in_its_rollouts() -> None:
    """`set_seat_models` from the searcher's point of view (1 = the next seat): the spy of seat 1 is asked
    during a search over the expert, and an empty mapping gives the seat back to the rollout policy."""
    game = make_game("huit", num_players=2)
    agent = make_agent("search:worlds=16:ms=0:rollout=expert:expert", game, seed=0)
    assert isinstance(agent, SearchAgent)
    spy = SeatSpy(game, seed=0)
    agent.set_seat_models({1: spy})
    observation = decisions(game, 1, seed=0)[0]
    assert observation["action_mask"][agent.act(observation)] == 1
    assert spy.seen and agent.last_decision is not None and agent.last_decision.worlds == 16
    asked = len(spy.seen)
    agent.set_seat_models({})
    agent.act(observation)
    assert len(spy.seen) == asked


@pytest.mark.parametrize("models, says", [
    ({0: "expert"}, "keyed by seat relative to the searcher, 1..1 at this 2-player table"),
    ({2: "expert"}, "1..1 at this 2-player table"),
    ({1: "nothing"}, "must be a cardlab Agent"),
    ({1: "other"}, "plays huit with other rule options"),
    ({1: "search"}, "rollouts cannot search"),
])
def test_bad_seat_models_are_refused_saying_why(models: dict[int, str], says: str) -> None:
    game = make_game("huit", num_players=2)
    agent = make_agent("search:worlds=4:ms=0:expert", game, seed=0)
    assert isinstance(agent, SearchAgent)
    made = {"expert": make_agent("expert", game), "nothing": object(),
            "other": make_agent("expert", make_game("huit", num_players=3)),
            "search": make_agent("search:worlds=2:expert", game)}
    agent.set_seat_models({1: make_agent("greedy", game)})
    before = dict(agent.rollouts.seat_models)
    with pytest.raises(ValueError, match=says):
        agent.set_seat_models({seat: made[name] for seat, name in models.items()})  # type: ignore[misc]
    assert agent.rollouts.seat_models == before


@pytest.mark.parametrize("spec", ["search:worlds=96:ms=0:rollout=expert:expert",
                                  "search:worlds=96:ms=0:rollout=greedy:bot:huit-2p"])
def test_the_same_seed_gives_the_same_moves_with_compiled_rollouts(spec: str) -> None:
    """C2 with ``ms=0``: two searches of one seed, and one reseeded, play the same moves and find the same
    values (the rollout policy's tie-breaks come from its own seeded generator)."""
    game = make_game("huit", num_players=2)
    observations = decisions(game, 8, seed=9)
    first, second = (make_agent(spec, game, seed=4) for _ in range(2))
    assert isinstance(first, SearchAgent) and isinstance(second, SearchAgent)
    moves, values = [], []
    for observation in observations:
        moves.append(first.act(observation))
        values.append(None if first.last_decision is None else first.last_decision.values)
    assert [second.act(o) for o in observations] == moves
    first.seed(4)
    for observation, value in zip(observations, values, strict=True):
        first.act(observation)
        if value is not None:
            assert first.last_decision is not None
            np.testing.assert_array_equal(first.last_decision.values, value)


def test_a_grown_engine_goes_on_with_the_old_slots_generators() -> None:
    """C2 in any order of play: after a reseed, slot i draws the same numbers whether the engine was grown
    since (its first slots carry the old generators on) or was already large (fresh from the seed)."""
    game = make_game("switch", num_players=4)
    grown = Rollouts(game, make_agent("greedy", game), engine_seed=5)
    grown.batch(64).generators[3].random(7)  # slot 3 drew before the engine had to grow
    large = Rollouts(game, make_agent("greedy", game), engine_seed=5)
    large.batch(256).generators[3].random(7)
    engine = grown.batch(200)
    assert engine.batch_size == 256 and engine is not large.engine
    for slot in (3, 0, 100):
        assert engine.generators[slot].random() == large.engine.generators[slot].random()


def test_a_search_reseeds_its_seat_models_with_itself() -> None:
    """A seat model's generator restarts with the search's seed (C2: a hand replays whatever the model
    drew before); one model in several seats is seeded once, and the base keeps its own seed."""
    game = make_game("switch", num_players=4)
    agent = make_agent("search:worlds=4:ms=0:expert", game, seed=0)
    assert isinstance(agent, SearchAgent)
    model = make_agent("random", game, seed=1)
    agent.set_seat_models({1: model, 2: model, 3: agent.base})
    agent.seed(11)
    first = model.rng.random(3)
    base_first = agent.base.rng.random(3)
    model.rng.random(5)
    agent.seed(11)
    np.testing.assert_array_equal(model.rng.random(3), first)
    np.testing.assert_array_equal(agent.base.rng.random(3), base_first)
    agent.seed(12)
    assert not np.array_equal(model.rng.random(3), first)
