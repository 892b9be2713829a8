"""Reading YAML files as training configs are read: ``3e-4`` as a float, ``extends:`` chains merged.

`cardlab.training.config` builds configs from what these return; other YAML
files of cardlab (sweep files) are read the same way, so their errors read alike.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from cardlab.envs.checked_json import excerpt


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads ``3e-4`` as a float (YAML 1.1 wants ``3.0e-4``)."""


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
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as f:  # read from the file, so YAML errors name it and the line
            return yaml.load(f, Loader=_Loader)
    except FileNotFoundError:
        raise ValueError(f"{what} {path} does not exist") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{what} {path} is not valid YAML: {' '.join(str(err).split())}") from None


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
