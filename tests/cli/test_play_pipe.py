"""`cardlab play ... | head`: the reader closing the output ends play quietly, not as the person's failure."""

from __future__ import annotations

import io
import subprocess
import sys

from cardlab.terminal import play


class Closing(io.StringIO):
    """An output that breaks (as a pipe whose reader left) after `lines` lines."""

    def __init__(self, lines: int) -> None:
        super().__init__()
        self.left = lines

    def write(self, text: str) -> int:
        self.left -= text.count("\n")
        if self.left < 0:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


def test_play_ends_quietly_when_its_output_closes() -> None:
    for lines in (1, 5, 40):
        assert play("huit", ["random"], input=io.StringIO("1\n" * 500), output=Closing(lines)) == 0


def test_play_piped_into_head_leaves_no_error() -> None:
    shell = f"yes 1 | {sys.executable} -m cardlab play huit --opponents random | head -3"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120)
    assert len(done.stdout.splitlines()) == 3
    assert "error" not in done.stderr and "Broken" not in done.stderr, done.stderr
