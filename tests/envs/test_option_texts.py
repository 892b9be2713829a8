"""Game-facing texts that state an option's value follow the option.

Why: a text can write an option's default as a constant ("draw 2 (B7)") and stay wrong when the option
is set otherwise, which no play test sees. For each whole-number option whose doc cites rules, every line
of a game's texts (its docs page: action table, observation fields; its status lines over a played hand)
that cites one of those rules and states the default must read differently under another value.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

import numpy as np
import pytest

from cardlab.envs import games, make_game
from cardlab.envs.declared import option
from cardlab.envs.game_spec import GameSpec
from cardlab.envs.huit.rules import HuitRules
from cardlab.envs.huit.spec import SPEC as HUIT
from cardlab.envs.options import OptionDoc

RULE_ID = re.compile(r"\b[ABC]\d+\b")
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def texts(game: str | GameSpec, options: dict[str, Any], steps: int = 400) -> set[str]:
    """The lines of the game's docs page and the status lines of a seeded random hand under `options`."""
    played = make_game(game, options)
    lines = set(played.markdown().splitlines())
    state, rng = played.new_state(np.random.default_rng(0)), np.random.default_rng(1)
    for _ in range(steps):
        if state.hand_over:
            break
        lines.update(f"{key}: {line}" for key, line in played.spec.status(state).items())
        state.apply(int(rng.choice(state.legal_actions())))
    return lines


def states_value(line: str, option: OptionDoc, names: list[str]) -> bool:
    """Whether `line` cites a rule of the option's doc and writes its default (digits or a word); the
    options table's rows (which give each option's default by name) are not such lines."""
    cited = set(RULE_ID.findall(option.doc))
    value = option.default
    words = {str(value), WORDS.get(value, str(value))}
    return bool(cited & set(RULE_ID.findall(line))) and any(re.search(rf"\b{w}\b", line) for w in words) \
        and not any(f"`{name}`" in line for name in names)


def unchanged_texts(game: str | GameSpec, option: OptionDoc) -> set[str]:
    """The lines stating `option`'s default that read the same under another value of it."""
    rules = make_game(game).spec.rules
    high = rules.limits(option.name)[1]
    other = option.default + 1 if high is None or option.default < high else option.default - 1
    stating = {line for line in texts(game, {}) if states_value(line, option, rules.names())}
    return stating & texts(game, {option.name: other})


def whole_options(game: str) -> list[tuple[str, OptionDoc]]:
    rules = make_game(game).spec.rules
    return [(game, o) for o in rules.describe()
            if isinstance(o.default, int) and not isinstance(o.default, bool) and RULE_ID.search(o.doc)]


@pytest.mark.parametrize(("game", "option"), [case for game in games() for case in whole_options(game)],
                         ids=lambda v: getattr(v, "name", v))
def test_texts_that_state_an_option_follow_it(game: str, option: OptionDoc) -> None:
    unchanged = unchanged_texts(game, option)
    assert not unchanged, f"{game} texts keep {option.name}'s default {option.default}: {sorted(unchanged)}"


MADE_UP = "made_up_ace_draw"
"""The made-up option's name: not `ace_draw`, which is what CONTRIBUTING's "Add a rule option" recipe
would add for B7's penalty, so that these fixtures stay a miss once the real option is added."""


@dataclasses.dataclass(frozen=True)
class AceDrawRules(HuitRules):
    """Huit's rules with B7's penalty made an option, as a contributor might add it, texts untouched: no
    text or engine reads it, whether or not the real `ace_draw` option exists beside it."""

    GAME: ClassVar[str] = "huit"
    made_up_ace_draw: int = option(2, "cards a fresh Ace makes the next player draw (B7)", 1, 5)


def test_an_option_whose_texts_keep_its_default_is_caught() -> None:
    spec = dataclasses.replace(HUIT, rules=AceDrawRules)
    ace_draw = next(o for o in AceDrawRules.describe() if o.name == MADE_UP)
    unchanged = " ".join(unchanged_texts(spec, ace_draw))
    for miss in ("fresh Ace: lay an Ace or 8s, or draw 2 (B7)", "two facing a fresh Ace, B7",
                 "`ace_penalty` | 1 | 1 when the player to move faces a fresh Ace: lay A/8 or draw 2 (B7)"):
        assert miss in unchanged
