"""Whole-number options are bounded: a count past any run's reach (``--steps 10^24``) is refused by argparse
in one line naming the option, before anything runs."""

from __future__ import annotations

import pytest

from cardlab.cli import main


@pytest.mark.parametrize(("argv", "option"), [
    (["exploit", "expert", "--game", "huit", "--steps", str(10**24)], "--steps"),
    (["eval", "--game", "huit", "--agents", "random", "random", "--hands", str(10**13)], "--hands"),
    (["exploit", "expert", "--game", "huit", "--steps", "10", "--seed", str(2**64)], "--seed"),
])
def test_a_whole_number_past_its_bound_is_refused_naming_the_option(
        argv: list[str], option: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument {option}: expected a whole number >= " in err and "and at most" in err, err
