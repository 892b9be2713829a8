"""Reading YAML files as training configs are read: ``3e-4`` as a float, ``extends:`` chains merged.

`cardlab.training.harness.config` builds configs from what these return; other YAML
files of cardlab (sweep files) are read the same way, so their errors read alike.
The reader bounds what the checked JSON reader bounds, naming the file, the
key path and the line: nesting (PyYAML's composer recurses, a file nested
3,000 deep raised `RecursionError`) and number literals (Python refuses to
convert ints of over 4,300 digits, with an error that named neither).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from cardlab.envs.checked_json import MAX_DEPTH, MAX_NUMBER_CHARS, excerpt, key_names
from cardlab.envs.declared import missing_file, refused_file

_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


class _Refused(ValueError):
    """A YAML text past the reader's bounds; `read_yaml` adds the file's name."""


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads ``3e-4`` as a float (YAML 1.1 wants ``3.0e-4``), within bounds.

    `compose_node` keeps the key path of the node being composed, so that a
    refusal names it (``ppo.learning_rate``, ``opponents[1]``).
    """

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.keys: list[str | int] = []

    def where(self) -> str:
        """The key path being composed, its middle cut when long (a deep file's path is long)."""
        path = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in self.keys[1:]).lstrip(".")
        return (path if len(path) <= 100 else f"{path[:48]}...{path[-48:]}") or "the top level"

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        key: str | int = index if isinstance(index, int) else (
            key_names([str(index.value)], 1) if isinstance(index, yaml.ScalarNode) else "(a key)")
        self.keys.append(key)
        try:
            if len(self.keys) > MAX_DEPTH + 1:
                line = self.peek_event().start_mark.line + 1
                raise _Refused(f"{self.where()} nests more than {MAX_DEPTH} levels deep (line {line}); "
                               f"at most {MAX_DEPTH} levels are accepted")
            node = super().compose_node(parent, index)
            if (isinstance(node, yaml.ScalarNode) and node.tag in _NUMBER_TAGS
                    and len(node.value) > MAX_NUMBER_CHARS):
                raise _Refused(f"{self.where()} is a number of {len(node.value):,} characters (line "
                               f"{node.start_mark.line + 1}); at most {MAX_NUMBER_CHARS} are accepted")
            return node
        finally:
            self.keys.pop()


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                  |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                  |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                  |[-+]?\.(?:inf|Inf|INF)
                  |\.(?:nan|NaN|NAN))$""", re.VERBOSE),
    list("-+0123456789."),
)


def read_yaml(path: str | Path, what: str = "config file") -> Any:
    """The plain data of a YAML file read as configs are (``3e-4`` is a float); None when it is empty."""
    path, layout = Path(path), f"a {what.removesuffix(' file')} is a YAML file"
    try:
        with path.open(encoding="utf-8") as f:  # read from the file, so YAML errors name it and the line
            return yaml.load(f, Loader=_Loader)
    except (FileNotFoundError, IsADirectoryError):
        raise missing_file(what, path, layout, ".yaml") from None
    except UnicodeDecodeError as err:
        reason = f"is not UTF-8 text (byte {err.start}); {layout} of UTF-8 text"
        raise refused_file(what, path, reason) from None
    except yaml.YAMLError as err:
        raise refused_file(what, path, f"is not valid YAML ({' '.join(str(err).split())}); {layout} of "
                                       "key: value lines") from None
    except _Refused as err:
        raise refused_file(what, path, str(err)) from None


EXTENDS = "extends"
"""the config key naming a base config (a path relative to the file) whose keys this file overrides"""


def _read_extended(path: Path, chain: tuple[Path, ...]) -> Any:
    """A config file's data with its ``extends`` chain merged in: the file's keys over its base's.

    Why: the shipped table configs share one recipe and differ in a few keys; a
    base file holds the recipe once. Nested sections merge key by key; lists
    and plain values are replaced.
    """
    data = read_yaml(path)
    if not isinstance(data, dict) or EXTENDS not in data:
        return data
    base_name = data.pop(EXTENDS)
    if not isinstance(base_name, str) or not base_name:
        raise ValueError(f"config file {path}: {EXTENDS} must name a base config file (a path relative to "
                         f"{path.parent}), got {excerpt(base_name)}")
    base_path = (path.parent / base_name).resolve()
    if base_path in chain or base_path == path.resolve():
        raise ValueError(f"config file {path}: {EXTENDS} makes a cycle ("
                         + " -> ".join(str(p) for p in (*chain, path.resolve(), base_path)) + ")")
    base = _read_extended(base_path, (*chain, path.resolve()))
    if base is None:
        base = {}
    if not isinstance(base, dict):
        raise ValueError(f"config file {base_path} (the base of {path}) must be a mapping of keys")
    return _merge(base, data)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        merged[key] = _merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return merged


def read_extended(path: Path) -> Any:
    """The plain data of a config file with its ``extends`` chain merged in (None when it is empty)."""
    return _read_extended(path, ())


T = TypeVar("T")


def load_config_file(path: str | Path, build: Callable[[Any], T], empty: str) -> T:
    """A config file's data (its ``extends`` chain merged in) built and checked by `build`; an empty file is
    refused with `empty` (what such a config names at least), and any `ValueError` of `build` names the
    file."""
    data = read_extended(Path(path))
    if data is None:
        raise ValueError(f"config file {path} is empty: {empty}")
    try:
        return build(data)
    except ValueError as err:
        raise ValueError(f"config file {path}: {err}") from None
