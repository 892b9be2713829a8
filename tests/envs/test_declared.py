"""One `option()` (`cardlab.envs.declared`) declares a rule option: a made-up one shows in the docs table
and is checked, with no other edit; any dataclass checks its declared fields with `check_fields`.

Why: the rule options' table (`GameSpec.rules_table`, what `cardlab rules --markdown` and the docs print)
and their checks (`RuleOptions.__post_init__`) read the declaration; a bound declared once is refused in
one line that names the option and the range. B7's draw penalty is the made-up option's example.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Any, ClassVar

import numpy as np
import pytest

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.bot import load_bot, read_metadata
from cardlab.agents.hand_reading.reader import load_reader
from cardlab.agents.match_equity import load_equity
from cardlab.agents.search_options import search_spec
from cardlab.envs import make_env, make_game
from cardlab.envs.declared import (
    Declared,
    check_choice,
    check_fields,
    check_that,
    check_whole,
    declarations,
    missing_file,
    option,
    refused_file,
    unknown,
)
from cardlab.envs.huit.rules import HuitRules
from cardlab.envs.huit.spec import SPEC as HUIT
from cardlab.envs.options import COUNT_HIGH
from cardlab.serve.app import named_bots
from cardlab.training.harness.config import config_from_dict, config_to_dict, load_config


@dataclasses.dataclass(frozen=True)
class MadeUpRules(HuitRules):
    """Huit's rules with one made-up option (B7's penalty), declared once."""

    GAME: ClassVar[str] = "huit"
    made_up_draw: int = option(2, "cards a fresh Ace makes the next player draw (B7)", 1, 5)
    made_up_streak: int = option(3, "a made-up count with a low bound only", 1)


def test_a_made_up_rule_option_is_in_the_docs_table_and_its_bounds_are_refused_in_one_line() -> None:
    table = dataclasses.replace(HUIT, rules=MadeUpRules).rules_table()
    assert "| `made_up_draw` | 2 | 1 to 5 | cards a fresh Ace makes the next player draw (B7) |" in table
    assert f"| `made_up_streak` | 3 | 1 to {COUNT_HIGH:,} |" in table
    assert MadeUpRules.from_options({"made_up_draw": 5}).made_up_draw == 5
    for bad, accepted in ((0, "1 to 5"), (6, "1 to 5")):
        with pytest.raises(ValueError, match=f"^rule option made_up_draw={bad} is out of range; "
                                             f"accepted: {accepted}$"):
            MadeUpRules.from_options({"made_up_draw": bad})
    with pytest.raises(ValueError, match=f"^rule option made_up_streak=1000001 is out of range; accepted: "
                                         f"1 to {COUNT_HIGH:,}$"):
        MadeUpRules.from_options({"made_up_streak": COUNT_HIGH + 1})


def test_a_declaration_is_named_by_its_field_and_bounds_hold_as_declared() -> None:
    made_up = declarations(MadeUpRules)["made_up_draw"]
    doc = "cards a fresh Ace makes the next player draw (B7)"
    assert made_up == Declared(2, doc, 1, 5, name="made_up_draw")
    rate = Declared(0.1, "a rate", 0, 1, whole=False, above=True)
    assert [rate.in_range(v) for v in (0, 1e-9, 1, 1.5, float("nan"))] == [False, True, True, False, False]
    assert rate.is_number(0.5) and rate.is_number(1) and not rate.is_number(True)
    assert not made_up.is_number(2.0)
    with pytest.raises(ValueError, match=r"^option bounds 3\.\.1 are empty$"):
        option(2, "empty", 3, 1)


@dataclasses.dataclass(frozen=True)
class MadeUpInner:
    """A made-up section held by `MadeUpSettings`."""

    sizes: list[int] = option([4, 8], "made-up layer sizes", 1, 64)


@dataclasses.dataclass(frozen=True)
class MadeUpSettings:
    """A made-up dataclass (not a rule, search or config) that checks itself with `check_fields`."""

    share: float = option(0.5, "a made-up probability", 0, 1, whole=False, words="a probability from 0 to 1")
    rate: float = option(0.1, "a made-up rate", 0, 1, whole=False, above=True)
    mode: str = option("fast", "a made-up word", choices=("fast", "slow"))
    count: int = option(3, "a made-up count with a low bound only", 0)
    path: str = option("", "a text checked elsewhere", words="a file's path")
    inner: MadeUpInner = dataclasses.field(default_factory=MadeUpInner)

    def __post_init__(self) -> None:
        check_fields(self, "made-up setting")


@pytest.mark.parametrize(("values", "refused"), [
    ({"share": 1.5}, "made-up setting share=1.5 is out of range; accepted: a probability from 0 to 1"),
    ({"rate": 0.0}, "made-up setting rate=0.0 is out of range; accepted: a value > 0 and <= 1"),
    ({"rate": "0.1"}, "made-up setting rate='0.1' is of the wrong type; accepted: a number"),
    ({"mode": "slo"}, "made-up setting mode='slo' is not one of the choices; accepted: 'fast', 'slow'"),
    ({"mode": 1}, "made-up setting mode=1 is not one of the choices; accepted: 'fast', 'slow'"),
    ({"count": -1}, "made-up setting count=-1 is out of range; accepted: a value >= 0"),
    ({"count": 2.0}, "made-up setting count=2.0 is of the wrong type; accepted: a whole number"),
    ({"count": False}, "made-up setting count=False is of the wrong type; accepted: a whole number"),
    ({"inner": MadeUpInner([4, 65])},
     "made-up setting inner.sizes[1]=65 is out of range; accepted: a value >= 1 and <= 64"),
])
def test_check_fields_refuses_any_dataclass_value_its_declaration_does_not_accept(values: dict[str, Any],
                                                                                  refused: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(refused)}$"):
        MadeUpSettings(**values)


def test_check_fields_accepts_what_is_declared_and_leaves_undeclared_checks_elsewhere() -> None:
    made = MadeUpSettings(share=0, rate=1, mode="slow", count=10**9, path="any text",
                          inner=MadeUpInner([1, 64]))
    assert made.count == 10**9 and made.rate == 1


@pytest.mark.parametrize(("value", "refused"), [
    (0, "count=0 is out of range; accepted: 1 to 9"),
    (10, "count=10 is out of range; accepted: 1 to 9"),
    (np.int64(-3), "count=np.int64(-3) is out of range; accepted: 1 to 9"),
    (True, "count=True is of the wrong type; accepted: 1 to 9"),
    (2.0, "count=2.0 is of the wrong type; accepted: 1 to 9"),
    ("3", "count='3' is of the wrong type; accepted: 1 to 9"),
    (None, "count=None is of the wrong type; accepted: 1 to 9"),
])
def test_check_whole_refuses_in_the_one_wording(value: Any, refused: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(refused)}$"):
        check_whole("count", value, 1, 9, "1 to 9")


def test_check_whole_and_check_choice_return_what_they_accept() -> None:
    assert check_whole("count", np.int32(9), 1, 9, "1 to 9") == 9
    assert type(check_whole("n", 2**70, 0, None, "")) is int
    assert check_choice("mode", None, (None, "fast")) is None
    for bad in (["fast"], {"fast": 1}, np.array(["fast"])):  # unhashable: never one of the choices
        refused = r"^env option mode=.* is not one of the choices; accepted: None, 'fast'$"
        with pytest.raises(ValueError, match=refused):
            check_choice("mode", bad, (None, "fast"), "env option")


def test_check_that_refuses_in_the_one_wording_only_where_its_condition_fails() -> None:
    check_that(True, "reward", "points", "not accepted with episode: match", "'win'")
    refused = "reward='points' is not accepted with episode: match; accepted: 'win' or 'match'"
    with pytest.raises(ValueError, match=f"^{re.escape(refused)}$"):
        check_that(False, "reward", "points", "not accepted with episode: match", "'win' or 'match'")
    with pytest.raises(ValueError, match=r"^env option x=1 is odd; accepted: even$"):
        check_that(False, "x", 1, "odd", "even", "env option")


CONFIGS = pathlib.Path(__file__).resolve().parents[2] / "configs"


def _refusal(call: Any) -> str:
    with pytest.raises(ValueError) as refused:
        call()
    return str(refused.value)


def test_every_unknown_name_is_refused_in_the_one_wording() -> None:
    """A config key, a rule option, a search option (typed or in a spec's text) or a deal's key that nothing
    declares: one sentence, `unknown`'s, whichever reader found it."""
    assert str(unknown("colour", ["z", "y" * 60], "red, blue", "for this test")) == (
        f"unknown colour(s) {'y' * 37}..., z for this test; accepted: red, blue")
    huit = make_game("huit", num_players=2)
    data = config_to_dict(load_config(CONFIGS / "huit_selfplay.yaml"))
    said = {
        "config key": _refusal(lambda: config_from_dict({**data, "seeed": 1})),
        "rule option": _refusal(lambda: make_game("huit", {"colour": 1})),
        "typed search option": _refusal(lambda: search_spec("expert", wrlds=3)),
        "search option": _refusal(lambda: make_agent("search:wrlds=3:expert", huit)),
        "deal key": _refusal(lambda: make_env("huit").reset(options={"deal": {"hands": [], "bank2": []}})),
    }
    shape = r"^(agent spec '.*': )?unknown (config key|rule option|search option|Huit deal key)\(s\) " \
            r"(seeed|colour|wrlds|wrlds=3|bank2)( for huit)?; accepted: \S.*$"
    for what, message in said.items():
        assert re.match(shape, message), (what, message)


def test_a_damaged_file_is_refused_in_the_one_wording_whichever_loader_reads_it(
        tmp_path: pathlib.Path) -> None:
    """A bot, a hand reader and a match equity cross a boundary: each loader's refusal of a damaged file is
    `refused_file`'s one line, ``WHAT PATH: REASON``."""
    said = refused_file("bot", tmp_path / "b.json", "file not found")
    assert str(said) == f"bot {tmp_path / 'b.json'}: file not found"
    huit = make_game("huit", num_players=4)
    path = tmp_path / "cut.json"
    path.write_text('{"format": ')
    loaders = {"bot": lambda: load_bot(path, huit), "reader": lambda: load_reader(path, huit),
               "match equity": lambda: load_equity(path, huit)}
    for what, load in loaders.items():
        message = _refusal(load)
        assert message.startswith(f"{what} {path}: ") and "not valid JSON" in message, message
        assert "\n" not in message


def test_a_folder_where_a_file_is_read_is_refused_as_a_folder_not_as_missing(tmp_path: pathlib.Path) -> None:
    """A folder given for a bot's metadata, a hand reader or a match equity is there: each loader says it is
    a folder and to give the .json file (`missing_file`, one place), where it said "file not found"."""
    huit = make_game("huit", num_players=4)
    folder = tmp_path / "models"
    folder.mkdir()
    (tmp_path / "run" / "bot.json").mkdir(parents=True)  # a run folder whose bot.json is a folder
    loaders = {"bot": lambda: read_metadata(folder), "reader": lambda: load_reader(folder, huit),
               "match equity": lambda: load_equity(folder, huit)}
    for what, load in loaders.items():
        message = _refusal(load)
        assert message.startswith(f"{what} {folder}: is a folder, not a file; give the path of the .json "
                                  "file ("), message
        assert "\n" not in message and "not found" not in message
    message = _refusal(lambda: named_bots([tmp_path / "run"]))
    assert message.startswith(f"bot {(tmp_path / 'run' / 'bot.json').resolve()}: is a folder"), message
    gone = tmp_path / "gone.json"
    said = missing_file("bot", gone, "a bot is NAME.json")
    assert str(said) == f"bot {gone}: file not found (a bot is NAME.json)"
