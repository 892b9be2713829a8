"""The README's two install lines leave different gymnasium versions in the shared `.venv/`; the README says
so, and why, with the version the rllib extra pins (as pyproject.toml records it)."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_the_readme_says_why_the_two_lines_leave_different_gymnasium_versions() -> None:
    pinned = re.search(r"RLlib pins gymnasium \((\d+\.\d+\.\d+) for\s*#?\s*Ray (\d+\.\d+)\)",
                       (ROOT / "pyproject.toml").read_text())
    assert pinned, "pyproject.toml's rllib extra no longer records the gymnasium RLlib pins"
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"which pins gymnasium ({pinned[1]} with Ray {pinned[2]})" in readme
    assert "Why not pin one for both" in readme and '".[dev,ray]"' in readme
