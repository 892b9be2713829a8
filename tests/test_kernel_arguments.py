"""The batched state as one object: no numba-compiled function of the package takes more than
`MAX_PARAMETERS` parameters, since a kernel takes the state, a player and its scratch arrays each as one
tuple (`cardlab.envs.huit.batch_state`, `cardlab.envs.switch.batch_state`, `cardlab.envs.fast_playout`), and
the state's kernel indices follow its named fields."""

from __future__ import annotations

import ast
from types import ModuleType

import pytest

from cardlab.envs.huit import batch_state as huit_state
from cardlab.envs.switch import batch_state as switch_state
from tests.test_game_folders import modules

MAX_PARAMETERS = 12


def compiled(decorator: ast.expr) -> bool:
    """Whether a decorator is numba's (`njit`, `jit`, `numba.njit(...)`, ...)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("njit", "jit", "generated_jit", "vectorize", "guvectorize")


def crowded(tree: ast.AST) -> list[tuple[str, int]]:
    """The compiled functions of a module with more than `MAX_PARAMETERS` parameters, and how many."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if any(map(compiled, node.decorator_list)):
            a = node.args
            count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None)
            if count > MAX_PARAMETERS:
                found.append((node.name, count))
    return found


def test_no_compiled_function_takes_more_than_twelve_parameters() -> None:
    found = {f"{name}.{function}": count for name, path in modules().items()
             for function, count in crowded(ast.parse(path.read_text(), str(path)))}
    assert not found, f"compiled functions over {MAX_PARAMETERS} parameters (bundle them): {found}"


def test_the_check_sees_a_crowded_kernel() -> None:
    params = ", ".join(f"a{i}" for i in range(MAX_PARAMETERS + 1))
    for decorator in ("njit", "njit(cache=True)", "numba.njit(cache=True)", "jit(nopython=True)"):
        source = f"@{decorator}\ndef k({params}):\n    pass\n"
        assert crowded(ast.parse(source)) == [("k", MAX_PARAMETERS + 1)]
    assert crowded(ast.parse(f"def plain({params}):\n    pass\n")) == []


@pytest.mark.parametrize("module", [huit_state, switch_state], ids=["huit", "switch"])
def test_each_field_of_the_state_bundle_has_its_kernel_index(module: ModuleType) -> None:
    """The kernels read the bundle as a plain tuple at the `S_` indices, in the named tuple's order."""
    bundle = module.HuitArrays if module is huit_state else module.SwitchArrays
    assert {name: getattr(module, f"S_{name.upper()}") for name in bundle._fields} == {
        name: i for i, name in enumerate(bundle._fields)}
    assert len([name for name in dir(module) if name.startswith("S_")]) == len(bundle._fields)
