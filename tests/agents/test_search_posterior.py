"""The search on the exact posterior's worlds (``search:belief=posterior``) and its benchmark's true-deal
valuation (benchmarks/posterior_search.py), at Huit 4p with the expert in every seat."""

from __future__ import annotations

import argparse
import json
import pathlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent, make_search_agent
from cardlab.agents.hand_reading import posterior as P
from cardlab.agents.search import SearchAgent
from cardlab.envs import make_env, make_game
from cardlab.envs.world_sampling import revealed
from cardlab.evaluation.episodes import Choice, seat_zero_choices
from tests.benchmarks import load_benchmark

SPEC = "search:belief=posterior:worlds=32:ms=0:expert"


def choices(hands: int = 2) -> Iterator[Choice]:
    """Seat 0's replayable decisions in `hands` hands of Huit 4p, the expert in every seat."""
    env = make_env("huit", num_players=4)
    game = env.unwrapped.game
    field = [make_agent("expert", game, seed=s) for s in range(4)]
    for hand in range(hands):
        for choice in seat_zero_choices(env, field, seed=10_000 + hand):
            if choice.unreplayable is None:
                yield choice


def decided(agent: SearchAgent, choice: Choice, seed: int) -> tuple[int, np.ndarray]:
    """The search's move and candidates' values at `choice` from `seed`, shown the record and the state."""
    agent.seed(seed)
    agent.show({"record": choice.record, "state": choice.raw.game_state})
    move = agent.act(choice.obs)
    assert agent.last_decision is not None
    return move, agent.last_decision.values


def test_the_search_plays_on_the_samplers_worlds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worlds the sampler returns are the worlds the rollouts play, each decision (here the true hands,
    the pile's order drawn from the generator the sampler is handed)."""
    game = make_game("huit", num_players=4)
    searcher = make_agent(SPEC, game, seed=3)
    assert isinstance(searcher, SearchAgent) and searcher.posterior is not None
    shown: dict[str, Any] = {}
    drawn: list[Any] = []
    played: list[Any] = []

    def true_worlds(known: Any, wanted: int, record: Any, rng: np.random.Generator) -> Any:
        assert record is shown["record"]
        drawn.append(revealed(known, shown["state"], 0).deal(rng, wanted))
        return drawn[-1]

    play = searcher.rollouts.play

    def noted(known: Any, worlds: Any, *args: Any) -> Any:
        played.append(worlds)
        return play(known, worlds, *args)

    monkeypatch.setattr(searcher.posterior, "draw", true_worlds)
    monkeypatch.setattr(searcher.rollouts, "play", noted)
    for i, choice in enumerate(choices()):
        shown.update(record=choice.record, state=choice.raw.game_state)
        decided(searcher, choice, seed=i)
    assert len(played) >= 4 and len(played) == len(drawn)
    assert all(worlds is sampled for worlds, sampled in zip(played, drawn, strict=True))


def test_the_posterior_worlds_are_drawn_and_seeded() -> None:
    """Without the stub, the worlds come from the sampler (rejection or chains: the expert makes every
    recorded move in them), and one seed replays the decision (C2)."""
    game = make_game("huit", num_players=4)
    first, second = (make_agent(SPEC, game, seed=5) for _ in range(2))
    assert isinstance(first, SearchAgent) and isinstance(second, SearchAgent)
    choice = next(iter(choices(1)))
    move, values = decided(first, choice, seed=11)
    assert first.posterior is not None and first.posterior.last is not None
    assert first.posterior.last.method in ("rejection", "mcmc")
    assert first.posterior.last.worlds.count == 32
    again, same = decided(second, choice, seed=11)
    assert again == move
    np.testing.assert_array_equal(same, values)


def test_where_no_world_is_kept_the_fallback_is_the_reader_search_s_own_worlds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a budget of one uniform world the posterior keeps none at most decisions; there the search plays
    on the worlds the reader's search (``belief=learned``, same seed) deals, value for value: the posterior
    draws from a generator spawned apart, so its draws leave the decision's generator as it was. C2: one
    seed, the same decision."""
    game = make_game("huit", num_players=4)
    searcher = make_search_agent("search:belief=posterior:worlds=16:ms=0:expert", game, seed=3)
    again = make_search_agent("search:belief=posterior:worlds=16:ms=0:expert", game, seed=3)
    reader = make_search_agent("search:belief=learned:worlds=16:ms=0:expert", game, seed=3)
    assert all(isinstance(agent, SearchAgent) for agent in (searcher, again, reader))
    assert isinstance(searcher, SearchAgent) and isinstance(again, SearchAgent)
    assert searcher.posterior is not None and again.posterior is not None
    tiny = P.Sampling(count=1, block=1, budget=1)
    monkeypatch.setattr(searcher.posterior, "sampling", tiny)
    monkeypatch.setattr(again.posterior, "sampling", tiny)
    methods = []
    for i, choice in enumerate(choices()):
        move, values = decided(searcher, choice, seed=i)
        assert searcher.posterior.last is not None
        methods.append(searcher.posterior.last.method)
        same_move, same_values = decided(again, choice, seed=i)
        assert same_move == move
        np.testing.assert_array_equal(same_values, values)
        if methods[-1] == "none":
            reader_move, reader_values = decided(reader, choice, seed=i)
            assert reader_move == move
            np.testing.assert_array_equal(reader_values, values)
    assert methods.count("none") >= 3, methods


@pytest.mark.parametrize(("spec", "table", "words"), [
    ("search:belief=posterior:worlds=8:expert", ("huit", 4), "takes no ms=60: give ms=0"),
    ("search:belief=posterior:worlds=8:ms=0:expert", ("switch", 4), "switch has draws the record restricts"),
    ("search:belief=uniform:reader=x.json:worlds=8:ms=0:expert", ("huit", 4),
     "read only with belief=learned or belief=posterior"),
])
def test_refusals(spec: str, table: tuple[str, int], words: str) -> None:
    game = make_game(table[0], num_players=table[1])
    with pytest.raises(ValueError, match=words) as err:
        make_agent(spec, game, seed=0)
    assert "\n" not in str(err.value)


def test_true_values_are_paired_and_fixed_by_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The valuation in the true deal: one seed, the same figures; every move played from the same worlds
    (a move given twice is valued alike); another seed, other play-outs."""
    bench = load_benchmark("posterior_search", monkeypatch)
    choice = next(iter(choices(1)))
    game = choice.raw.game
    legal = [int(a) for a in np.flatnonzero(choice.obs["action_mask"])]
    expert = make_agent("expert", game, seed=0)
    known, state = choice.determinization(), choice.raw.game_state

    def values(moves: list[int], seed: int) -> np.ndarray:
        return bench.true_values(game, known, state, moves, 256, seed, expert)

    once = values(legal, 1)
    assert once.shape == (len(legal),) and ((once >= 0) & (once <= 1)).all()
    np.testing.assert_array_equal(values(legal, 1), once)
    twice = values([legal[0], legal[0]], 1)
    assert twice[0] == twice[1] == once[0]
    assert not np.array_equal(values(legal, 2), once)


def test_the_rounds_write_and_resume(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    """Each round writes its decisions; a second run goes on from the next hand, keeping the first rows."""
    bench = load_benchmark("posterior_search", monkeypatch)
    out = tmp_path / "run.json"
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps({"rows": []}))
    args = argparse.Namespace(players=4, hands=1, round=1, worlds=8, playouts=64, seed=0, probe=probe,
                              json=out)
    bench.run(args)
    first = json.loads(out.read_text())
    assert first["next_hand"] == 1 and {row["hand"] for row in first["rows"]} == {0}
    played: list[int] = []
    real = bench.decisions

    def decisions(a: argparse.Namespace, hand: int, tools: Any) -> Any:
        played.append(hand)
        return real(a, hand, tools)

    monkeypatch.setattr(bench, "decisions", decisions)
    summary = bench.run(argparse.Namespace(**{**vars(args), "hands": 2}))
    again = json.loads(out.read_text())
    assert played == [1] and again["next_hand"] == 2
    assert again["rows"][:len(first["rows"])] == first["rows"]
    assert summary["decisions"] == len(again["rows"]) > len(first["rows"])


def test_bad_arguments_and_files_are_refused_in_one_line_before_playing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/posterior_search.py: each bad argument, a --probe that is not the probe's and a --json that
    is damaged, of other arguments or of the layout before the posterior drew apart: one line, nothing played
    and the files as they were."""
    bench = load_benchmark("posterior_search", monkeypatch)
    played: list[int] = []

    def decisions(args: argparse.Namespace, hand: int, tools: Any) -> list[Any]:
        played.append(hand)
        return []

    monkeypatch.setattr(bench, "decisions", decisions)
    probe, saved = tmp_path / "probe.json", tmp_path / "run.json"
    probe.write_text(json.dumps({"rows": []}))
    theirs = {"args": {"players": "4", "worlds": "16", "playouts": "64", "seed": "0"}, "next_hand": 1,
              "rows": []}

    def written(name: str, content: object) -> str:
        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        return str(path)

    cases = [
        (["--players", "1"], "--players 1 --worlds 16: "),
        (["--players", "7"], "--players 7 --worlds 16: "),
        (["--hands", "0"], "--hands=0 is out of range; accepted: a whole number >= 1"),
        (["--round", "-2"], "--round=-2 is out of range; accepted: a whole number >= 1"),
        (["--worlds", "0"], "--worlds=0 is out of range; accepted: a whole number >= 1 and <= 16,384"),
        (["--worlds", "99999"], "--worlds=99999 is out of range"),
        (["--playouts", "0"], "--playouts=0 is out of range; accepted: a whole number >= 1 and <= 1,048,576"),
        (["--seed", "-1"], "--seed=-1 is out of range; accepted: a whole number >= 0"),
        (["--probe", str(tmp_path / "nowhere.json")],
         f"--probe {tmp_path / 'nowhere.json'}: not a JSON benchmarks/posterior_probe.py wrote (FileNot"),
        (["--probe", cut := written("cut.json", '{"rows": [')], f"--probe {cut}: not a JSON "),
        (["--probe", odd := written("odd.json", {"rows": [1]})],
         f"--probe {odd}: its rows are not the probe's"),
        (["--json", str(tmp_path / "no" / "run.json")], "cannot write --json"),
        (["--json", str(tmp_path)], f"--json {tmp_path} is a folder"),
        (["--json", bad := written("bad.json", "[")],
         f"--json {bad}: not a JSON (JSONDecodeError"),
        (["--json", other := written("other.json", {"rows": 1})],
         f"--json {other}: not a JSON this benchmark wrote (no args, next_hand and rows)"),
        (["--json", old := written("old.json", theirs)],
         f"--json {old} is of layout 1, this benchmark's is 2"),
        (["--json", apart := written("apart.json", {**theirs, "layout": 2}), "--worlds", "32"],
         f"--json {apart} was written with --worlds '16', this run's is '32': resume with the same"),
    ]
    for argv, said in cases:
        files = {path: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()}
        full = ["--worlds", "16", "--playouts", "64", "--hands", "2", "--probe", str(probe), "--json",
                str(saved)]
        with pytest.raises(SystemExit):
            bench.main([*full, *argv])
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert err.split(": error: ", 1)[1].startswith(said), (argv, err)
        assert {path: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()} == files
    assert not played and not saved.exists()
