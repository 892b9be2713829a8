"""The docs match the code: generated tables, commands that exist, a version written once.

Why: a table copied by hand drifts from the layout it describes, and a README
that names a command that does not exist sends a newcomer nowhere.
"""

from __future__ import annotations

import importlib
import pathlib
import re
import sys

import pytest

import cardlab
from cardlab.envs import games, make_game
from cardlab.training.cli import COMMANDS

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
update_tables = importlib.import_module("update_tables")


@pytest.mark.parametrize("game", ["switch", "huit"])
def test_readme_tables_are_the_generated_ones(game: str) -> None:
    found = update_tables.blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert game in found, f"README.md has no generated block for {game}"
    assert found[game] == update_tables.generated(game), (
        "README tables drifted: run python docs/update_tables.py"
    )


@pytest.mark.parametrize("game", ["switch", "huit"])
def test_env_doc_pages_end_with_the_generated_tables(game: str) -> None:
    module = importlib.import_module(f"cardlab.envs.{game}_v1")
    assert (module.__doc__ or "").rstrip().endswith(make_game(game).markdown(level=3).rstrip())


def doc_texts() -> dict[str, str]:
    """README, docs, configs and every module docstring, by name."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
             for pattern in ("*.md", "docs/*.md", "configs/*.yaml", "notebooks/*.ipynb")
             for p in ROOT.glob(pattern)}
    for folder in ("envs", "agents", "training", "serve", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return texts


def code_spans(text: str) -> list[str]:
    """The lines of fenced code blocks and the inline code spans of a text."""
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    return [line.strip() for block in fenced for line in block.splitlines()] + inline


def test_every_cardlab_command_named_in_the_docs_exists() -> None:
    named = {(name, m.group(1)) for name, text in doc_texts().items() for span in code_spans(text)
             if (m := re.match(r"(?:\$ )?cardlab ([a-z][a-z-]*)", span))}
    assert len(named) > 5  # the README names train, eval, tournament, play, export, rules
    unknown = sorted((name, cmd) for name, cmd in named if cmd not in COMMANDS)
    assert not unknown, f"commands named in the docs but not in the CLI: {unknown}"


def test_the_version_is_written_once() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and 'attr = "cardlab.__version__"' in pyproject
    assert re.fullmatch(r"\d+\.\d+\.\d+", cardlab.__version__)
    assert f"## {cardlab.__version__}" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_rule_option_docs_cover_every_option() -> None:
    for game in games():
        for option in make_game(game).spec.rules.describe():
            assert option.doc and option.accepted, f"{game}.{option.name} lacks a doc or accepted values"


def test_readme_set_up_works_in_a_fresh_virtual_environment() -> None:
    """The README opens with two commands, each doing the whole set-up in a venv: the main job, the tests."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)
    assert block is not None and readme.startswith("# cardlab\n\n```bash\n")
    main_job, tests = (line.split("  #")[0].strip() for line in block.group(1).splitlines())
    venv = "python -m venv .venv && . .venv/bin/activate && "
    assert ".venv/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    install = "pip install torch==2.13.0 -e {} --config-settings editable_mode=strict"
    assert main_job == f"{venv}{install.format('.')} && cardlab train configs/huit_ppo.yaml"  # no dev extras
    assert tests == f"{venv}{install.format(chr(34) + '.[dev,ray]' + chr(34))} && python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert install.format('".[dev,ray]"').replace("pip install", "pip install -q") in ci  # Ray tests run
    assert ci.rstrip().splitlines()[-3:] == ["ruff check .", "mypy", "python -m pytest"]
    pin = next(line for line in readme.splitlines() if line.startswith("The `torch==2.13.0` pin"))
    assert "CPU" in pin and "GPU" in pin  # what the pin is for, what to do with a GPU: one line


def test_documented_strength_figures_say_where_they_come_from() -> None:
    """The README and the configs quote rates as fractions, with the code that measured them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "commit b03a9c0" in readme and "0.475" in readme  # the issue-11 re-run, attributed
    for name in ("huit_ppo.yaml", "switch_ppo.yaml"):
        lines = (ROOT / "configs" / name).read_text(encoding="utf-8").splitlines()
        comments = "\n".join(line for line in lines if line.startswith("#"))
        assert "commit b03a9c0" in comments, name
        assert not re.search(r"\d%", comments), f"{name}: rates as fractions, as the README shows them"
