"""The docs table of every training config key, made from the config's declarations.

Why generated: a key's default, what it accepts and what it does are declared once, on its dataclass
field (`cardlab.training.harness.config`: the default and bounds or choices by `option`, the meaning in
the docstring under the field, CleanRL style); a table written by hand would drift from them.
`python docs/update_tables.py` writes it into docs/training.md and tests/test_docs.py holds the page to
it, as for the rule and search options' tables.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import textwrap
import typing
from typing import Any

from cardlab.envs.declared import accepted, declared, quoted
from cardlab.training.harness.config import TrainConfig


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """name -> the docstring under each field of the dataclass `cls` and of its dataclass bases (a field a
    subclass declares again without one keeps its base's), its white space folded."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        (body,) = ast.parse(textwrap.dedent(inspect.getsource(klass))).body
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, body.body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _shown(value: Any) -> str:
    """A default as YAML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value or "''"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _shown(dataclasses.asdict(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _accepts(field: dataclasses.Field[Any], hint: Any) -> str:
    bound = declared(field)
    if bound is not None and bound.choices:
        return quoted(bound.choices)
    if bound is not None and (bound.words or bound.low is not None):
        return accepted(bound)
    kinds = {bool: "true or false", str: "text", int: "a whole number", float: "a number"}
    if typing.get_origin(hint) is dict:
        return "a mapping"
    if typing.get_origin(hint) is list:
        return "a list of " + {str: "agent specs"}.get(typing.get_args(hint)[0], "values")
    return kinds.get(hint, str(hint))


def _rows(cls: type, section: Any, prefix: str) -> list[str]:
    rows = []
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    for field in dataclasses.fields(cls):
        key, hint, value = f"{prefix}{field.name}", hints[field.name], getattr(section, field.name)
        item = typing.get_args(hint)[0] if typing.get_origin(hint) is list else None
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            rows += _rows(hint, value, f"{key}.")
        elif isinstance(item, type) and dataclasses.is_dataclass(item):
            listed = "a list of items with these keys:"
            rows.append(f"| `{key}` | `{_shown(value)}` | {listed} | {docs[field.name]} |")
            rows += _rows(item, item(), f"{key}[].")
        else:
            doc = docs[field.name].replace("|", "\\|")
            rows.append(f"| `{key}` | `{_shown(value)}` | {_accepts(field, hint)} | {doc} |")
    return rows


def config_markdown(config: type = TrainConfig) -> str:
    """The table of every key of a training config (`TrainConfig`, or another config dataclass): its
    default, what it accepts and its meaning, a section's keys dotted (``ppo.gamma``), a list's items as
    ``[]``."""
    lines = ["| key | default | accepted | meaning |", "|---|---|---|---|"]
    return "\n".join(lines + _rows(config, config(), "")) + "\n"
