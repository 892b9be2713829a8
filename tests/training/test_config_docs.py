"""The training config's docs table is made from the declarations: every key, its default, what it accepts
and its docstring (docs/training.md holds it; tests/test_docs.py holds the page to the code)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from cardlab.training.harness.config import TrainConfig, config_to_dict, parse_dataclass
from cardlab.training.harness.config_bounds import bounded, check_declared, word
from cardlab.training.harness.config_docs import config_markdown, field_docs
from cardlab.training.harness.config_tables import RunHeader, header_default


def keys(data: dict[str, Any], prefix: str = "") -> list[str]:
    """Every key path of a config's plain data, a list of mappings' items as ``[]``."""
    out = []
    for key, value in data.items():
        if isinstance(value, dict) and key != "rules":
            out += keys(value, f"{prefix}{key}.")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            out += [f"{prefix}{key}", *keys(value[0], f"{prefix}{key}[].")]
        else:
            out.append(f"{prefix}{key}")
    return out


def test_every_key_of_the_training_config_is_a_row_with_its_docstring() -> None:
    table = config_markdown()
    rows = {m[1]: m[0] for m in re.finditer(r"^\| `([^`]+)` \|.*\|$", table, re.MULTILINE)}
    assert list(rows) == keys(config_to_dict(TrainConfig()))
    assert "| `ppo.gamma` | `0.995` | a discount in (0, 1] | discount factor" in table
    assert "| `trainer` | `maskable_ppo` | 'maskable_ppo', 'lean' | " in table
    assert "| `name` | `cardlab` | letters, digits" in table  # the header's, with TrainConfig's default


@dataclasses.dataclass
class MadeUpConfig(RunHeader):
    name: str = header_default("name", "made-up")
    made_up_count: int = bounded(3, 1, 9)
    """a made-up count"""
    made_up_word: str = word("left", ("left", "right"))
    """a made-up word"""


def test_the_config_key_recipe_followed_on_a_made_up_key_ends_parsed_checked_and_documented() -> None:
    """CONTRIBUTING's "Add a training config key": one declared field with its docstring is parsed, its
    bad values refused in the one wording, and its docs row made, with no other edit."""
    table = config_markdown(MadeUpConfig)
    assert "| `made_up_count` | `3` | a value >= 1 and <= 9 | a made-up count |" in table
    assert "| `made_up_word` | `left` | 'left', 'right' | a made-up word |" in table
    assert parse_dataclass(MadeUpConfig, {"game": "huit", "made_up_count": 9}).made_up_count == 9
    for data, refused in (({"made_up_count": 10}, "made_up_count=10 is out of range; accepted: a value >= 1"),
                          ({"made_up_word": "up"}, "made_up_word='up' is not one of the choices; accepted: "),
                          ({"made_up_count": "x"}, "made_up_count='x' is of the wrong type; accepted: a ")):
        with pytest.raises(ValueError, match=re.escape(refused)):
            check_declared(parse_dataclass(MadeUpConfig, data))


def test_docstrings_are_read_from_the_class_and_its_header() -> None:
    docs = field_docs(MadeUpConfig)
    assert docs["made_up_count"] == "a made-up count" and docs["made_up_word"] == "a made-up word"
    assert docs["name"] == field_docs(RunHeader)["name"] != ""  # declared again without one: the header's
