"""`cardlab export -o`: a bot's files are new regular files in an existing folder, or replaced with --force;
a failed write names the file asked for, never its temporary neighbour."""

from __future__ import annotations

import os
import pathlib

import pytest

from cardlab.cli import main


def export(capsys: pytest.CaptureFixture[str], output: pathlib.Path | str, *extra: str) -> tuple[int, str]:
    """Export the shipped huit-2p as an ONNX bot to `output`: (exit code, what stderr said)."""
    code = main(["export", "bot:huit-2p", "--format", "onnx", "-o", str(output), *extra])
    return code, capsys.readouterr().err.strip()


def refused(capsys: pytest.CaptureFixture[str], output: pathlib.Path | str, *words: str) -> None:
    code, said = export(capsys, output)
    assert code == 2 and len(said.splitlines()) == 1, said
    for word in words:
        assert word in said, said


def test_an_existing_bot_is_replaced_only_with_force(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert export(capsys, tmp_path / "mine")[0] == 0
    before = (tmp_path / "mine.json").read_bytes()
    refused(capsys, tmp_path / "mine", "mine.json exists already", "--force")
    (tmp_path / "mine.json").unlink()
    refused(capsys, tmp_path / "mine.onnx", "mine.onnx exists already")  # either file of the pair
    assert export(capsys, tmp_path / "mine", "--force")[0] == 0
    assert (tmp_path / "mine.json").read_bytes() == before


def test_a_folders_bot_is_replaced_only_with_force(tmp_path: pathlib.Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bot.json").write_text("{}")
    refused(capsys, tmp_path, f"{tmp_path / 'bot.json'} exists already")
    assert (tmp_path / "bot.json").read_text() == "{}"


def test_targets_that_are_not_regular_files_in_an_existing_folder_are_refused(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused(capsys, "/dev/null", "-o /dev/null: not a regular file or a folder")
    missing = tmp_path / "no" / "such"
    refused(capsys, missing / "mine", f"the folder {missing} does not exist")
    assert not (tmp_path / "no").exists()
    (tmp_path / "mine.json").symlink_to("/dev/null")
    refused(capsys, tmp_path / "mine", "mine.json exists and is not a regular file")
    os.mkfifo(tmp_path / "pipe.onnx")
    refused(capsys, tmp_path / "pipe", "pipe.onnx exists and is not a regular file")


def test_a_failed_write_names_the_file_asked_for(tmp_path: pathlib.Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`-o /proc/x` named its temporary file ``/proc/.tmp-x.onnx-...``; it names /proc/x.onnx."""
    code, said = export(capsys, "/proc/x")
    assert code == 2 and said.startswith("cardlab export: error: /proc/x.onnx: ") and ".tmp" not in said, said


@pytest.mark.parametrize(("name", "why"), [("none", "does not exist"),
                                           ("notes.txt", "is not a checkpoint .zip")])
def test_a_source_that_is_no_run_says_what_it_is(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                 name: str, why: str) -> None:
    """`cardlab export PATH`: a missing path, or a file that is not a checkpoint, says which, in one line."""
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    code = main(["export", str(tmp_path / name), "-o", str(tmp_path / "b")])
    said = capsys.readouterr().err.strip()
    assert code == 2 and len(said.splitlines()) == 1, said
    assert f"{name} {why}: expected a run folder or an existing checkpoint .zip" in said, said
