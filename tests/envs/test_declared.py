"""One `option()` (`cardlab.envs.declared`) declares a rule option: a made-up one shows in the docs table
and is checked, with no other edit.

Why: the rule options' table (`GameSpec.rules_table`, what `cardlab rules --markdown` and the docs print)
and their checks (`RuleOptions.__post_init__`) read the declaration; a bound declared once is refused in
one line that names the option and the range. B7's draw penalty is the made-up option's example.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from cardlab.envs.declared import Declared, declarations, option
from cardlab.envs.huit.rules import HuitRules
from cardlab.envs.huit.spec import SPEC as HUIT
from cardlab.envs.options import COUNT_HIGH


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
