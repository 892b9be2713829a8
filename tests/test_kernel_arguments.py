"""The batched state as one object: no numba-compiled function of the package takes more than
`MAX_PARAMETERS` parameters, since a kernel takes the state, a player and its scratch arrays each as one
named tuple (`cardlab.envs.huit.batch_state`, `cardlab.envs.switch.batch_state`, `cardlab.envs.playout`)."""

from __future__ import annotations

import ast

from tests.test_game_folders import modules

MAX_PARAMETERS = 12


def compiled(decorator: ast.expr) -> bool:
    """Whether a decorator is numba's (`njit`, `jit`, `numba.njit(...)`, ...)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("njit", "jit", "generated_jit", "vectorize", "guvectorize")


def crowded(tree: ast.AST) -> list[tuple[str, int]]:
    """The compiled functions of a module with more than `MAX_PARAMETERS` parameters, and how many."""
    found = []
    for node in ast.walk(tree):
        function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if function and any(map(compiled, node.decorator_list)):
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
