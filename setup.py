"""The package list, computed: every `[tool.setuptools.package-dir]` entry and the packages under its folder.

A game (or any subpackage) added as a folder with an `__init__.py` under a
mapped folder is installed without editing a hand-written list; pyproject.toml
holds everything else.
"""

from __future__ import annotations

import pathlib
import sys

from setuptools import find_packages, setup

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the backport, a build requirement there
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent


def packages() -> list[str]:
    """Each mapped package (a data folder without `__init__.py` included) and its subpackages."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    found = set(package_dir)
    for name, folder in package_dir.items():
        found.update(f"{name}.{sub}" for sub in find_packages(str(ROOT / folder)))
    return sorted(found)


setup(packages=packages())
