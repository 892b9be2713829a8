"""The search agent (`search:BASE`): it finds a winning move its base misses, plays only legal moves,
repeats itself under one seed, plays as its base with no worlds, and refuses bad specs saying why."""

from __future__ import annotations

import dataclasses
import itertools
import re
import threading
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

from cardlab.agents import rollouts as rollouts_module
from cardlab.agents import search as search_module
from cardlab.agents.agent_spec import make_agent, make_search_agent
from cardlab.agents.base import Agent
from cardlab.agents.rollouts import FIRST_IN_FLIGHT, IN_FLIGHT, SMALLEST_BATCH
from cardlab.agents.search import LEVELS, SearchAgent, SearchOptions, parse_spec, rollout_spec
from cardlab.envs import make_env, make_game
from cardlab.envs.aec import live_turns
from cardlab.envs.game_spec import Game
from tests.agents.test_heuristics import GAMES as MODULES
from tests.agents.test_heuristics import play_hand, reachable
from tests.benchmarks import load_benchmark
from tests.toygame.spec import SPEC as TOY_SPEC

FAST = "search:worlds=4:ms=0:"
"""a small budget without a time cap: fast, and reproducible on any machine"""


def view(game: Game, state: Any) -> dict[str, np.ndarray]:
    """The observation dict of the seat to move."""
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[state.legal_actions()] = 1
    return {"observation": game.observer.observe(state, state.current), "action_mask": mask}


PLAIN = {
    "huit": {"announced": False, "ace_penalty": False, "phase": "play"},
    "switch": {"pending_draw": 0, "phase": "play", "drawn_card": None, "direction": 1, "first_out": None},
}
"""the game's own saved fields of a plain position (no run, no draw, no announcement)"""


def position(game: Game, hands: list[list[str]], top: str) -> Any:
    """A hand in play: these hands, `top` alone face up, the rest of the deck face down, seat 0 to move."""
    fresh = game.new_state(np.random.default_rng(0))
    down, played = fresh.PILES
    saved = fresh.state_dict()
    deck = [*saved[down], *saved[played], *itertools.chain.from_iterable(saved["hands"])]
    for card in [top, *itertools.chain.from_iterable(hands)]:
        deck.remove(card)
    saved.update({"hands": hands, played: [top], down: deck, "left_out": [], "current_player": 0,
                  "current_suit": top[-1], **PLAIN[game.id]})
    return game.restore(saved)


def decisions(game: Game, count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Observation dicts of the players to move (with a choice) in seeded random play."""
    rng = np.random.default_rng(seed)
    found: list[dict[str, np.ndarray]] = []
    state = game.new_state(rng)
    while len(found) < count:
        if state.hand_over:
            state = game.new_state(rng)
            continue
        legal = state.legal_actions()
        if len(legal) > 1:
            found.append(view(game, state))
        state.apply(int(legal[rng.integers(len(legal))]))
    return found


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("value", ["win", "points"])
def test_it_lays_the_three_nines_that_end_the_hand(players: int, value: str) -> None:
    """9S 9H 9C on 9D: laying all three wins at once; a random base mostly plays something else, the search
    never (from the seat's own point of view, at every table size)."""
    game = make_game("huit", num_players=players)
    hands = [["9S", "9H", "9C"], ["8C"], ["7C", "KC"], ["QC", "JC"]][:players]
    state = position(game, hands, "9D")
    observation = view(game, state)
    winning = {a for a in state.legal_actions() if len(game.action_to_str(a).split()) == 4}
    assert len(winning) == 3 and len(state.legal_actions()) == 13
    base_moves = [make_agent("random", game, seed=s).act(observation) for s in range(20)]
    assert sum(move in winning for move in base_moves) < 10
    for seed in range(5):
        agent = make_search_agent(f"search:worlds=16:ms=0:value={value}:random", game, seed=seed)
        assert agent.act(observation) in winning
        decision = agent.last_decision
        assert decision is not None and decision.worlds == 16
        best = {int(a) for a, v in zip(decision.candidates, decision.values, strict=True)
                if v == decision.values.max()}
        assert best <= winning


def test_it_skips_the_opponent_to_go_out_in_switch() -> None:
    """Switch, 2 players, 8H 9H on 3H: the 8 skips the opponent (A7), so 8H then 9H goes out for sure; 9H
    first gives the opponent, one card left, a turn to go out. A random base plays 9H half the time, the
    search never."""
    game = make_game("switch", num_players=2)
    state = position(game, [["8H", "9H"], ["4C"]], "3H")
    observation = view(game, state)
    eight, nine = game.str_to_action("play 8H"), game.str_to_action("play 9H")
    assert state.legal_actions() == sorted([eight, nine])
    assert {make_agent("random", game, seed=s).act(observation) for s in range(10)} == {eight, nine}
    for seed in range(5):
        agent = make_search_agent("search:worlds=16:ms=0:random", game, seed=seed)
        assert agent.act(observation) == eight
        decision = agent.last_decision
        assert decision is not None and decision.values[list(decision.candidates).index(eight)] == 1.0


@pytest.mark.parametrize("game_id, players, base", [("huit", 2, "bot:huit-2p"), ("huit", 3, "greedy"),
                                                     ("switch", 4, "bot:switch-4p")])
def test_it_plays_only_legal_moves_through_whole_hands(game_id: str, players: int, base: str) -> None:
    env = make_env(game_id, num_players=players)
    agents = [make_agent(FAST + base, env.game, seed=1), *(make_agent("random", env.game, seed=s)
                                                            for s in range(2, players + 1))]
    for hand in range(2):
        env.reset(seed=hand)
        for agent in agents:
            agent.reset()
        for _, seat, obs in live_turns(env):
            action = agents[seat].act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)


def test_the_same_seed_gives_the_same_moves() -> None:
    game = make_game("huit", num_players=2)
    observations = decisions(game, 12, seed=3)
    first, second = (make_agent(FAST + "bot:huit-2p", game, seed=7) for _ in range(2))
    moves = [first.act(o) for o in observations]
    assert [second.act(o) for o in observations] == moves
    first.seed(7)
    assert [first.act(o) for o in observations] == moves


@pytest.mark.parametrize("game_id, players, base", [("huit", 2, "bot:huit-2p"), ("huit", 4, "bot:huit-4p")])
def test_the_worlds_played_do_not_depend_on_how_many_are_in_play_at_once(
        monkeypatch: pytest.MonkeyPatch, game_id: str, players: int, base: str) -> None:
    """40 worlds in one batch, or streamed 3 at a time through freed slots (refills, worlds finishing out
    of order): each world's results land in its own column, the same values. (A bot breaks no ties at
    random, and without `shuffle_on_refill` no slot's generator is drawn from: nothing depends on which
    slot plays a world, or in which batch.)"""
    game = make_game(game_id, num_players=players)
    spec = f"search:worlds=40:ms=0:{base}"
    for observation in decisions(game, 4, seed=5):
        whole = make_search_agent(spec, game, seed=2)
        whole.act(observation)
        k = int(observation["action_mask"].sum())
        monkeypatch.setattr(rollouts_module, "IN_FLIGHT", 3 * k)
        streamed = make_search_agent(spec, game, seed=2)
        streamed.act(observation)
        monkeypatch.undo()
        assert whole.last_decision is not None and streamed.last_decision is not None
        assert whole.last_decision.worlds == streamed.last_decision.worlds == 40
        np.testing.assert_array_equal(whole.last_decision.values, streamed.last_decision.values)


@pytest.mark.parametrize(("base", "size"), [("expert", IN_FLIGHT), ("bot:huit-2p", FIRST_IN_FLIGHT)])
def test_a_clocked_search_s_warm_up_changes_none_of_its_moves(monkeypatch: pytest.MonkeyPatch, base: str,
                                                              size: int) -> None:
    """Before a clocked decision the search builds its engine at the size it plays in (fused: `IN_FLIGHT`
    slots; stepped: its first `in_flight`) and, the first time in a process, a twin decides once, so that
    the clock times no compiling; none of it draws from the search's own generators: warmed, then run
    without its clock, it plays what an unwarmed search plays, world for world (C2)."""
    monkeypatch.setattr(search_module, "_WARMED", set())
    game = make_game("huit", num_players=2)
    observations = decisions(game, 6, seed=3)
    plain = make_agent(f"search:worlds=40:ms=0:{base}", game, seed=7)
    warmed = make_agent(f"search:worlds=40:ms=50:{base}", game, seed=7)
    assert isinstance(plain, SearchAgent) and isinstance(warmed, SearchAgent)
    warmed.warm_up(observations[0])
    assert {f"search:worlds=40:ms=50:{base}"} == search_module._WARMED
    assert warmed.rollouts.engine.batch_size == size
    warmed.options = dataclasses.replace(warmed.options, ms=0)
    for observation in observations:
        assert warmed.act(observation) == plain.act(observation)
        assert plain.last_decision is not None and warmed.last_decision is not None
        np.testing.assert_array_equal(warmed.last_decision.values, plain.last_decision.values)


def test_a_search_over_a_base_that_cannot_be_copied_warms_up_without_a_twin_and_plays(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A search built in code (no spec) is warmed by a copy of itself; a base holding what cannot be copied
    (an ONNX session, a lock) leaves it without a twin, not failing its first clocked decision."""
    monkeypatch.setattr(search_module, "_WARMED", set())
    game = make_game("huit", num_players=2)
    base = make_agent("expert", game, seed=0)
    base.lock = threading.Lock()  # type: ignore[attr-defined]
    search = SearchAgent(game, base, parse_spec("search:worlds=8:ms=50:expert")[0], seed=0)
    observation = decisions(game, 1, seed=3)[0]
    search.warm_up(observation)
    assert len(search_module._WARMED) == 1
    assert observation["action_mask"][search.act(observation)]


def test_no_worlds_plays_as_the_base() -> None:
    game = make_game("switch", num_players=4)
    base = make_agent("bot:switch-4p", game)
    search = make_agent("search:worlds=0:bot:switch-4p", game, seed=0)
    for observation in decisions(game, 30, seed=1):
        assert search.act(observation) == base.act(observation)


def test_a_bot_acts_on_a_batch_as_on_each_observation() -> None:
    """`act_batch` (one forward pass) plays what `act` plays row by row: the rollouts play the bot itself."""
    game = make_game("huit", num_players=2)
    bot = make_agent("bot:huit-2p", game)
    observations = decisions(game, 40, seed=2)
    batch = bot.act_batch(np.stack([o["observation"] for o in observations]),
                          np.stack([o["action_mask"] for o in observations]))
    assert batch.tolist() == [bot.act(o) for o in observations]
    assert Agent.act_batch(bot, np.stack([o["observation"] for o in observations]),
                           np.stack([o["action_mask"] for o in observations])).tolist() == batch.tolist()


def test_a_time_cap_cut_plays_the_base_s_choice() -> None:
    """ms=1 ends the search before a world is finished (a whole rollout takes longer): the base's own
    move is played."""
    game = make_game("huit", num_players=2)
    agent = make_search_agent("search:worlds=64:ms=1:bot:huit-2p", game, seed=0)
    base = make_agent("bot:huit-2p", game)
    for observation in decisions(game, 5, seed=4):
        assert agent.act(observation) == base.act(observation)
        decision = agent.last_decision
        assert decision is not None and decision.worlds < SMALLEST_BATCH


@pytest.mark.parametrize("z, switches", [(0.0, True), (0.5, True), (1.0, False)])
def test_a_move_must_beat_the_base_s_choice_by_z_standard_errors(z: float, switches: bool) -> None:
    """Paired differences 0, 2, 0, 0 over four worlds: mean 0.5, standard error 0.5."""
    agent = make_agent(f"search:z={z}:random", make_game("huit", num_players=2), seed=0)
    assert isinstance(agent, SearchAgent)
    results = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, 1.0, 1.0]])
    assert agent._beats(results, best=0, base=1) is switches
    assert agent._beats(results[:, :0], best=0, base=1) is False
    assert agent._beats(results[:, 1:2], best=0, base=1) is (z == 0)


def test_one_legal_move_is_played_without_search() -> None:
    game = make_game("huit", num_players=2)
    state = position(game, [["7S"], ["7H"]], "AD")  # an Ace: only Aces, 8s or the 2-card draw (B7)
    state.ace_penalty = True
    agent = make_search_agent("search:bot:huit-2p", game, seed=0)
    assert agent.act(view(game, state)) == game.str_to_action("draw")
    assert agent.last_decision is None


def test_spec_options_are_read() -> None:
    assert parse_spec("search:bot:huit-2p") == (SearchOptions(), "bot:huit-2p")
    assert parse_spec("search:ms=0:worlds=8:value=points:z=0.5:bot:runs/lr=3/bot.json") == (
        SearchOptions(worlds=8, ms=0, value="points", z=0.5), "bot:runs/lr=3/bot.json")
    agent = make_agent("search:worlds=5:expert", make_game("huit", num_players=2), seed=0)
    assert isinstance(agent, SearchAgent) and agent.options.worlds == 5 and agent.base.name == "expert"
    assert agent.rollout is None and agent.rollouts.policy is agent.base


def test_levels_set_the_budget_and_explicit_options_override_them() -> None:
    """``level=quick`` (the default) and ``level=strong`` set worlds and ms from `LEVELS`; a ``worlds`` or
    ``ms`` given beside a level wins; the rollout names its policy."""
    quick, strong = LEVELS["quick"], LEVELS["strong"]
    assert (SearchOptions().worlds, SearchOptions().ms) == quick
    assert parse_spec("search:level=quick:expert")[0] == SearchOptions()
    options = parse_spec("search:level=strong:expert")[0]
    assert (options.worlds, options.ms, options.level) == (*strong, "strong")
    assert strong[1] > quick[1] and strong[0] >= quick[0]
    options = parse_spec("search:level=strong:ms=0:rollout=expert:bot:huit-2p")[0]
    assert (options.worlds, options.ms, options.rollout) == (strong[0], 0, "expert")
    game = make_game("huit", num_players=2)
    agent = make_agent("search:rollout=greedy:bot:huit-2p", game, seed=0)
    assert isinstance(agent, SearchAgent) and agent.rollout is not None and agent.rollout.name == "greedy"
    assert agent.rollouts.policy is agent.rollout and agent.base is not agent.rollout


def test_a_game_without_the_rollout_heuristic_is_refused_saying_which_it_has() -> None:
    """``rollout=`` names a policy the game must have: random, its heuristics, its table's bot."""
    toy = TOY_SPEC.make()
    assert rollout_spec("base", toy) is None and rollout_spec("random", toy) == "random"
    assert rollout_spec("bot", make_game("huit", num_players=4)) == "bot:huit"
    with pytest.raises(ValueError, match="has no expert heuristic; give rollout=base, rollout=random, "
                                         "rollout=bot"):
        rollout_spec("expert", toy)


@pytest.mark.parametrize("spec, says", [
    ("search", "names no base agent"),
    ("search:", "names no base agent"),
    ("search:worlds=8", "names no base agent"),
    ("search:world=8:expert", "unknown search option(s) world=8; accepted: level=quick|strong"),
    ("search:worlds:expert", "search option worlds needs a value (worlds=VALUE); accepted: a whole number 0 "
                             "to 16384"),
    ("search:worlds=many:expert", "worlds='many' is of the wrong type; accepted"),
    ("search:worlds=-1:expert", "worlds=-1 is out of range; accepted: a whole number 0 to 16384"),
    ("search:worlds=20000:expert", "out of range; accepted: a whole number 0 to 16384"),
    ("search:level=fast:expert", "level='fast' is not one of the choices; accepted: one of level=quick, "
                                  "level=strong"),
    ("search:rollout=wizard:expert", "rollout='wizard' is not one of the choices; accepted: one of "
                                     "rollout=base, rollout=random, rollout=greedy, rollout=expert, "
                                     "rollout=bot"),
    ("search:rollout:expert", "search option rollout needs a value (rollout=VALUE); accepted: one of "
                              "rollout=base, rollout=random"),
    ("search:ms=fast:expert", "ms='fast' is of the wrong type"),
    ("search:value=score:expert", "value='score' is not one of the choices; accepted: one of value=win, "
                                   "value=points"),
    ("search:weigh=average:belief=expert:expert",
     "weigh='average' is not one of the choices; accepted: one of weigh=resample, weigh=weights"),
    ("search:z=-1:expert", "z=-1.0 is out of range; accepted: a number from 0 to 10"),
    ("search:z=sure:expert", "z='sure' is of the wrong type; accepted"),
    ("search:worlds=4:worlds=8:expert", "given twice"),
    ("search:search:expert", "cannot be another search"),
    ("search:wizard", "its base agent: unknown agent spec 'wizard'"),
    ("search:bot:huit-9p", "its base agent: no shipped bot named 'huit-9p'"),
])
def test_bad_specs_are_refused_saying_why(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        make_agent(spec, make_game("huit", num_players=2))


def test_a_game_without_determinization_is_refused() -> None:
    with pytest.raises(ValueError, match="no determinization"):
        make_agent("search:random", TOY_SPEC.make())


def test_the_latency_benchmark_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """`benchmarks/decision_latency.py` stays runnable (the test suite does not run it otherwise)."""
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)  # the module sets it; restored after the test
    bench = load_benchmark("decision_latency", monkeypatch)
    assert bench.table_of("search:worlds=2:bot:switch-4p") == ("switch", 4)
    assert bench.table_of("search:expert@huit-4p") == ("huit", 4)
    bot = bench.measure("bot:huit-2p", 6, warmup=2)
    search = bench.measure("search:worlds=2:ms=0:bot:huit-2p", 6, warmup=2)
    assert len(bot.times_ms) == len(search.times_ms) == 6 and bot.worlds is None
    assert search.worlds is not None and 0 < search.worlds <= 2 and 0 <= search.forced < 1
    assert len(search.choice_ms) == round(6 * (1 - search.forced))
    cells = search.row().split("|")
    assert cells[1].strip() == "`search:worlds=2:ms=0:bot:huit-2p`" and cells[2].strip() == "huit 2p"


@pytest.mark.parametrize("game_id, base", [("huit", "greedy"), ("switch", "random")])
def test_a_search_cannot_reach_the_other_hands(game_id: str, base: str) -> None:
    """After a whole hand the search holds no env, no engine state and no card list of the table: its
    worlds are sampled from its observations and dropped after each decision."""
    env = MODULES[game_id].raw_env(num_players=3)
    agents = [make_agent(FAST + base, env.game, seed=s) for s in range(3)]
    play_hand(env, agents, seed=4)
    state = env.game_state
    hidden = {id(state), id(env), *(id(h) for h in state.hands),
              *(id(getattr(state, pile)) for pile in state.PILES)}
    for agent in agents:
        found = reachable(agent)
        assert not [o for o in found if id(o) in hidden]
        assert not [o for o in found if isinstance(o, (AECEnv, type(state)))]
