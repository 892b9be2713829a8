"""Moved modules and names keep their old import paths for one version, with a DeprecationWarning.

Why: the old paths (`cardlab.training.lean`, `cardlab.agents.base.make_agent`) are in users' code and
in saved pickles; the one table of `cardlab.moved` serves them until the next version, and nothing in
the repository uses them any more. pytest's filterwarnings in pyproject.toml does not turn warnings
into errors, so each check of the warning here is explicit.
"""

from __future__ import annotations

import importlib
import pathlib
import pickle
import re
import sys
from collections.abc import Iterator

import pytest

from cardlab.moved import MOVED, MOVED_NAMES, moved_message

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def forgotten(request: pytest.FixtureRequest) -> Iterator[str]:
    """An old module name, not yet imported (and forgotten after the test, as a fresh process has it)."""
    old: str = request.param
    parent, _, child = old.rpartition(".")

    def forget() -> None:
        sys.modules.pop(old, None)
        if child in vars(sys.modules[parent]):
            delattr(sys.modules[parent], child)

    importlib.import_module(parent)
    forget()
    yield old
    forget()


@pytest.mark.parametrize("forgotten", sorted(MOVED), indirect=True)
def test_an_old_module_path_imports_the_new_module_with_a_warning(forgotten: str) -> None:
    new = MOVED[forgotten]
    with pytest.warns(DeprecationWarning, match=re.escape(moved_message(forgotten, new))):
        module = importlib.import_module(forgotten)
    assert module is importlib.import_module(new) is sys.modules[forgotten]
    assert module.__spec__ is not None  # the module keeps its own name and spec
    assert module.__name__ == module.__spec__.name == new


@pytest.mark.parametrize("forgotten", ["cardlab.training.progress"], indirect=True)
def test_from_the_old_package_import_works_too(forgotten: str) -> None:
    from cardlab.training.harness import progress as new

    with pytest.warns(DeprecationWarning, match=re.escape("cardlab.training.progress moved to")) as caught:
        from cardlab.training import progress  # type: ignore[attr-defined]  # the moved name, found at run time
    assert progress is new
    assert [w.filename for w in caught] == [__file__]  # pinned on the importing line, so Python shows it


@pytest.mark.parametrize("forgotten", ["cardlab.training.policy"], indirect=True)
def test_a_pickle_that_names_an_old_path_still_loads(forgotten: str) -> None:
    """SB3's saved models name the policy class by module: one saved before the move still loads."""
    from cardlab.training.trainers.policy import PrivilegedCriticPolicy

    saved = f"c{forgotten}\nPrivilegedCriticPolicy\n.".encode()  # pickle protocol 0: a global by name
    with pytest.warns(DeprecationWarning, match=re.escape(f"{forgotten} moved to")):
        assert pickle.loads(saved) is PrivilegedCriticPolicy


def test_every_new_module_imports_and_no_old_one_is_a_file() -> None:
    for old, new in MOVED.items():
        assert importlib.import_module(new).__name__ == new
        parent, _, child = old.rpartition(".")
        folder = pathlib.Path(importlib.import_module(parent).__path__[0])
        assert not (folder / f"{child}.py").exists() and not (folder / child).is_dir(), old


def test_an_unknown_name_is_still_not_found() -> None:
    with pytest.raises(ModuleNotFoundError, match=re.escape("cardlab.training.no_such_module")):
        importlib.import_module("cardlab.training.no_such_module")
    base = importlib.import_module("cardlab.agents.base")
    unknown = "'cardlab.agents.base' has no attribute 'no_such_name'"
    with pytest.raises(AttributeError, match=re.escape(unknown)):
        _ = base.no_such_name


MOVED_NAME_ROWS = sorted((module, name, new) for module, names in MOVED_NAMES.items()
                         for name, new in names.items())


@pytest.mark.parametrize(("module", "name", "new"), MOVED_NAME_ROWS)
def test_an_old_name_gives_the_new_object_with_a_warning(module: str, name: str, new: str) -> None:
    old_module = importlib.import_module(module)
    assert name not in vars(old_module)  # moved, not copied
    message = moved_message(f"{module}.{name}", f"{new}.{name}")
    with pytest.warns(DeprecationWarning, match=re.escape(message)):
        found = getattr(old_module, name)
    assert found is getattr(importlib.import_module(new), name)


def test_from_an_old_module_import_an_old_name_is_pinned_on_the_importing_line() -> None:
    with pytest.warns(DeprecationWarning, match="make_agent moved to") as caught:
        from cardlab.agents.base import make_agent
    from cardlab.agents.agent_spec import make_agent as new

    assert make_agent is new and [w.filename for w in caught] == [__file__]


HOLD_OLD_PATHS = (pathlib.Path(__file__), ROOT / "src" / "cardlab" / "moved.py")
"""the files that name old paths on purpose: this one and the tables'"""
SOURCES = ("src", "envs", "agents", "training", "evaluation", "serve", "cluster", "benchmarks", "tests",
           "examples", "docs", "notebooks", "configs")


def repository_texts() -> Iterator[tuple[str, str]]:
    """(path, text) of every file of the repository that names modules; CHANGELOG.md's history aside."""
    yield from ((name, (ROOT / name).read_text(encoding="utf-8"))
                for name in ("README.md", "CONTRIBUTING.md", "pyproject.toml"))
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".yaml", ".ipynb", ".toml", ".json", ".txt") and (
                    path not in HOLD_OLD_PATHS):
                yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def old_path_patterns() -> list[re.Pattern[str]]:
    """What names an old path: a dotted module or name, an import of one, a file path (one pattern each)."""
    children: dict[str, list[str]] = {}
    for old in MOVED:
        parent, _, child = old.rpartition(".")
        children.setdefault(parent, []).append(child)
    names = {parent: list(kids) for parent, kids in children.items()}
    for module, moved in MOVED_NAMES.items():
        names.setdefault(module, []).extend(moved)

    def either(words: list[str]) -> str:
        return "|".join(map(re.escape, sorted(words, key=len, reverse=True)))

    dotted = either([f"{module}.{name}" for module, kids in names.items() for name in kids])
    imported = "|".join(rf"from {re.escape(module)} import (?:[\w, ]*|\([^)]*)\b(?:{either(kids)})\b"
                        for module, kids in names.items())
    paths = either([f"{parent.removeprefix('cardlab.').replace('.', '/')}/{child}.py"
                    for parent, kids in children.items() for child in kids])
    return [re.compile(rf"\b(?:{dotted})\b"), re.compile(imported), re.compile(rf"(?<![\w/.])(?:{paths})\b")]


def test_no_old_path_remains_in_the_repository() -> None:
    patterns = old_path_patterns()
    found = [f"{name}: {m.group(0)}" for name, text in repository_texts() for pattern in patterns
             for m in pattern.finditer(text)]
    assert not found, found
