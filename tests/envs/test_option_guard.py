"""The guard of the batched engines' rule options catches each way of forgetting one.

Why: `check_options_reach_the_batch` (tests/envs/helpers.py) is what fails when a rule option is added
to a game and its batched engine is not told (CONTRIBUTING.md, "Add a rule option"). Here a Huit rule
class with one option more, `probe`, walks through the misses the recipe warns of: no kernel slot and
no declared consumer; declared, but no differential case draws it; drawn, but the declared attribute
does not change with it.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from cardlab.envs.declared import option
from cardlab.envs.huit.batched import HuitBatch
from cardlab.envs.huit.rules import HuitRules
from tests.envs.helpers import check_options_reach_the_batch
from tests.envs.test_huit_batched import CASES as HUIT_CASES


@dataclasses.dataclass(frozen=True)
class ProbeRules(HuitRules):
    """Huit's rules with a new option that no part of the batched engine reads."""

    GAME: ClassVar[str] = "huit"
    probe: bool = option(False, "a new option for the guard to find")


class ProbeBatch(HuitBatch):
    """Huit's batch claiming that `obs_size` depends on `probe` (it does not)."""

    RULES_CLASS: ClassVar[type] = ProbeRules
    OPTIONS_ELSEWHERE: ClassVar[dict[str, str]] = {**HuitBatch.OPTIONS_ELSEWHERE, "probe": "obs_size"}


CASES = [options for options, *_ in HUIT_CASES]
"""Huit's differential cases: an option added to Huit and drawn there is drawn here without an edit."""


def test_an_option_with_no_slot_and_no_consumer_is_caught() -> None:
    with pytest.raises(AssertionError, match=r"\['probe'\] reach no kernel slot and are not declared"):
        check_options_reach_the_batch(HuitBatch, ProbeRules, CASES)


def test_an_option_no_case_draws_is_caught() -> None:
    with pytest.raises(AssertionError, match="no differential case draws a non-default value of probe"):
        check_options_reach_the_batch(ProbeBatch, ProbeRules, CASES)


def test_an_option_that_changes_nothing_it_is_declared_to_feed_is_caught() -> None:
    with pytest.raises(AssertionError, match=r"probe=True leaves ProbeBatch\.obs_size as at the default"):
        check_options_reach_the_batch(ProbeBatch, ProbeRules, [{**case, "probe": True} for case in CASES])


def test_the_same_cases_pass_for_huit_as_it_is() -> None:
    check_options_reach_the_batch(HuitBatch, HuitRules, CASES)
