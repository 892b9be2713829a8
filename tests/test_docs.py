"""The docs match the code: generated tables, links, paths, commands and modules that exist.

Why: a table copied by hand drifts from the layout it describes, and a page
that names a command, a config or a module that does not exist sends a
newcomer nowhere. Every page is checked: README.md and each page of docs/.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import re
import subprocess
import sys
from typing import Any

import pytest

import cardlab
from cardlab.cli import COMMANDS
from cardlab.envs import games, make_game

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
update_tables = importlib.import_module("update_tables")

PAGES = sorted(str(p.relative_to(ROOT)) for p in update_tables.pages())
OWN_PAGES = ["README.md", "CONTRIBUTING.md", "docs/cluster.md", "docs/envs.md", "docs/own-algorithm.md",
             "docs/results.md", "docs/training.md", "docs/web.md"]
"""the pages written for newcomers (docs/RULES.md is the rulebook)"""
README_MAX_LINES = 250

def read(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def code_spans(text: str) -> list[str]:
    """The lines of fenced code blocks and the inline code spans of a text."""
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    return [line.strip() for block in fenced for line in block.splitlines()] + inline


# ---------------------------------------------------------------- the pages

def test_every_page_is_checked_and_linked_from_the_readme() -> None:
    assert set(OWN_PAGES) | {"docs/RULES.md"} <= set(PAGES)
    readme = read("README.md")
    for page in PAGES:
        if page != "README.md":
            assert f"]({page})" in readme, f"README.md does not link {page}"


def test_the_readme_is_short() -> None:
    lines = read("README.md").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines: move detail into docs/"


def test_readme_set_up_works_in_a_fresh_virtual_environment() -> None:
    """The README opens with two commands, each doing the whole set-up in a venv: the main job, the tests."""
    readme = read("README.md")
    block = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)
    assert block is not None and readme.startswith("# cardlab\n\n```bash\n")
    main_job, tests = (line.split("  #")[0].strip() for line in block.group(1).splitlines())
    venv = "python -m venv .venv && . .venv/bin/activate && "
    assert ".venv/" in read(".gitignore").splitlines()
    install = "pip install torch==2.13.0 -e {}"
    assert main_job == f"{venv}{install.format('.')} && cardlab train configs/huit_ppo.yaml"  # no dev extras
    # The tests' set-up is one script, .ci/setup, which CI runs too: what the tests need (Chromium included).
    assert tests == f"{venv}.ci/setup && python -m pytest"
    setup = read(".ci/setup")
    assert STRICT.format('".[dev,ray,rllib]"') in setup
    assert "apt-get install -y -q chromium" in setup
    assert ".ci/setup" in read(".ci/run").splitlines()
    pin = next(line for line in readme.splitlines() if line.startswith("The `torch==2.13.0` pin"))
    assert "CPU" in pin and "GPU" in pin  # what the pin is for, what to do with a GPU: one line


def test_the_readme_test_commands_are_the_ci_ones() -> None:
    """The README's test command is .ci/run's, and its development block is .ci/run's last three lines."""
    readme, ci = read("README.md"), read(".ci/run").rstrip().splitlines()
    first = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)
    assert first is not None
    test_command = first.group(1).splitlines()[1].split("  #")[0].split(" && ")[-1].strip()
    assert test_command == ci[-1] == "python -m pytest"
    blocks = [[line.split("#")[0].strip() for line in b.splitlines()]
              for b in re.findall(r"```bash\n(.*?)```", readme, re.DOTALL)]
    assert ci[-3:] in blocks, f"no README block lists .ci/run's checks {ci[-3:]}"


HISTORY = ((r"(?i)\bissues? #?\d+", "an issue number"),
           (r"(?<![\w`/&])#\d+\b", "an issue number"),
           (r"(?i)\bcommit [0-9a-f]{6,}", "a commit id"),
           (r"(?<![#\w.-])(?<!sha256:)(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", "a commit id"),
           (r"(?i)\bload[ ]averages?\b|\bload[ ](of )?\d+(\.\d+)?( to |-)\d+", "a load-average figure"))
"""what the repository's text must not carry: its history belongs to git and the issue tracker"""
NOT_HISTORY = {".css": r"#[0-9a-fA-F]{3,8}\b", ".ipynb": r'"id": "[0-9a-f-]+"'}
"""what looks like history in a kind of file and is not: CSS colours, notebook cell ids"""


def text_files() -> dict[str, str]:
    """Every text file git tracks (not the binary ones: pictures, weights), by path."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    out = {}
    for name in listed.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data:
            try:
                out[name] = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
    return out


def test_no_issue_numbers_commit_ids_or_load_averages_in_any_text_file() -> None:
    files = text_files()
    assert "README.md" in files and "tests/test_docs.py" in files and "configs/huit_ppo.yaml" in files
    found = []
    for name, text in files.items():
        ignored = NOT_HISTORY.get(pathlib.Path(name).suffix)
        if ignored:
            text = re.sub(ignored, "", text)
        for pattern, what in HISTORY:
            for match in re.finditer(pattern, text):
                found.append(f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {what} {match.group(0)!r}")
    assert not found, "\n".join(found)


CAUGHT = ["see iss" + "ue 26", "fixed in #" + "12", "as of com" + "mit 1a2b" + "3c4", "ran at b03a" + "9c0",
          "load av" + "erage 8 to 9", "(lo" + "ad 8-9)", "Iss" + "ues 3 and 4"]
"""history the guard must catch (written in two parts so that this file does not carry it)"""


@pytest.mark.parametrize("text", CAUGHT)
def test_the_history_guard_catches(text: str) -> None:
    assert any(re.search(pattern, text) for pattern, _ in HISTORY), text


@pytest.mark.parametrize("text", ["2,000,000 steps", "seed 1000004", "sha256 of 64 hex digits", "cards 0..31",
                                  "#hint-box", "deadbeef"])
def test_the_history_guard_lets_pass(text: str) -> None:
    assert not any(re.search(pattern, text) for pattern, _ in HISTORY), text


@pytest.mark.parametrize("page", OWN_PAGES)
def test_no_notes_about_one_machine(page: str) -> None:
    """The reader's machine is not the one a figure was measured on: pages say 'a 2-core machine'."""
    found = re.search(r"(?i)\bth(is|ese) (\d-core )?machines?\b", read(page))
    assert found is None, f"{page} names a note about one machine: {found.group(0)!r}"


# ---------------------------------------------------------------- generated tables

def test_the_env_page_holds_both_games_tables() -> None:
    found = update_tables.blocks(read("docs/envs.md"))
    assert {f"cardlab rules {game} --markdown" for game in ("switch", "huit")} <= set(found), (
        "docs/envs.md lacks a generated block")


def test_the_results_and_the_readme_hold_the_shipped_bots_tables() -> None:
    assert "shipped bots" in update_tables.blocks(read("docs/results.md"))
    assert "shipped bots, brief" in update_tables.blocks(read("README.md"))
    with pytest.raises(ValueError, match="unknown generated block 'shipped robots'"):
        update_tables.generated("shipped robots")


def test_the_training_page_holds_the_config_keys_table() -> None:
    assert "training config" in update_tables.blocks(read("docs/training.md"))


def test_the_results_page_holds_the_speed_table() -> None:
    """Near the top of its Speed section: one run of benchmarks/speed_table.py, each row with its target."""
    speed = read("docs/results.md").partition("\n## Speed\n")[2].partition("\n### ")[0]
    assert "speed table" in update_tables.blocks(speed)


@pytest.mark.parametrize("page", PAGES)
def test_generated_tables_are_the_code_s(page: str) -> None:
    for what, body in update_tables.blocks(read(page)).items():
        assert body == update_tables.generated(what), (
            f"{page}: the generated block {what!r} drifted from the code: run python docs/update_tables.py")


@pytest.mark.parametrize("game", ["switch", "huit"])
def test_env_doc_pages_end_with_the_generated_tables(game: str) -> None:
    module = importlib.import_module(f"cardlab.envs.{game}_v1")
    assert (module.__doc__ or "").rstrip().endswith(make_game(game).markdown(level=3).rstrip())


def test_rule_option_docs_cover_every_option() -> None:
    for game in games():
        for option in make_game(game).spec.rules.describe():
            assert option.doc and option.accepted, f"{game}.{option.name} lacks a doc or accepted values"


def rules_md_options(rules_class: str) -> list[list[str]]:
    """The rows (option, default, accepted, rule) of RULES.md's options table of one `RuleOptions` class."""
    text = read("docs/RULES.md").split("## Rule options", 1)[1]
    table = text.split(f"(`{rules_class}`)", 1)[1].split("\n\n", 2)[1]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def shown_default(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("game", games())
def test_the_rules_page_options_table_is_the_code_s(game: str) -> None:
    """RULES.md's hand-written table names each option of the code, in its order, with its default, its
    range and the rules its doc cites: an option added, removed or changed in the code fails here."""
    rules = make_game(game).spec.rules
    rows = rules_md_options(rules.__name__)
    assert [row[0].strip("`") for row in rows] == rules.names(), f"docs/RULES.md's {rules.__name__} table"
    for (_name, default, accepted, cited), option in zip(rows, rules.describe(), strict=True):
        assert default == shown_default(option.default), f"{option.name}: default {default} in RULES.md"
        if rules.limits(option.name)[0] is not None:
            assert accepted.startswith(option.accepted), f"{option.name}: accepted {accepted} in RULES.md"
        doc_ids = re.findall(r"\b[ABC]\d+\b", option.doc)
        assert re.findall(r"\b[ABC]\d+\b", cited) == doc_ids, f"{option.name}: rule {cited} in RULES.md"


# ---------------------------------------------------------------- links, paths, modules

def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    body = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", body, re.MULTILINE)}


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_resolves(page: str) -> None:
    text = read(page)
    links = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    assert links or page == "docs/RULES.md"
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue  # http(s):, mailto:
        target, _, anchor = link.partition("#")
        path = (ROOT / page).parent / target if target else ROOT / page
        assert path.resolve().exists(), f"{page}: link {link} points to nothing"
        if anchor:
            assert path.suffix == ".md" and anchor in anchors(path.read_text(encoding="utf-8")), (
                f"{page}: link {link}: no heading with that anchor")


def exists(path: str) -> bool:
    if "*" in path:
        return any(ROOT.glob(path))
    return (ROOT / path).exists()


FOLDERS = (".ci", "agents", "benchmarks", "cluster", "configs", "docs", "envs", "evaluation", "notebooks",
           "serve", "src", "tests", "training")
PATH = re.compile(rf"(?<![\w./<-])((?:{'|'.join(map(re.escape, FOLDERS))})/[\w./*-]*)")


def named_paths(text: str) -> set[str]:
    """Repository paths named in code spans (placeholders such as runs/<run> are not paths)."""
    found = set()
    for span in code_spans(text):
        for m in PATH.finditer(span):
            if not re.match(r"[<>]", span[m.end():m.end() + 1]):
                found.add(m.group(1).rstrip("."))
    return found


@pytest.mark.parametrize("page", PAGES)
def test_every_config_and_file_named_exists(page: str) -> None:
    named = named_paths(read(page))
    missing = sorted(path for path in named if not exists(path))
    assert not missing, f"{page} names paths that do not exist: {missing}"


def test_the_readme_names_configs_that_exist() -> None:
    named = {p for p in named_paths(read("README.md")) if p.startswith("configs/")}
    assert {"configs/huit_ppo.yaml", "configs/huit_selfplay.yaml"} <= named and all(exists(p) for p in named)


def resolves(dotted: str) -> bool:
    """A dotted cardlab name is a module, or an attribute of the longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name is not None and name.startswith(err.name):
                continue
            raise
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("page", PAGES)
def test_every_module_named_exists(page: str) -> None:
    named = {m.group(0).rstrip(".") for span in code_spans(read(page))
             for m in re.finditer(r"\bcardlab(?:\.\w+)+", span)}
    missing = sorted(name for name in named if not resolves(name))
    assert not missing, f"{page} names modules or objects that do not exist: {missing}"


# ---------------------------------------------------------------- commands

def cli_commands() -> set[str]:
    """The commands of `cardlab`: the one list in `cardlab.cli`."""
    return set(COMMANDS)


def doc_texts() -> dict[str, str]:
    """The pages, configs, notebooks and every module docstring, by name."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
             for pattern in ("*.md", "docs/*.md", "configs/*.yaml", "configs/sweeps/*.yaml",
                             "notebooks/*.ipynb")
             for p in ROOT.glob(pattern)}
    for folder in ("envs", "agents", "training", "evaluation", "serve", "cluster", "benchmarks", "src"):
        for path in (ROOT / folder).rglob("*.py"):
            texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return texts


def test_every_cardlab_command_named_in_the_docs_exists() -> None:
    named = {(name, m.group(1)) for name, text in doc_texts().items() for span in code_spans(text)
             if (m := re.match(r"(?:\$ )?cardlab ([a-z][a-z-]*)", span))}
    in_pages = {cmd for name, cmd in named if name in PAGES}
    assert {"train", "eval", "tournament", "play", "serve", "advise", "export", "rules", "sweep",
            "ship-bots"} <= in_pages
    commands = cli_commands()
    unknown = sorted((name, cmd) for name, cmd in named if cmd not in commands)
    assert not unknown, f"commands named in the docs but not in the CLI: {unknown}"


# ---------------------------------------------------------------- figures and the version

def test_the_version_is_written_once() -> None:
    pyproject = read("pyproject.toml")
    assert 'dynamic = ["version"]' in pyproject and 'attr = "cardlab.__version__"' in pyproject
    assert re.fullmatch(r"\d+\.\d+\.\d+", cardlab.__version__)
    assert f"## {cardlab.__version__}" in read("CHANGELOG.md")


@pytest.mark.parametrize("game", ["switch", "huit"])
def test_env_pages_name_a_released_version(game: str) -> None:
    """The newest env version's entry names the cardlab release it came with: a CHANGELOG section, no
    later than the package's version."""
    doc = importlib.import_module(f"cardlab.envs.{game}_v1").__doc__ or ""
    newest = re.search(r"^- v\d+ \(cardlab (\d+\.\d+\.\d+)\)", doc, re.MULTILINE)
    assert newest is not None, f"{game}_v1's version history names no cardlab release (x.y.z)"
    assert f"\n## {newest.group(1)}\n" in read("CHANGELOG.md")
    released = tuple(int(part) for part in newest.group(1).split("."))
    assert released <= tuple(int(part) for part in cardlab.__version__.split("."))


def test_documented_strength_figures_say_where_they_come_from() -> None:
    """The results page names the script or command behind each section's figures; rates are fractions."""
    results = read("docs/results.md")
    sections = [s for s in re.split(r"^##+ ", results, flags=re.MULTILINE)[1:] if "|---" in s]
    assert len(sections) >= 8  # speed: 3, strength: 4, headroom
    for section in sections:  # each section with a table of figures
        assert re.search(r"(python benchmarks/\w+\.py|cardlab \w+)", section), (
            f"results.md, {section.splitlines()[0]}: no script or command for its figures")
    assert "0.475" in results and "0.2.0" in results  # the re-run of huit_ppo.yaml on 0.2.0
    for name in ("huit_ppo.yaml", "switch_ppo.yaml"):
        comments = "\n".join(line for line in read(f"configs/{name}").splitlines() if line.startswith("#"))
        assert not re.search(r"\d%", comments), f"{name}: rates as fractions, as the docs show them"


def stub(folder: pathlib.Path, name: str) -> None:
    """A command on the PATH that only logs its arguments (to see what .ci/setup runs)."""
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{folder}/log"\n')
    path.chmod(0o755)


@pytest.mark.parametrize("chromium", [False, True])
def test_the_test_set_up_installs_chromium_only_when_missing(tmp_path: pathlib.Path, chromium: bool) -> None:
    """The README's test command on a fresh machine: .ci/setup gets Debian's Chromium, then the extras."""
    for name in ("apt-get", "sudo", "pip"):
        stub(tmp_path, name)
    browser = tmp_path / "chromium"
    if chromium:
        stub(tmp_path, "chromium")
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}", CARDLAB_CHROMIUM=str(browser))
    done = subprocess.run(["bash", str(ROOT / ".ci/setup")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "log").read_text().splitlines()
    pip = 'pip install -q torch==2.13.0 -e .[dev,ray,rllib] --config-settings editable_mode=strict'
    apt = ["apt-get update -q", "apt-get install -y -q chromium"]
    assert [line.removeprefix("sudo ") for line in log] == ([pip] if chromium else [*apt, pip])


def test_the_notebook_extra_installs_jupyter_and_is_documented() -> None:
    """notebooks/quickstart.ipynb runs by hand after one documented install: the notebook extra's Jupyter."""
    extra = re.search(r"^notebook = \[(.*)\]$", read("pyproject.toml"), re.MULTILINE)
    assert extra is not None and re.search(r'"(jupyterlab|notebook)\b', extra.group(1))
    notebook = 'pip install torch==2.13.0 -e ".[notebook]"'
    assert notebook in read("README.md")


INSTALL = re.compile(r'pip install (?:-q )?torch==2\.13\.0 (?:-e )?(?:\.|"\.\[[a-z,]+\]")(?!\s*--config)')
"""the way a person installs cardlab from a clone: the CPU torch pin, editable (plain: Python follows the
import hook that maps the folders) or not"""
STRICT = "pip install -q torch==2.13.0 -e {} --config-settings editable_mode=strict"
"""the development install of .ci/setup: strict, whose tree of links mypy reads ("Can't find package" else)"""


def test_every_install_line_installs_the_same_way() -> None:
    """Every documented install is the plain editable one, and .ci/setup's the strict one mypy needs."""
    sources = [ROOT / page for page in PAGES if page != "docs/results.md"]  # results.md: see its own tests
    sources += [ROOT / "notebooks" / "quickstart.ipynb"]
    folders = ("src", "envs", "agents", "training", "evaluation", "serve", "cluster", "benchmarks",
               "examples")
    sources += [p for d in folders for p in sorted((ROOT / d).rglob("*.py"))]
    found = 0
    for path in sources:
        for line in path.read_text(encoding="utf-8").splitlines():
            for start in [m.start() for m in re.finditer(r"pip install", line)]:
                found += 1
                assert INSTALL.match(line, start), f"{path.relative_to(ROOT)}: {line.strip()}"
    setup = [line for line in read(".ci/setup").splitlines() if "pip install" in line]
    assert setup == [STRICT.format('".[dev,ray,rllib]"')], setup
    assert found >= 5


def test_the_readme_s_list_of_shipped_bots_names_each_that_is_not_a_table_s_own() -> None:
    """The table bots are named as ranges (``bot:huit-2p`` to ``bot:huit-6p``); every other shipped bot (a
    match bot, a taught bot, a self-play variant) is named in the prose, not only in the generated table."""
    from cardlab.agents.bot_catalogue import shipped_bots

    section = read("README.md").split("## Shipped bots", 1)[1].split("<!-- BEGIN GENERATED", 1)[0]
    prose = " ".join(section.split())
    table_bot = re.compile(r"^bot:(huit|switch)-\d+p$")
    missing = [name for name in shipped_bots() if not table_bot.match(name) and f"`{name}`" not in prose]
    assert not missing, f"README's Shipped bots paragraph does not name {missing}"
