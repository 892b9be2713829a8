"""Switch's compiled play-out to the hand's end (`cardlab.envs.switch.fast.playout`): the games it
plays are those the stepped rollouts play (`Rollouts.act`, one `act_batch` per engine step), draw runs
(A6) and refills of the stock (A10) included, and a capped search takes it in waves."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.rollouts import FIRST_WAVE, Rollouts, fused_to_end
from cardlab.agents.search import SearchAgent
from cardlab.envs import make_game
from cardlab.envs.switch.batched import SwitchBatch
from cardlab.envs.switch.kernels import DISCARD_LEN, FIRST_OUT, OVER, PENDING
from cardlab.envs.switch.rules import SwitchRules
from tests.agents.test_search import decisions

SLOTS, PLAYED = 192, 160
"""the engine's slots, and the first ones played to the end (the others must not move)"""


class Coverage(NamedTuple):
    """What the stepped play went through, counted over its steps and slots."""

    twos: int  # a 2 added to a draw run (A6)
    jokers: int  # a Joker added to one
    refills: int  # the discard pile turned into the stock (A10)
    out_on_a_run: int  # a player out while a run was pending (A9)


def state_of(engine: SwitchBatch) -> dict[str, Any]:
    """Every slot's arrays and generator state."""
    arrays = {name: getattr(engine, name).copy() for name in engine.STATE_ARRAYS}
    return {**arrays, "generators": [g.bit_generator.state for g in engine.generators]}


def stepped_to_end(engine: SwitchBatch, agent: Agent, seat: int, gained: np.ndarray) -> Coverage:
    """The first `PLAYED` slots played to the hand's end the stepped rollouts' way, `gained` adding `seat`'s
    rewards."""
    rollouts = Rollouts(agent.game, agent, engine_seed=None)
    actions = np.zeros(engine.batch_size, dtype=np.int64)
    twos = jokers = refills = out = 0
    while True:
        live = np.flatnonzero(~engine.over[:PLAYED])
        if not live.size:
            return Coverage(twos, jokers, refills, out)
        rollouts.act(engine, live, actions)
        active = np.zeros(engine.batch_size, dtype=np.bool_)
        active[live] = True
        before = engine.info[live].copy()
        rewards = engine.step(actions, active)[0]
        gained[live] += rewards[live, seat]
        after = engine.info[live]
        grown = np.where(after[:, OVER] == 0, after[:, PENDING] - before[:, PENDING], 0)
        twos, jokers = twos + int((grown == 2).sum()), jokers + int((grown == 5).sum())
        refills += int((after[:, DISCARD_LEN] < before[:, DISCARD_LEN]).sum())
        out += int(((after[:, FIRST_OUT] >= 0) & (before[:, FIRST_OUT] < 0)).sum())


@pytest.mark.parametrize("players, options", [
    (4, {"num_decks": 1}), (5, {"num_decks": 1}), (5, {}),
    (4, {"num_decks": 1, "memory": True, "voluntary_draw": True, "match_rank": False}),
])
@pytest.mark.parametrize("kind", ["random", "greedy", "expert"])
def test_the_fused_play_out_plays_the_games_of_the_stepped_play(players: int, options: dict[str, Any],
                                                                kind: str) -> None:
    """From the same deals, engine seed and agent seed, the fused play-out leaves every slot, its
    generator (A10's shuffles draw from it), the seat's gains and the agent's generator (its tie-breaks
    and random moves) as the stepped play does, and the slots from n on as they were. One deck makes
    refills (A10) common; the stepped play is checked to have gone through 2s and Jokers added to runs
    (A6), a player out on a run (A9) and with one deck refills."""
    rules = SwitchRules(num_players=players, **options)
    game = make_game("switch", num_players=players, **options)
    fused_engine, stepped_engine = (SwitchBatch(rules, SLOTS, seed=11) for _ in range(2))
    fused_agent, stepped_agent = (make_agent(kind, game, seed=3) for _ in range(2))
    seat = players - 1
    untouched = {name: getattr(fused_engine, name)[PLAYED:].copy() for name in fused_engine.STATE_ARRAYS}
    play = fused_to_end(fused_engine, fused_agent)
    assert play is not None
    fused_gained, stepped_gained = np.zeros(SLOTS), np.zeros(SLOTS)
    play(PLAYED, seat, fused_gained)
    seen = stepped_to_end(stepped_engine, stepped_agent, seat, stepped_gained)
    fused, stepped = state_of(fused_engine), state_of(stepped_engine)
    for name in fused_engine.STATE_ARRAYS:
        np.testing.assert_array_equal(fused[name], stepped[name], err_msg=name)
        np.testing.assert_array_equal(getattr(fused_engine, name)[PLAYED:], untouched[name], err_msg=name)
    assert fused["generators"] == stepped["generators"]
    assert fused_agent.rng.bit_generator.state == stepped_agent.rng.bit_generator.state
    np.testing.assert_array_equal(fused_gained, stepped_gained)
    assert fused_engine.over[:PLAYED].all()  # (random voluntary draws can run into C1's cut)
    assert (fused_gained[:PLAYED] == 1.0).any() and (fused_gained[:PLAYED] < 0).any()
    assert seen.twos and seen.jokers and seen.out_on_a_run, seen
    assert seen.refills or "num_decks" not in options, seen  # four decks: the stock hardly runs out


@pytest.mark.parametrize("call, says", [
    ((65, 0), "slots must be a count 0..64, got 65"),
    ((True, 0), "slots must be a count 0..64, got True"),
    ((8, 4), "seat must be a seat index 0..3, got 4"),
    ((8, -1), "seat must be a seat index 0..3, got -1"),
])
def test_bad_arguments_are_refused_saying_what_is_accepted(call: tuple[Any, Any], says: str) -> None:
    game = make_game("switch", num_players=4)
    engine = SwitchBatch(SwitchRules(), 64, seed=0)
    play = fused_to_end(engine, make_agent("greedy", game, seed=0))
    assert play is not None
    before = engine.info.copy()
    with pytest.raises(ValueError, match=says):
        play(call[0], call[1], np.zeros(64))
    with pytest.raises(ValueError, match=r"gained must be a \(64,\) float64 array"):
        play(8, 0, np.zeros(64, dtype=np.float32))
    np.testing.assert_array_equal(engine.info, before)


def test_only_the_game_s_own_compiled_heuristics_get_a_play_out() -> None:
    game = make_game("switch", num_players=4)
    engine = SwitchBatch(SwitchRules(), 64, seed=0)
    assert fused_to_end(engine, make_agent("bot:switch-4p", game)) is None
    assert fused_to_end(engine, make_agent("expert", make_game("switch", num_players=4, num_decks=1))) is None
    assert fused_to_end(engine, make_agent("expert", make_game("huit", num_players=4))) is None


def test_a_capped_switch_search_plays_waves_sized_by_its_pace() -> None:
    """``ms=50`` over the expert with the expert's rollouts: more worlds than the first wave (the later
    waves sized by the pace it measured), fewer than asked, and the decision within the cap and a wave."""
    game = make_game("switch", num_players=4)
    agent = make_agent("search:worlds=2048:ms=50:expert", game, seed=0)
    assert isinstance(agent, SearchAgent)
    for observation in decisions(game, 4, seed=2):
        agent.act(observation)  # numba's kernels load and the engine is built at the first
        started = time.perf_counter()
        agent.act(observation)
        took = time.perf_counter() - started
        decision = agent.last_decision
        assert decision is not None and FIRST_WAVE < decision.worlds < 2048
        assert took < 0.05 + 0.25
        assert agent.rollouts.fused(agent.rollouts.engine) is not None
