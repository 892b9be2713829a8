"""Result files (--json, --csv, --plot): checked up front the way they are written, written through a
temporary file renamed into place, and every error names the file.

Why: a full disk left a 0-byte --json file and an error naming no file; a path the up-front check let
through (/sys/x.json, as root) failed after the whole run; a path under a file was called a missing folder.
"""

from __future__ import annotations

import errno
import os
import pathlib
from typing import Any

import pytest

from cardlab.cli import common, main
from tests.cli.test_cli import fail

EVAL = ["eval", "--game", "huit", "--agents", "random", "random", "--hands", "2"]


def leftovers(folder: pathlib.Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("option", ["--json", "--csv"])
def test_a_full_disk_keeps_the_old_file_and_names_the_new_one(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        option: str) -> None:
    out = tmp_path / "results.out"
    out.write_text("the previous results")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    line = fail([*EVAL, option, str(out)], capsys)
    assert line == f"cardlab eval: error: {out}: no space left on device; free some disk space, or choose " \
                   "another disk"
    assert out.read_text() == "the previous results" and leftovers(tmp_path) == []


def test_a_failed_plot_leaves_no_file(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from cardlab.evaluation.results import EvalResult

    def broken(self: Any, path: pathlib.Path) -> pathlib.Path:
        path.write_bytes(b"\x89PNG half")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(EvalResult, "plot", broken)
    plot = tmp_path / "r.png"
    assert f"{plot}: no space left on device" in fail([*EVAL, "--plot", str(plot)], capsys)
    assert list(tmp_path.iterdir()) == []


def test_written_files_are_whole_and_readable_by_others(tmp_path: pathlib.Path) -> None:
    json_path, png = tmp_path / "r.json", tmp_path / "r.png"
    assert main([*EVAL, "--json", str(json_path), "--plot", str(png)]) == 0
    assert json_path.read_text().startswith("{") and png.read_bytes().startswith(b"\x89PNG")
    umask = os.umask(0)
    os.umask(umask)
    assert json_path.stat().st_mode & 0o777 == 0o666 & ~umask  # as open() makes it, not mkstemp's 0600
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("command", [EVAL, ["compare", "--game", "huit", "expert", "random"]],
                         ids=["eval", "compare"])
def test_a_path_under_a_file_is_refused_before_the_work_as_what_it_is(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    (tmp_path / "A").write_text("a file")
    target = tmp_path / "A" / "x.json"
    line = fail([*command, "--json", str(target)], capsys)
    assert line.endswith(f"cannot write --json {target}: not a directory; a part of the path is a file, "
                         "not a folder")


def test_the_up_front_check_creates_a_file_as_the_write_will(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder `os.access` calls writable where files cannot be made (/sys for root) is refused up front."""
    real_open = os.open

    def sysfs(path: Any, flags: int, mode: int = 0o777) -> int:
        if pathlib.Path(path).parent == tmp_path and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", sysfs)
    target = tmp_path / "x.json"
    assert os.access(tmp_path, os.W_OK)
    assert main([*EVAL, "--json", str(target)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"cardlab eval: error: cannot write --json {target}: permission denied; " \
                                   "check its permissions, or choose a place you can write to"
    assert captured.out == ""  # refused before any hand was played (the table prints after)


def test_an_unwritable_place_in_each_output_option(tmp_path: pathlib.Path) -> None:
    folder = tmp_path / "no"
    for option in ("--json", "--csv", "--plot"):
        with pytest.raises(ValueError, match=rf"cannot write {option} .*: the folder {folder} does not "):
            common.check_output(option, folder / "x.png")
