"""The cheating search (``search:cheat=1``), the measured ceiling of inference: its worlds hold the other
seats' true hands, its face-down pile the true pile's cards in a random order, and it plays only where
the play loop shows it the true state."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.search import SearchAgent, SearchOptions, parse_spec
from cardlab.agents.search_options import BELIEFS
from cardlab.envs import make_env, make_game
from cardlab.envs.game_spec import Game
from cardlab.envs.world_sampling import revealed
from cardlab.evaluation.episodes import run_episode
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest

TABLES = [("huit", 2), ("huit", 4), ("switch", 4), ("switch", 5)]
CHEAT = "search:cheat=1:worlds=6:ms=0:"


def view(game: Game, state: Any) -> dict[str, np.ndarray]:
    """The observation dict of the seat to move."""
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[state.legal_actions()] = 1
    return {"observation": game.observer.observe(state, state.current), "action_mask": mask}


def positions(game: Game, count: int, seed: int) -> Iterator[Any]:
    """Copies of states in random legal play with a choice for the player to move (several seats, new
    hands)."""
    rng = np.random.default_rng(seed)
    state, found = game.new_state(rng), 0
    while found < count:
        if state.hand_over:
            state = game.new_state(rng)
            continue
        legal = state.legal_actions()
        if len(legal) > 1 and rng.random() < 0.3:
            found += 1
            yield copy.deepcopy(state)
        state.apply(int(legal[rng.integers(len(legal))]))


def pile_of(state: Any) -> list[int]:
    return sorted(getattr(state, state.PILES[0]))


def assert_true_hands(world: Any, state: Any) -> None:
    """World seat s (the observer at 0) holds true seat (mover + s)'s hand; the pile holds the true
    pile's cards."""
    n, mover = state.n, state.current
    for s in range(n):
        np.testing.assert_array_equal(world.hands[s], state.hands[(mover + s) % n])
    assert sorted(getattr(world, world.PILES[0])) == pile_of(state)


@pytest.mark.parametrize("game_id, players", TABLES)
def test_revealed_worlds_hold_the_true_hands_and_a_shuffled_true_pile(game_id: str, players: int) -> None:
    game = make_game(game_id, num_players=players)
    rng = np.random.default_rng(3)
    orders = set()
    for state in positions(game, 12, seed=players):
        known = revealed(game.determinization(view(game, state)), state, state.current)
        worlds = known.deal(rng, 8)
        for w in range(worlds.count):
            world = known.world(worlds, w, np.random.default_rng(w))
            assert_true_hands(world, state)
            orders.add(tuple(getattr(world, world.PILES[0])))
    assert len(orders) > 12  # the pile's order is dealt at random, not copied from the true state


@pytest.mark.parametrize("game_id, players", [("huit", 3), ("switch", 4)])
def test_a_cheating_search_loads_the_true_hands_into_every_slot(game_id: str, players: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the agent: every slot the search loads holds the true other hands (the engine's own
    state of the slot, read back), and the true pile's cards face down."""
    game = make_game(game_id, num_players=players)
    engine_class = game.spec.batched_engine()
    load_worlds = engine_class.load_worlds
    checked: list[int] = []
    truth: dict[str, Any] = {}

    def spied(engine: Any, known: Any, worlds: Any, slots: Any) -> None:
        load_worlds(engine, known, worlds, slots)
        for slot in np.asarray(slots).ravel():
            assert_true_hands(engine.to_state(int(slot)), truth["state"])
            checked.append(int(slot))

    monkeypatch.setattr(engine_class, "load_worlds", spied)
    agent = make_agent(CHEAT + "random", game, seed=1)
    assert agent.sees == frozenset({"state"})
    for state in positions(game, 6, seed=5):
        truth["state"] = state
        agent.show({"state": copy.deepcopy(state)})
        action = agent.act(view(game, state))
        assert action in state.legal_actions()
    assert checked


def test_a_cheating_search_shown_no_state_is_refused_saying_why() -> None:
    game = make_game("huit", num_players=2)
    agent = make_agent(CHEAT + "expert", game, seed=0)
    state = next(positions(game, 1, seed=2))
    with pytest.raises(ValueError, match=r"cheat=1 .*true state shown before each decision"):
        agent.act(view(game, state))
    agent.show({"state": copy.deepcopy(state)})
    agent.act(view(game, state))
    with pytest.raises(ValueError, match="showed none"):  # a state is used for one decision only
        agent.act(view(game, state))


def test_a_state_of_another_position_is_refused() -> None:
    game = make_game("huit", num_players=2)
    first, *_, last = list(positions(game, 8, seed=4))
    with pytest.raises(ValueError, match="is it the state of this observation"):
        revealed(game.determinization(view(game, last)), first, first.current)


def test_the_play_loop_shows_a_copy_of_the_true_state_to_an_agent_that_sees_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    env = make_env("huit", num_players=2)
    agent = make_agent(CHEAT + "expert", env.unwrapped.game, seed=0)
    assert isinstance(agent, SearchAgent)
    seen: list[Any] = []
    show = agent.show

    def spy(shown: Mapping[str, Any]) -> None:
        seen.append(shown["state"])
        assert shown["state"] is not env.unwrapped.game_state
        assert shown["state"].state_dict() == env.unwrapped.game_state.state_dict()
        show(shown)

    monkeypatch.setattr(agent, "show", spy)
    expert = make_agent("expert", env.unwrapped.game, seed=1)
    assert not expert.sees
    run_episode(env, [agent, expert], seed=3)
    assert seen
    result = evaluate(EvalRequest("huit", [CHEAT + "expert", "expert"],
                                  hands=4, seed=1, rules={"num_players": 2}))
    assert result.stats[0].hands.n == 4


def test_the_cheat_option_takes_0_or_1() -> None:
    assert parse_spec("search:cheat=1:expert")[0].cheat == 1
    assert parse_spec("search:expert")[0].cheat == 0
    with pytest.raises(ValueError, match=r"cheat=2 is out of range; accepted: a whole number 0 to 1"):
        parse_spec("search:cheat=2:expert")


@pytest.mark.parametrize("belief", [belief for belief in BELIEFS if belief != "uniform"])
def test_a_belief_beside_the_cheat_is_refused_in_one_line_naming_both(belief: str) -> None:
    """``cheat=1`` puts the true hands in every world, so a belief would deal and weigh none: refused, in a
    spec and in code alike, rather than searched as if it had read the hand; without the cheat, taken."""
    says = (f"search option belief={belief!r} is read only with cheat=0, not cheat=1; accepted: belief "
            "beside one of them, or none")
    with pytest.raises(ValueError) as caught:
        parse_spec(f"{CHEAT}belief={belief}:expert")
    assert str(caught.value).endswith(says) and "\n" not in str(caught.value), str(caught.value)
    with pytest.raises(ValueError, match=f"^{re.escape(says)}$"):
        SearchOptions(cheat=1, belief=belief)
    assert SearchOptions(cheat=0, belief=belief).belief == belief
    assert parse_spec(f"{CHEAT}belief=uniform:expert")[0].cheat == 1  # the default belief: nothing given
