"""No import circle inside a package: module A imports B (at any depth) and B, through others, A.

Why: a circle is held together by imports inside functions, which only hide it; it ties the modules
into one block that can be neither understood nor imported in parts. `agents/` had one of 15 modules
around `agents/base.py`'s spec dispatcher (now `agents/agent_spec.py`, above the agents it builds);
`envs/` one of four (the game registry, the generic batched engine, the batched API, the AEC env),
through `EPISODES`, now in `envs/match.py` below them.
Imports under ``if TYPE_CHECKING:`` (types only, never run) and the deprecation shims of
`cardlab.moved` (by name, for one version) are not imports here.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
from collections.abc import Iterator

import pytest

PACKAGES = ("cardlab.envs", "cardlab.agents", "cardlab.training", "cardlab.evaluation", "cardlab.serve",
            "cardlab.cluster")


def modules_of(package: str) -> dict[str, pathlib.Path]:
    """Module name -> source file, for the package and everything under it."""
    folder = pathlib.Path(importlib.import_module(package).__path__[0])
    found = {}
    for path in folder.rglob("*.py"):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        found[".".join([package, *parts[:-1]] if parts[-1] == "__init__" else [package, *parts])] = path
    return found


def run_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, at any depth, but those under ``if TYPE_CHECKING:``."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def imported(module: str, path: pathlib.Path, modules: dict[str, pathlib.Path]) -> set[str]:
    """The package's modules that `module` imports: ``from P import m`` imports module P.m if it is one."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in run_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join([*parts, base]) if base else ".".join(parts)
        subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
        found.update(subs if len(subs) == len(node.names) else [base, *subs])
    return {name for name in found if name in modules and name != module}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = stack[stack.index(node):]
                    del stack[stack.index(node):]
                    if len(group) > 1:
                        groups.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(edges[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return groups


def test_the_circle_finder_finds_a_circle_and_only_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(edges) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle_inside_the_package(package: str) -> None:
    modules = modules_of(package)
    edges = {name: imported(name, path, modules) for name, path in modules.items()}
    assert circles(edges) == [], f"{package} imports in a circle"
