"""Beliefs and recognised opponents (`cardlab.agents.hand_reading.belief`) on stacked deals, short tables."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.hand_reading import belief as B
from cardlab.agents.search import SearchAgent, SearchOptions
from cardlab.envs import cards as C
from cardlab.envs import make_env
from cardlab.envs.record import DRAW
from cardlab.envs.world_sampling import Worlds
from cardlab.evaluation.episodes import run_episode
from tests.agents.deals import forced_draw

BANK = ["7H", "QS", "KS", "JC", "AC", "9C", "10C", "7C", "8D", "QH", "JH", "KC", "8H", "9H", "10S", "JS",
        "QD", "KD", "AS", "7D", "8S", "AH"]
# Huit, 2 players, seat 0 first (dealer 1, B3). Seat 1 holds no spade, no 7, one 8 and most diamonds (the
# expert announces its longest suit: no tie for its generator to break).
EIGHT_ONLY = {"hands": [["7S", "9S", "10H", "JD", "QC"], ["8C", "9D", "10D", "KH", "AD"]], "bank": BANK,
              "dealer": 1}


def true_world(known: Any, state: Any, seat: int) -> Worlds:
    """The one world that is the table's true state, as `known` (seat `seat`'s view) lays out a row."""
    n = len(known.sizes)
    spans, _ = known.spans
    row: list[int] = []
    for s, _start, _stop in spans:
        row += C.counts_to_cards(state.hands[(seat + s) % n].tolist())
    face_down = getattr(state, state.PILES[0])[::-1]  # top first
    row += face_down
    rest = list(known.unseen)
    for card in row:
        rest.remove(card)
    return Worlds(np.array([row + rest], dtype=np.int64), np.array([known.under], dtype=np.int64), {})


def joined(a: Worlds, b: Worlds) -> Worlds:
    return Worlds(np.concatenate([a.hidden, b.hidden]), np.concatenate([a.under, b.under]), {})


def test_a_seat_that_spent_its_8_is_believed_to_have_had_no_other_play() -> None:
    # B5: on 7S a seat may follow with a spade or a 7; B6: an 8 goes on anything. The expert keeps its 8
    # when it can follow, so after seat 1 lays 8C the worlds where it holds a spade or a 7 are unlikely.
    env = make_env("huit", num_players=2, hand_size=5)
    raw, game = env.unwrapped, env.unwrapped.game
    env.reset(options={"deal": EIGHT_ONLY})
    env.step(game.str_to_action("play 7S"))
    env.step(make_agent("expert", game, seed=0).act(env.observe("player_1")))
    assert raw.public_record("player_0").events[-1].cards == (C.parse_card("8C"),)
    obs, record = env.observe("player_0"), raw.public_record("player_0")
    known = game.determinization(obs, 0, record)
    rng = np.random.default_rng(0)
    worlds = joined(true_world(known, raw.game_state, 0), known.deal(rng, 400))
    expert = B.Model("expert", make_agent("expert", game, seed=1))
    replayed = B.play_back(game, known, worlds, record, [expert], rng)
    assert replayed.ok.all()  # B9: any hand can have made these moves
    weights = B.weigh(worlds, replayed, [0, 0], 0.0, rng).weights
    spans, _ = known.spans
    _, start, stop = spans[0]
    held = worlds.hidden[:, start:stop]
    follows = [c for c in range(C.NUM_KINDS) if C.suit_of(c) == 0 or C.rank_of(c) == C.SEVEN]
    could_follow = np.isin(held, follows).any(axis=1)
    assert weights[could_follow].sum() < 0.7 * could_follow.mean()  # well under their uniform share
    assert weights[0] == pytest.approx(weights.max()) and weights[0] > 1.0 / worlds.count  # the true world


def test_a_forced_draw_rules_out_the_worlds_where_the_drawer_could_have_laid() -> None:
    # A8: with nothing to lay a player draws; a drawer that held a playable card could not have drawn.
    env, raw, game = forced_draw()  # 5H played; seat 1 had nothing to lay (A5), drew 3C and the turn ended
    obs, record = env.observe("player_0"), raw.public_record("player_0")
    blind = game.determinization(obs, 0, None)  # without the record: hearts and 5s may be dealt to seat 1
    rng = np.random.default_rng(1)
    worlds = blind.deal(rng, 300)
    replayed = B.play_back(game, blind, worlds, record, [B.Model("random", make_agent("random", game))], rng)
    spans, _ = blind.spans
    _, start, stop = spans[0]
    playable = [c for c in range(C.NUM_KINDS) if C.suit_of(c) == 1 or C.rank_of(c) in (C.FIVE, C.JACK)
                or c == C.JOKER]
    # Seat 1 holds 4 cards now: the 3 it held at the draw had no playable kind (A8), and the card drawn
    # was not playable either (the turn ended at once, A8): a world where one of the 4 is playable on
    # 5H (a heart, a 5, a Jack or a Joker, A5) cannot have led to the record.
    could_have_laid = np.isin(worlds.hidden[:, start:stop], playable).any(axis=1)
    assert could_have_laid.any() and (~could_have_laid).any()
    assert not replayed.ok[could_have_laid].any()
    assert replayed.ok[~could_have_laid].all()
    weighed = B.weigh(worlds, replayed, [0, 0], 0.0, rng)
    assert weighed.weights[could_have_laid].sum() == 0
    informed = game.determinization(obs, 0, record)  # with the record its worlds all fit (constraints)
    assert B.play_back(game, informed, informed.deal(rng, 50), record, [], rng).ok.all()


@pytest.mark.parametrize(("game_id", "players"), [("huit", 3), ("switch", 4)])
def test_the_replay_passes_through_each_world(game_id: str, players: int) -> None:
    """Played forward from the deal it leads back to, each world ends where it was dealt (seats numbered
    from the observing seat, here not seat 0 of the table)."""
    env = make_env(game_id, num_players=players)
    raw, game = env.unwrapped, env.unwrapped.game
    agents = [make_agent("expert", game, seed=s) for s in range(players)]
    env.reset(seed=4)
    viewer, checked = players - 1, 0
    rng = np.random.default_rng(2)
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc or checked >= 3:
            break
        seat = raw.agent_seat[name]
        record = raw.public_record(name)
        drawn = any(e.kind == DRAW for e in record.events)
        if seat == viewer and drawn and B.world_replay.unreplayable(record) is None:
            known = game.determinization(obs, 0, record)
            worlds = known.deal(rng, 20)
            engine = game.spec.batched_engine()(game.rules, 20, seed=0)
            replayed = B.play_back(game, known, worlds, record, [], rng, engine)
            assert replayed.ok.all()
            spans, _ = known.spans
            for w in range(worlds.count):
                state = engine.to_state(w)
                for s, start, stop in spans:
                    held = sorted(C.counts_to_cards(state.hands[s].tolist()))
                    assert held == sorted(worlds.hidden[w, start:stop])
            checked += 1
        env.step(agents[seat].act(obs))
    assert checked


def test_ess_and_the_fallback_to_uniform() -> None:
    worlds = Worlds(np.arange(40).reshape(4, 10), np.zeros((4, 0), dtype=np.int64), {})
    flat = B.Replayed(np.zeros((1, 2, 4)), np.ones(4, dtype=bool))
    assert B.ess(np.full(4, 0.25)) == pytest.approx(4.0)
    weighed = B.weigh(worlds, flat, [0, 0], 0.5, np.random.default_rng(0))
    assert not weighed.uniform and weighed.ess == pytest.approx(4.0)
    assert sorted(weighed.worlds.hidden[:, 0]) == [0, 10, 20, 30]  # equal weights: each world once
    peaked = B.Replayed(np.array([[[0.0] * 4, [0.0, -30.0, -30.0, -30.0]]]), np.ones(4, dtype=bool))
    collapsed = B.weigh(worlds, peaked, [0, 0], 0.5, np.random.default_rng(0))
    assert collapsed.uniform and collapsed.ess < 1.01 and collapsed.reason == "the weights collapsed"
    assert (collapsed.worlds.hidden == worlds.hidden).all()  # the uniform worlds, as dealt
    kept = B.weigh(worlds, peaked, [0, 0], 0.0, np.random.default_rng(0))
    assert not kept.uniform and (kept.worlds.hidden[:, 0] == 0).all()  # all weight on world 0: resampled
    none = B.Replayed(np.zeros((1, 2, 4)), np.zeros(4, dtype=bool))
    assert B.weigh(worlds, none, [0, 0], 0.1, np.random.default_rng(0)).reason == "no world fits the record"


@pytest.mark.parametrize("player", ["random", "expert"])
def test_recognition_names_how_a_seat_plays(player: str) -> None:
    env = make_env("huit", num_players=2)
    game = env.unwrapped.game
    options = SearchOptions(worlds=32, ms=0, opponents="recognise")
    searcher = SearchAgent(game, make_agent("greedy", game, seed=0), options, seed=0)
    assert searcher.sees == {"record"}
    other = make_agent(player, game, seed=5)
    for hand in range(3):
        run_episode(env, [searcher, other], seed=hand)
    assert searcher.reading is not None
    totals = searcher.reading.recognizer.totals()
    best = searcher.reading.recognizer.names[int(np.argmax(totals[:, 1]))]
    assert best == player
    assert set(searcher.seat_models) == {1}


def test_a_believing_search_needs_the_record_and_plays_with_it() -> None:
    env = make_env("huit", num_players=2)
    game = env.unwrapped.game
    agent = make_agent("search:worlds=16:ms=0:belief=expert:expert", game, seed=0)
    assert agent.sees == {"record"}
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    while np.count_nonzero(obs["action_mask"]) < 2:
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        obs = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match="must be shown the hand's public record"):
        agent.act(obs)
    info = run_episode(env, [agent, make_agent("expert", game, seed=1)], seed=1)
    assert "winner" in info
    with pytest.raises(ValueError, match="belief=nobody"):
        make_agent("search:belief=nobody:expert", game)
    with pytest.raises(ValueError, match="not one of the choices; accepted: one of opponents=base, "):
        make_agent("search:opponents=all:expert", game)


def test_each_seat_of_a_larger_table_gets_its_own_model() -> None:
    """One hand of evidence each (a hand episode is a new match): the random seat is named `random` in
    at least half of six hands (a library of five models: a fifth by chance), the expert's seat never,
    and the rollouts seat the model named."""
    env = make_env("huit", num_players=3)
    game = env.unwrapped.game
    named_random = 0
    for hand in range(6):
        searcher = SearchAgent(game, make_agent("greedy", game, seed=0),
                               SearchOptions(worlds=16, ms=0, opponents="recognise"), seed=0)
        players = [searcher, make_agent("random", game, seed=1), make_agent("expert", game, seed=2)]
        run_episode(env, players, seed=hand)
        assert searcher.reading is not None
        named = searcher.reading.recognizer.best()
        assert named[2] != "random"
        if named[1] == "random":
            named_random += 1
            assert searcher.seat_models[1] is searcher.reading.models["random"].agent
    assert named_random >= 3
