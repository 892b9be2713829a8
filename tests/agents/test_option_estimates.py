"""The expert's estimate follows the rule options it depends on.

Why: the expert reckons with the rules' numbers (who moves after Queens, B8;
the cards a fresh Ace makes one draw, B7), and a number written as the
default's constant stays wrong when an option sets it otherwise, which no play
test sees (the expert still plays legally). So for each rule option whose doc
cites a rule that the expert's docstring cites (the rules its estimate
models), the expert's values over positions where those rules bite must
change under another value of the option.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import textwrap
from typing import Any

import numpy as np
import pytest

from cardlab.agents.heuristics import HuitExpert
from cardlab.envs import cards as C
from cardlab.envs import make_game
from cardlab.envs.game_spec import Game, GameSpec
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.heuristics import kernels as K
from cardlab.envs.huit.spec import SPEC as HUIT
from cardlab.envs.options import OptionDoc
from tests.agents.test_batched_heuristics import positions
from tests.envs.test_option_texts import MADE_UP, RULE_ID, AceDrawRules

MODELLED = set(RULE_ID.findall(HuitExpert.__doc__ or ""))
"""The rules the expert's estimate models, as its docstring cites them."""


def modelled_options(spec: GameSpec) -> list[OptionDoc]:
    return [o for o in spec.rules.describe() if set(RULE_ID.findall(o.doc)) & MODELLED]


def other_value(spec: GameSpec, option: OptionDoc) -> Any:
    """A value of `option` other than its default: the other boolean, or a whole number next to it."""
    if isinstance(option.default, bool):
        return not option.default
    high = spec.rules.limits(option.name)[1]
    return option.default + 1 if high is None or option.default < high else option.default - 1


@functools.cache
def rows() -> tuple[np.ndarray, np.ndarray]:
    """Positions of 4-player hands in which B7 and B8 bite: fresh Aces the mover may draw on, and groups
    of several Queens to lay."""
    observations, masks = positions(make_game("huit", num_players=4), seed=11, count=600)
    layout = make_game("huit", num_players=4).layout
    fresh = (observations[:, layout.slices["ace_penalty"].start] > 0.5) & (masks[:, R.DRAW] != 0)
    queens = np.array([a < R.DRAW and R.ACTION_RANK[a] == C.QUEEN and R.ACTION_SIZE[a] > 1
                       for a in range(R.NUM_ACTIONS)])
    assert fresh.sum() > 5 and (masks[:, queens] != 0).any(axis=1).sum() > 5
    return observations, masks


def estimates(game: Game, expert: type[HuitExpert]) -> np.ndarray:
    observations, masks = rows()
    return expert(game, 0).values_batch(observations, masks)


def ignored(spec: GameSpec, option: OptionDoc, expert: type[HuitExpert] = HuitExpert) -> bool:
    """Whether `expert`'s values at 4 players are the same under `option`'s default and another value."""
    default = estimates(make_game(spec, {"num_players": 4}), expert)
    other = estimates(make_game(spec, {"num_players": 4, option.name: other_value(spec, option)}), expert)
    return bool(np.array_equal(default, other, equal_nan=True))


@pytest.mark.parametrize("option", modelled_options(HUIT), ids=lambda o: o.name)
def test_the_experts_estimate_follows_each_option_of_the_rules_it_models(option: OptionDoc) -> None:
    assert not ignored(HUIT, option), f"the expert's values ignore {option.name}={other_value(HUIT, option)}"


def read_options(expert: type[HuitExpert]) -> set[str]:
    """The names `expert`'s `rule_arrays` (its own and those it overrides) reads as ``self.rules.NAME``:
    the options the expert reckons with."""
    methods = [cls.__dict__["rule_arrays"] for cls in expert.__mro__ if "rule_arrays" in cls.__dict__]
    trees = [ast.parse(textwrap.dedent(inspect.getsource(method))) for method in methods]
    return {node.attr for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and ast.unparse(node.value) == "self.rules"}


def unread_modelled(spec: GameSpec, expert: type[HuitExpert]) -> set[str]:
    """The options of the rules the expert models that its `rule_arrays` does not read."""
    return {o.name for o in modelled_options(spec)} - read_options(expert)


def test_the_expert_models_the_rules_its_options_cite() -> None:
    """The options of the rules the expert models are the ones `rule_arrays` reads (an option added by
    the recipe and read there keeps this green; one not read there fails it and the check above)."""
    assert {"B7", "B8"} <= MODELLED
    assert "queen_skips_each" in {o.name for o in modelled_options(HUIT)}
    assert not unread_modelled(HUIT, HuitExpert), \
        f"HuitExpert.rule_arrays does not read {sorted(unread_modelled(HUIT, HuitExpert))}"


class AceDrawExpert(HuitExpert):
    """The expert as a contributor making B7's penalty an option would leave it right: reading it."""

    def rule_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        ints, floats = super().rule_arrays()
        ints = ints.copy()
        ints[K.ACE_DRAW_AT] = self.rules.made_up_ace_draw
        return ints, floats


def test_an_option_whose_estimate_keeps_its_default_is_caught() -> None:
    """A made-up B7 option added with the expert not reading it fails the check; the expert reading
    `rules.made_up_ace_draw` (in `rule_arrays`) passes it, its single moves as its batches."""
    spec = dataclasses.replace(HUIT, rules=AceDrawRules)
    ace_draw = next(o for o in modelled_options(spec) if o.name == MADE_UP)
    assert ignored(spec, ace_draw)
    assert not ignored(spec, ace_draw, AceDrawExpert)
    assert unread_modelled(spec, HuitExpert) == {MADE_UP}
    assert not unread_modelled(spec, AceDrawExpert)
    game = make_game(spec, {"num_players": 4, MADE_UP: 5})
    observations, masks = rows()
    one = AceDrawExpert(game, 0)
    assert AceDrawExpert(game, 0).act_batch(observations, masks).tolist() == [
        one.act({"observation": o, "action_mask": m}) for o, m in zip(observations, masks, strict=True)]
