"""Hand readers (`cardlab.agents.hand_reading.reader`): what they read, their files' refusals, the search
that deals by them.

Reader files are shared like bot files, so each refusal is one line naming the
file and what is accepted; the search's ``belief=learned`` deals its worlds by
the table's shipped reader and replays with ``ms=0`` (C2).
"""

from __future__ import annotations

import json
import pathlib
import shutil

import numpy as np
import pytest
import torch

from cardlab.agents.agent_spec import make_agent, make_search_agent
from cardlab.agents.hand_reading.reader import (
    READING_VERSION,
    HandReader,
    load_reader,
    new_network,
    reader_layout,
    save_reader,
    shipped_reader,
    shipped_reader_path,
)
from cardlab.envs import make_env, make_game
from cardlab.envs.aec import live_turns
from cardlab.envs.reading_inputs import SEAT_KINDS, reading_inputs
from cardlab.envs.record import DRAW, PASS, Event, Record
from cardlab.evaluation.episodes import seat_zero_choices

HUIT4 = make_game("huit", {"num_players": 4})


def first_choice(game: str, players: int):  # type: ignore[no-untyped-def]
    env = make_env(game, num_players=players)
    agents = [make_agent("expert", env.unwrapped.game, seed=s) for s in range(players)]
    return next(seat_zero_choices(env, agents, seed=1))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """An untrained Huit 4p reader's files."""
    layout = reader_layout(HUIT4)
    network = new_network(layout.size, len(layout.deck_kinds), 4, [16], "relu")
    return save_reader(network, tmp_path_factory.mktemp("reader") / "r", HUIT4, "relu", {"note": "test"})


def test_an_untrained_reader_leans_by_the_places_sizes(written: pathlib.Path) -> None:
    reader = load_reader(written, HUIT4)
    with torch.no_grad():
        for parameter in reader.network.parameters():  # zero logits: what is left is the prior, the room
            parameter.zero_()
    choice = first_choice("huit", 4)
    known = choice.determinization()
    leaning = reader.leaning(known, choice.obs["observation"], choice.record)
    others = known.sizes[1:]
    room = np.array([*others, known.unseen.size - sum(others)])
    assert np.allclose(leaning[int(known.unseen[0])], room / room.sum())


def test_a_voluntary_draw_then_a_pass_reads_as_lacking_the_matching_kinds() -> None:  # B9
    choice = first_choice("huit", 4)
    known = choice.determinization()
    layout = reader_layout(HUIT4)
    record = choice.record
    slices, at = {}, 0
    for name, width in layout.fields:
        slices[name] = slice(at, at + width)
        at += width
    before = reading_inputs(layout, known, choice.obs["observation"], record)
    drawn = Record((*record.events, Event(DRAW, 1, number=1, suit=2)), record.complete)
    after_draw = reading_inputs(layout, known, choice.obs["observation"], drawn)
    passed = Record((*drawn.events, Event(PASS, 1)), record.complete)
    after_pass = reading_inputs(layout, known, choice.obs["observation"], passed)
    diamonds = [i for i, k in enumerate(layout.deck_kinds) if k % 4 == 2]
    assert "lacked_since" in SEAT_KINDS
    since = slices["seat1.lacked_since"]
    assert np.allclose(after_draw[since][diamonds], 0.1)  # one card drawn since it showed it lacked them
    assert np.allclose(after_pass[since][diamonds], 0.0)  # passed after the draw: none of them now
    assert np.allclose(after_pass[slices["seat1.lacked"]][diamonds], 1.0)
    assert not np.array_equal(before[slices["seat1.lacked"]], after_pass[slices["seat1.lacked"]])
    assert np.array_equal(before[slices["seat2.lacked"]], after_pass[slices["seat2.lacked"]])


def edited(written: pathlib.Path, tmp_path: pathlib.Path, **changes: object) -> pathlib.Path:
    target = tmp_path / "edited.json"
    shutil.copy(written.with_suffix(".safetensors"), target.with_suffix(".safetensors"))
    meta = json.loads(written.read_text())
    meta.update(changes)
    target.write_text(json.dumps(meta))
    return target


@pytest.mark.parametrize(("changes", "message"), [
    ({"game": "switch"}, "it plays switch, not huit"),
    ({"game": "|\n<!-- END -->"}, "the metadata field game is .*; it must be a game id: switch, huit"),
    ({"num_players": 3}, "trained for 3 players"),
    ({"reading": {"version": READING_VERSION + 1, "size": 658}}, "reading inputs are version"),
    ({"format": "cardlab-bot"}, "not a cardlab-reader file"),
    ({"kinds": [1, 2]}, "this table reads"),
    ({"weights": {"sha256": "0" * 64}}, "does not match its sha256"),
])
def test_a_foreign_or_corrupted_reader_is_refused_in_one_line(
        written: pathlib.Path, tmp_path: pathlib.Path, changes: dict[str, object], message: str) -> None:
    path = edited(written, tmp_path, **changes)
    with pytest.raises(ValueError, match=message) as err:
        load_reader(path, HUIT4)
    assert str(err.value).startswith(f"reader {path}") and "\n" not in str(err.value)


def test_a_truncated_reader_is_refused(written: pathlib.Path, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(written.read_bytes()[:200])
    with pytest.raises(ValueError, match=r"^reader .*cut\.json"):
        load_reader(path, HUIT4)
    shutil.copy(written, path)
    path.with_suffix(".safetensors").write_bytes(written.with_suffix(".safetensors").read_bytes()[:100])
    with pytest.raises(ValueError, match=r"^reader .*does not match its sha256"):
        load_reader(path, HUIT4)


def test_a_reader_at_another_table_size_is_refused(written: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="trained for 4 players, the game has 3"):
        load_reader(written, make_game("huit", {"num_players": 3}))


@pytest.mark.parametrize(("game", "players"), [("huit", 2), ("huit", 4), ("huit", 6), ("switch", 4),
                                               ("switch", 6)])
def test_every_table_with_a_bot_ships_a_reader(game: str, players: int) -> None:
    table = make_game(game, {"num_players": players})
    assert isinstance(shipped_reader(table), HandReader)


def test_a_table_without_a_reader_says_which_have_one() -> None:
    table = make_game("switch", {"num_players": 3})
    assert not shipped_reader_path(table).exists()
    with pytest.raises(ValueError, match=r"no hand reader ships for switch with 3 players.*huit-4p"):
        shipped_reader(table)
    with pytest.raises(ValueError, match="no hand reader ships"):
        make_agent("search:belief=learned:expert", table)


def play(spec: str, game: str, players: int, seed: int, **rules: bool) -> list[int]:
    """The searcher's moves (seat 0) in one hand against experts; the record shown as the play loops do."""
    env = make_env(game, num_players=players, **rules)
    table = env.unwrapped.game
    agents = [make_agent(spec, table, seed=seed)]
    agents += [make_agent("expert", table, seed=s) for s in range(1, players)]
    moves = []
    env.reset(seed=seed)
    for name, seat, obs in live_turns(env):
        if agents[seat].sees:
            agents[seat].show({"record": env.unwrapped.public_record(name)})
        move = agents[seat].act(obs)
        if seat == 0:
            moves.append(move)
        env.step(move)
    return moves


@pytest.mark.parametrize(("game", "players"), [("huit", 4), ("switch", 4)])
def test_the_learned_belief_plays_and_replays(game: str, players: int) -> None:  # C2
    spec = "search:belief=learned:worlds=16:ms=0:expert"
    assert make_agent(spec, make_game(game, {"num_players": players})).sees == frozenset({"record"})
    first = play(spec, game, players, seed=3)
    assert first and first == play(spec, game, players, seed=3)


def test_the_learned_belief_refuses_to_decide_without_the_record() -> None:
    choice = first_choice("huit", 4)
    agent = make_agent("search:belief=learned:worlds=8:ms=0:expert", HUIT4, seed=0)
    with pytest.raises(ValueError, match="must be shown the hand's public record"):
        agent.act(choice.obs)


def test_a_reader_of_one_s_own_deals_the_worlds(written: pathlib.Path) -> None:
    agent = make_search_agent(f"search:belief=learned:reader={written}:worlds=8:ms=0:expert", HUIT4)
    assert agent.reader is not None and agent.reader.meta["summary"] == {"note": "test"}
    refused = (r"search option reader='.*' is read only with belief=learned or belief=posterior, not "
               r"belief=uniform; accepted: reader beside one of them, or none$")
    with pytest.raises(ValueError, match=refused):
        make_agent(f"search:reader={written}:expert", HUIT4)
    with pytest.raises(ValueError, match=r"^reader .*trained for 4 players, the game has 2"):
        make_agent(f"search:belief=learned:reader={written}:expert", make_game("huit", {"num_players": 2}))


@pytest.mark.parametrize("game", ["huit", "switch"])
def test_at_a_memory_table_the_shipped_reader_reads_as_at_the_table_without_it(game: str) -> None:
    """`memory` is no rule of play: the hands are the same, and its field is the observation's last. The
    shipped reader (trained without it) reads a memory table's positions as the same positions without the
    field, and the learned search plays there; before, it was refused as trained under other rules."""
    bare, memory = (make_game(game, {"num_players": 4, "memory": m}) for m in (False, True))
    reader, plain = shipped_reader(memory), shipped_reader(bare)
    assert reader.table.rules == bare.rules and reader.game is memory
    envs = [make_env(game, num_players=4, memory=m) for m in (False, True)]
    for env in envs:
        env.reset(seed=2)
    compared = 0
    for (name, seat, obs), _ in zip(live_turns(envs[0]), range(40), strict=False):
        other = envs[1].unwrapped.observe(name)
        assert other["observation"].size > obs["observation"].size
        np.testing.assert_array_equal(other["observation"][:obs["observation"].size], obs["observation"])
        record = envs[0].unwrapped.public_record(name)
        np.testing.assert_array_equal(
            reader.leaning(memory.determinization(other, seat, record), other["observation"], record),
            plain.leaning(bare.determinization(obs, seat, record), obs["observation"], record))
        compared += 1
        move = int(envs[0].unwrapped.legal_actions()[0])
        for env in envs:
            env.step(move)
    assert compared >= 10
    assert play("search:belief=learned:worlds=8:ms=0:expert", game, 4, seed=1, memory=True)
    with pytest.raises(ValueError, match=r"^reader .*other rule options: hand_size=5 \(game: 6\)"):
        shipped_reader(make_game("huit", {"num_players": 4, "memory": True, "hand_size": 6}))


# ---------------------------------------------------------------- finite readings
def overflowing_reader(folder: pathlib.Path) -> pathlib.Path:
    """A reader with finite weights whose logits are ±inf where two reading inputs differ, finite on the
    flat probes (all zeros, all ones): two hidden units ``tanh(1e4 * (x_i - x_j))``, output weights 3e38."""
    from cardlab.agents.hand_reading.reader import played_readings

    readings = played_readings(HUIT4)
    layout = reader_layout(HUIT4)
    varying = np.flatnonzero(readings.std(axis=0) > 0)
    i, j = int(varying[0]), int(varying[1])
    network = new_network(layout.size, len(layout.deck_kinds), 4, [2], "tanh")
    hidden, out = (m for m in network if isinstance(m, torch.nn.Linear))
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.zero_()
        hidden.weight[:, i], hidden.weight[:, j] = 1e4, -1e4
        out.weight.fill_(3e38)
    return save_reader(network, folder / "over", HUIT4, "tanh", {})


def test_a_reader_whose_logits_overflow_on_real_positions_is_refused_at_load(tmp_path: pathlib.Path) -> None:
    path = overflowing_reader(tmp_path)
    with pytest.raises(ValueError) as err:
        load_reader(path, HUIT4)
    message = str(err.value)
    assert message.startswith(f"reader {path}: ") and "\n" not in message
    assert "NaN or infinite on a position of random play" in message


def test_a_non_finite_reading_in_play_is_refused_naming_the_file(tmp_path: pathlib.Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the load's check (were its positions to miss it), the search stops in one line naming the file
    rather than deal worlds from NaN."""
    from cardlab.agents.hand_reading import reader as reader_module

    path = overflowing_reader(tmp_path)
    monkeypatch.setattr(reader_module, "played_readings", lambda game: np.zeros((1, reader_layout(game).size),
                                                                                dtype=np.float32))
    agent = make_agent(f"search:belief=learned:reader={path}:worlds=4:ms=0:expert", HUIT4, seed=0)
    choices = seat_zero_choices(make_env("huit", num_players=4),
                                [make_agent("random", HUIT4, seed=s) for s in range(4)], seed=3)
    with pytest.raises(ValueError) as err:
        for choice in choices:
            agent.show({"record": choice.record})
            agent.act(choice.obs)
    message = str(err.value)
    assert message.startswith(f"reader {path}: its network's logits are NaN or infinite on this position")
    assert "\n" not in message


def test_format_version_true_is_refused_as_for_bots(written: pathlib.Path, tmp_path: pathlib.Path) -> None:
    path = edited(written, tmp_path, format_version=True)
    with pytest.raises(ValueError, match=r"^reader .*edited\.json: format version True; this cardlab reads "
                                         r"version 1 \(train the reader again with this cardlab\)$"):
        load_reader(path, HUIT4)


@pytest.mark.parametrize(("changes", "message"), [
    ({"format_version": 2}, "format version 2; this cardlab reads version 1 (train the reader again"),
    ({"game": "switch"}, "it plays switch, not huit; play it at a switch table"),
    ({"network": {"layer_sizes": [1], "activation": "relu"}}, "network.layer_sizes has 1 entries"),
    ({"weights": {"sha256": "0" * 64}}, "the weights file edited.safetensors does not match its sha256 "
                                        "(corrupted?); a reader's .safetensors must be the one written with"),
])
def test_the_bot_checks_a_reader_goes_through_name_the_reader_file_themselves(
        written: pathlib.Path, tmp_path: pathlib.Path, changes: dict[str, object], message: str) -> None:
    """The checks a reader shares with bots (`cardlab.agents.bot.validate`: format version, game, network,
    weights) are told the file's kind, so the error they raise names the reader: no bot's refusal is caught
    and worded again (which would leave it as the raised error's context)."""
    from cardlab.agents.bot.validate import check_version

    path = edited(written, tmp_path, **changes)
    with pytest.raises(ValueError) as err:
        load_reader(path, HUIT4)
    assert str(err.value).startswith(f"reader {path}: {message}"), str(err.value)
    assert err.value.__context__ is None
    with pytest.raises(ValueError) as err:
        check_version(path, 2, 1, "train the reader again", kind="reader")
    assert str(err.value) == (f"reader {path}: format version 2; this cardlab reads version 1 (train the "
                              "reader again with this cardlab)")


def test_a_reader_file_that_cannot_be_read_is_named(tmp_path: pathlib.Path) -> None:
    (tmp_path / "r.json").symlink_to("/proc/self/mem")
    with pytest.raises(ValueError, match=r"^reader .*r\.json: cannot read .*r\.json: input/output error; "
                                         r"a reader's files are the regular files export writes$"):
        load_reader(tmp_path / "r.json", HUIT4)


def test_a_reader_of_nan_weights_is_refused_in_a_reader_s_words(tmp_path: pathlib.Path) -> None:
    """The weights checks a reader shares with bots say what a reader's weights must be, not a bot's."""
    layout = reader_layout(HUIT4)
    network = new_network(layout.size, len(layout.deck_kinds), 4, [2], "tanh")
    with torch.no_grad():
        next(network.parameters()).fill_(float("nan"))
    path = save_reader(network, tmp_path / "nan", HUIT4, "tanh", {})
    with pytest.raises(ValueError) as err:
        load_reader(path, HUIT4)
    message = str(err.value)
    assert message.startswith(f"reader {path}: tensor ") and "holds NaN or infinite values" in message
    assert "reader weights must be finite float32 numbers" in message and "bot" not in message
