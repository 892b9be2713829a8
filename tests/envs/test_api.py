"""PettingZoo API conformance and text rendering of both envs.

Why: training, evaluation and the CLI drive the envs only through the AEC API,
so PettingZoo's own `api_test` and `seed_test` must pass at several table sizes
and in both episode modes, and `render()` must show what a human needs to play.
"""

from __future__ import annotations

import functools
import re
from types import ModuleType
from typing import Any

import pytest
from pettingzoo import AECEnv
from pettingzoo.test import api_test, seed_test

from cardlab.envs import huit_v1, switch_v1
from tests.envs.helpers import dealt, play

MODULES = [switch_v1, huit_v1]
MODULE_IDS = ["switch", "huit"]

# api_test notes that Dict observations (observation + action_mask) are unusual; they are the
# PettingZoo convention for action masking, so these notes are expected here.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably:UserWarning"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning"),
    pytest.mark.filterwarnings("ignore:.*reset ignores the unknown option"),
]


@pytest.mark.parametrize("num_players", [2, 4, 6])
@pytest.mark.parametrize("module", MODULES, ids=MODULE_IDS)
def test_api(module: ModuleType, num_players: int) -> None:
    api_test(module.env(num_players=num_players), num_cycles=1000)


@pytest.mark.parametrize("num_players", [2, 4, 6])
@pytest.mark.parametrize("module", MODULES, ids=MODULE_IDS)
def test_seed(module: ModuleType, num_players: int) -> None:
    """C2 as PettingZoo checks it: two envs with the same seed and sampled actions agree."""
    seed_test(functools.partial(module.env, num_players=num_players), num_cycles=500)


@pytest.mark.parametrize("module", MODULES, ids=MODULE_IDS)
def test_api_match_episode(module: ModuleType) -> None:
    """A match spans several hands in one episode: the API must hold across the new deals."""
    api_test(module.env(num_players=4, episode="match"), num_cycles=1000)
    seed_test(functools.partial(module.env, num_players=4, episode="match"), num_cycles=500)


# ---------------------------------------------------------------- rendering
SCORES = [11, 22, 33, 44]
SWITCH_HANDS = [["9H", "3C", "KS"], ["5D", "6D"], ["QC", "4S", "4H", "AC"], ["7S"]]
HUIT_HANDS = [["AS", "9H", "10D"], ["7C", "KD"], ["QC", "JS", "JH", "8D"], ["9C"]]


def switch_table(starter: str, render_mode: str = "ansi") -> AECEnv:
    """Seat 3 deals, so seat 0 moves first unless the starter says otherwise (A3, A4)."""
    deal = {"hands": SWITCH_HANDS, "starter": starter, "stock": ["2C", "3D"], "scores": SCORES}
    return dealt(switch_v1.env, deal, render_mode=render_mode)


def huit_table(render_mode: str = "ansi") -> AECEnv:
    """Seat 0 has laid AS (B7): seat 1 faces a fresh Ace."""
    deal = {"hands": HUIT_HANDS, "bank": ["7H", "7D"], "scores": SCORES}
    env = dealt(huit_v1.env, deal, render_mode=render_mode)
    play(env, "play AS")
    return env


def status(text: str, label: str) -> str:
    """The rest of the first line of `text` that starts with `label` (e.g. 'top card')."""
    for line in text.splitlines():
        if line.strip().startswith(label):
            return line.strip()[len(label):]
    raise AssertionError(f"no {label!r} line in the rendered table:\n{text}")


def check_seats(text: str, sizes: list[int]) -> None:
    """Every seat's line shows its hand size and its total."""
    for seat, (size, score) in enumerate(zip(sizes, SCORES, strict=True)):
        assert re.search(rf"player_{seat}\s+{size}\s+{score}\b", text), f"seat {seat} row missing:\n{text}"


def check_mover_hand(text: str, hands: list[list[str]], mover: int) -> None:
    """The hand of the player to move is shown, and no other seat's cards."""
    for card in hands[mover]:
        assert re.search(rf"(?<![0-9A-Z]){card}\b", text), f"{card} of the mover is not shown:\n{text}"
    for seat, hand in enumerate(hands):
        if seat != mover:
            for card in hand:
                assert not re.search(rf"(?<![0-9A-Z]){card}\b", text), f"seat {seat}'s {card} is shown"


def test_switch_ansi_shows_the_table() -> None:
    """A 2 starter (A4): suit hearts, a pending draw of 2 on seat 0."""
    env = switch_table("2H")
    text = env.render()
    assert isinstance(text, str)
    assert "2H" in status(text, "top card")
    assert "hearts" in status(text, "suit")
    assert re.search(r"\b2\b", status(text, "pending draw"))
    check_seats(text, [3, 2, 4, 1])
    check_mover_hand(text, SWITCH_HANDS, mover=0)


def test_switch_ansi_shows_a_reversed_direction() -> None:
    """A King starter (A4) reverses play: the direction line changes and seat 2 moves first."""
    normal, reversed_ = switch_table("7H").render(), switch_table("KH").render()
    assert status(normal, "direction") != status(reversed_, "direction")
    assert status(normal, "pending draw").strip() == "none"
    check_mover_hand(normal, SWITCH_HANDS, mover=0)
    check_mover_hand(reversed_, SWITCH_HANDS, mover=2)


def test_huit_ansi_shows_the_table() -> None:
    """Huit's own lines only: a fresh Ace (B7) is named, and there is no Switch run or direction line."""
    env = huit_table()
    text = env.render()
    assert isinstance(text, str)
    assert "AS" in status(text, "top card")
    assert "spades" in status(text, "suit")
    assert "draw 2" in status(text, "fresh Ace")
    assert "pending draw" not in text and "direction" not in text
    check_seats(text, [2, 2, 4, 1])
    check_mover_hand(text, [["9H", "10D"], *HUIT_HANDS[1:]], mover=1)


@pytest.mark.parametrize("make_table", [functools.partial(switch_table, "2H"), huit_table], ids=MODULE_IDS)
def test_human_mode_prints_the_ansi_text(make_table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """render_mode="human" prints the same table (and prints it again after each step)."""
    expected = make_table("ansi").render()
    human = make_table("human")
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out == expected + "\n"
    human.step(human.unwrapped.legal_actions()[0])
    assert capsys.readouterr().out == human.unwrapped.table_text() + "\n"


@pytest.mark.parametrize("module", MODULES, ids=MODULE_IDS)
def test_render_without_mode_warns_and_returns_none(module: ModuleType) -> None:
    env = module.env()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
