"""`cardlab serve` checks the agents its options name at start-up, as `eval` checks its agents."""

from __future__ import annotations

import pytest

from cardlab.cli import main
from cardlab.serve.app import Settings, create_app


@pytest.mark.parametrize(("name", "suggestion"), [("exprt", "expert"), ("bot:huit-2q", "bot:huit-2p"),
                                                  ("nothing-like-it", None)])
def test_an_unknown_opponent_stops_serve_with_one_line(name: str, suggestion: str | None,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--opponent", name, "--port", "1"])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and captured.out == "", captured
    assert lines[0].startswith(f"cardlab serve: error: the default opponent (--opponent) '{name}' is not an "
                               "agent of this server: ")
    assert (f"did you mean {suggestion}?" in lines[0]) == (suggestion is not None)
    assert lines[0].count("expert") <= 2  # each name once in the list


@pytest.mark.parametrize("name", ["expert", "random", "bot:huit", "bot:huit-2p-match", "bot:switch-4p"])
def test_every_agent_name_of_the_server_is_a_valid_opponent(name: str) -> None:
    app = create_app(Settings(opponent=name))
    assert name in app.state.catalogue.names()


def test_the_readme_says_to_activate_the_venv_before_cardlab_serve() -> None:
    """A newcomer in a new shell has no `cardlab` until the venv is active again: the README says so."""
    import pathlib

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    first = readme.index("`cardlab serve`")  # its first mention, right after the set-up lines
    words = "in a new shell, activate the environment first (`. .venv/bin/activate`)"
    assert words in readme[first:first + 300]
