"""A newcomer's typos, through a real `cardlab` process: one line on stderr that says what to type instead."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

CARDLAB = [sys.executable, "-m", "cardlab"]


def cardlab(*argv: str, cwd: pathlib.Path | None = None) -> tuple[int, list[str]]:
    """Run `cardlab ARGV` in a process: (status, the lines of stderr)."""
    done = subprocess.run([*CARDLAB, *argv], capture_output=True, text=True, timeout=120, cwd=cwd)
    return done.returncode, done.stderr.strip().splitlines()


def test_a_mistyped_shipped_bot_names_the_close_one_and_lists_them(tmp_path: pathlib.Path) -> None:
    code, err = cardlab("eval", "--game", "huit", "--agents", "bot:huit-2", "random", "--hands", "1",
                        cwd=tmp_path)
    assert code == 2 and len(err) == 1
    assert "did you mean bot:huit-2p?" in err[0]
    assert "bot:switch-4p" in err[0] and "bot:huit-2p-match" in err[0]


def test_a_missing_run_folder_is_named_as_given(tmp_path: pathlib.Path) -> None:
    code, err = cardlab("eval", "--game", "huit", "--agents", "bot:runs/nothere", "random", "--hands", "1",
                        cwd=tmp_path)
    assert code == 2 and len(err) == 1
    assert "runs/nothere:" in err[0] and "nothere.json" not in err[0] and "run folder" in err[0]


@pytest.mark.parametrize(("argv", "prog"), [
    (["eval", "--game", "huit"], "cardlab eval"),
    (["eval", "--game", "huit", "--agents", "random", "--hands", "x"], "cardlab eval"),
    (["evl"], "cardlab"),
    ([], "cardlab"),
])
def test_usage_errors_are_one_line(argv: list[str], prog: str) -> None:
    code, err = cardlab(*argv)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"{prog}: error: ") and err[0].endswith(f"(see {prog} --help)")


def test_advise_on_json_that_is_not_a_state_says_so(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"name": "x", "seed": 1}')
    code, err = cardlab("advise", "huit", "--state", str(path), "--agent", "random")
    assert code == 2 and len(err) == 1
    assert "not a saved state" in err[0] and "None" not in err[0]


def test_play_without_opponents_meets_the_shipped_bot_that_fits() -> None:
    done = subprocess.run([*CARDLAB, "play", "huit"], input="", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "opponents: player_1 = bot:huit-2p\n" in done.stdout
    done = subprocess.run([*CARDLAB, "play", "switch"], input="", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.count("= bot:switch-4p") == 3, done.stderr
    code, err = cardlab("play", "switch", "--rule", "num_players=3")  # every Huit table has its bot
    assert code == 2 and "no shipped bot fits a 3-player switch table" in err[0] and "--opponents" in err[0]
