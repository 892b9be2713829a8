"""The belief within a search's budget: the compiled replay (`cardlab.envs.huit.fast.replay`) against the
stepped one, the replay in blocks (`cardlab.agents.hand_reading.reading`), and ``weigh=weights``
(importance-sampled values)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import show_table
from cardlab.agents.hand_reading import belief as B
from cardlab.agents.hand_reading import reading as RD
from cardlab.agents.hand_reading.reading import MIN_BLOCK, Reading, Weighing, weighed_margin, weighed_values
from cardlab.agents.search import SearchAgent, SearchOptions, parse_spec
from cardlab.envs import make_env
from cardlab.envs.aec import live_turns
from cardlab.evaluation.episodes import seat_zero_choices


def recorded(players: int, hands: int, seed: int) -> list[tuple[Any, Any, Any]]:
    """(game, determinization, record) at seat 0's decisions with a choice in hands of experts, where the
    record replays (no pile turned over, A10/B10)."""
    env = make_env("huit", num_players=players)
    game = env.unwrapped.game
    agents = [make_agent("expert", game, seed=s) for s in range(players)]
    return [(game, choice.determinization(), choice.record)
            for hand in range(hands) for choice in seat_zero_choices(env, agents, seed + hand)
            if choice.unreplayable is None]


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("model", ["expert", "greedy", "random"])
def test_the_compiled_replay_gives_the_stepped_replay_s_weights(players: int, model: str) -> None:
    """Same worlds, same generators: the same fits and log-likelihoods per seat (ties drawn alike, so the
    model's generator is left where the stepped loop leaves it)."""
    cases = recorded(players, 3, seed=300)
    assert len(cases) >= 5
    game = cases[0][0]
    engine = game.spec.batched_engine()(game.rules, 128, seed=0)
    fast_agent, slow_agent = make_agent(model, game, seed=7), make_agent(model, game, seed=7)
    assert B.fused_replay_of(engine, B.Model(model, fast_agent)) is not None
    told_apart = 0
    for i, (_, known, record) in enumerate(cases):
        worlds = known.deal(np.random.default_rng(i), 128)
        fast = B.play_back(game, known, worlds, record, [B.Model(model, fast_agent)],
                           np.random.default_rng(50 + i), engine)
        slow = B.play_back(game, known, worlds, record, [B.Model(model, slow_agent)],
                           np.random.default_rng(50 + i), engine, fused=False)
        assert (fast.ok == slow.ok).all()
        np.testing.assert_allclose(fast.loglik, slow.loglik, rtol=0, atol=1e-12)
        told_apart += int(np.ptp(fast.loglik.sum(axis=1)[0, fast.ok]) > 0) if fast.ok.any() else 0
    assert told_apart >= len(cases) // 2  # the worlds are weighed apart, not all alike
    assert fast_agent.rng.random() == slow_agent.rng.random()


def test_under_a_cap_the_replay_stops_after_its_first_block_when_time_is_up() -> None:
    """Blocks replay every world wanted without a cap; past the replay's deadline only the first block
    (`MIN_BLOCK` worlds) is replayed, so a decision's cap holds with the belief on."""
    game, known, record = recorded(2, 2, seed=40)[-1]
    reading = Reading(game, make_agent("expert", game, seed=0), "expert", False, 0.0, seed=1)
    rng = np.random.default_rng(0)
    deal = lambda start, size: known.deal(rng, size)  # noqa: E731 - the source of worlds, as `read` gives it
    parts, replayed = reading._blocks(known, record, rng, 3 * MIN_BLOCK, None, deal)
    assert sum(p.count for p in parts) == replayed.ok.size == 3 * MIN_BLOCK
    parts, replayed = reading._blocks(known, record, rng, 40 * MIN_BLOCK, time.perf_counter() - 1.0, deal)
    assert [p.count for p in parts] == [MIN_BLOCK] and replayed.loglik.shape[2] == MIN_BLOCK


def test_equal_weights_choose_exactly_what_the_uniform_search_chooses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With every world weighed alike, weigh=weights plays the uniform search's worlds, values and moves
    (no cap: the same worlds from the same generator, the same rollouts)."""
    def flat(game: Any, known: Any, worlds: Any, *args: Any, **kwargs: Any) -> B.Replayed:
        return B.Replayed(np.zeros((1, game.num_players, worlds.count)), np.ones(worlds.count, dtype=bool))

    monkeypatch.setattr(RD, "play_back", flat)
    env = make_env("huit", num_players=2)
    game = env.unwrapped.game
    weighed = make_agent("search:worlds=24:ms=0:belief=expert:weigh=weights:expert", game, seed=3)
    uniform = make_agent("search:worlds=24:ms=0:expert", game, seed=3)
    assert isinstance(weighed, SearchAgent) and isinstance(uniform, SearchAgent)
    compared = 0
    for hand in range(2):
        env.reset(seed=hand)
        for name, _, obs in live_turns(env):
            weighed.show({"record": env.unwrapped.public_record(name)})
            move = weighed.act(obs)
            assert move == uniform.act(obs)
            if weighed.last_decision is not None:
                assert uniform.last_decision is not None
                assert (weighed.last_decision.values == uniform.last_decision.values).all()
                last = weighed.reading.last if weighed.reading is not None else None
                compared += int(last is not None and not last.uniform)
            env.step(move)
    assert compared >= 5  # decisions where the weights were used (not the uniform fallback)


def test_the_weights_flip_a_choice_the_plain_means_would_not_make() -> None:
    """Candidate 1 loses in the two worlds that the record makes unlikely and wins in the two likely ones:
    its plain mean is 0 against the base's 0, its weighted mean well above, by more than z errors."""
    results = np.array([[0.0, 0.0, 0.0, 0.0],      # the base's choice
                        [-1.0, -1.0, 1.0, 1.0]])   # candidate 1
    likely = np.array([0.01, 0.01, 0.49, 0.49])
    agent = make_agent("search:z=1:expert", make_env("huit", num_players=2).unwrapped.game, seed=0)
    assert isinstance(agent, SearchAgent)
    assert weighed_values(results, None).tolist() == [0.0, 0.0]
    assert not agent._beats(results, best=1, base=0)
    assert int(np.argmax(weighed_values(results, likely))) == 1
    assert agent._beats(results, best=1, base=0, weights=likely)
    mean, error, size = weighed_margin(results[1] - results[0], likely)
    assert mean == pytest.approx(0.96) and size == pytest.approx(1 / (2 * 0.01**2 + 2 * 0.49**2))
    assert error == pytest.approx(np.sqrt((likely**2 * (results[1] - mean) ** 2).sum() * size / (size - 1)))


def test_equal_weights_give_the_plain_paired_test() -> None:
    diff = np.array([0.0, 2.0, 0.0, 0.0])
    assert weighed_margin(diff, np.full(4, 0.25)) == weighed_margin(diff, None)
    mean, error, size = weighed_margin(diff, None)
    assert (mean, size) == (0.5, 4.0) and error == pytest.approx(diff.std(ddof=1) / 2)


def test_a_capped_weights_search_deals_its_worlds_as_the_rollouts_reach_them() -> None:
    """Under a cap the worlds are dealt block by block: asking for worlds not dealt yet is refused, and
    the decision's weights cover the worlds finished."""
    _, known, record = recorded(2, 2, seed=40)[-1]
    weighing = Weighing(known, record, np.random.default_rng(0), 500, capped=True)
    assert weighing.count == 500 and weighing.dealt == 0
    with pytest.raises(ValueError, match="call prepare"):
        weighing.rows(slice(0, 10))
    assert weighing.deal(70).count == 70 and weighing.dealt == 70
    env = make_env("huit", num_players=2)
    agent = make_agent("search:ms=30:belief=expert:weigh=weights:expert", env.unwrapped.game, seed=0)
    other = make_agent("expert", env.unwrapped.game, seed=1)
    assert isinstance(agent, SearchAgent) and agent.reading is not None
    weighed = 0
    for hand in range(2):
        env.reset(seed=5 + hand)
        for name, seat, obs in live_turns(env):
            if seat == 1:
                env.step(other.act(obs))
                continue
            show_table(agent, env, name)
            env.step(agent.act(obs))
            last, decision = agent.reading.last, agent.last_decision
            if decision is not None and last is not None and not last.uniform:
                assert last.weights.size == last.worlds.count == decision.worlds > 0
                weighed += 1
    assert weighed


@pytest.mark.parametrize("spec", ["search:weigh=importance:belief=expert:expert", "search:weigh=:expert"])
def test_a_bad_weigh_is_refused_naming_the_accepted_ones(spec: str) -> None:
    with pytest.raises(ValueError, match="; accepted: one of weigh=resample, weigh=we"):
        parse_spec(spec)
    assert parse_spec("search:belief=expert:weigh=weights:expert")[0] == SearchOptions(belief="expert",
                                                                                        weigh="weights")
