"""The CleanRL-style example trains on the Gymnasium id alone, in a fresh process, and saves an ONNX bot."""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys

import pytest

from cardlab.cli import main
from tests.onnx_helpers import seated, tiny_suite

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "cleanrl_ppo.py"


def test_cleanrl_ppo_runs_a_few_iterations_knowing_only_the_id(tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Claim: the id 'cardlab:cardlab/Huit-v1' is enough to train (the file imports nothing of cardlab at
    the top; saving the ONNX bot at the end calls write_onnx_metadata), and the bot it saves plays a suite."""
    text = EXAMPLE.read_text()
    assert "import cardlab" not in text and text.count("from cardlab") == 1
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--num-envs", "16", "--num-steps", "16", "--total-timesteps", "768",
         "--env-kwargs", '{"num_players": 3, "opponents": ["random", "expert"]}',
         "--save", str(tmp_path / "cleanrl")],
        capture_output=True, text=True, timeout=600, check=True,
    )
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert rows[-1]["steps"] == 768 and rows[-1]["SPS"] > 0 and rows[-1]["episodes"] > 0
    assert all(math.isfinite(r[k]) for r in rows for k in ("pg_loss", "v_loss", "entropy"))
    assert f"wrote {tmp_path / 'cleanrl.onnx'} and {tmp_path / 'cleanrl.json'}" in out.stdout
    meta = json.loads((tmp_path / "cleanrl.json").read_text())
    assert meta["game"] == "huit" and meta["num_players"] == 3 and meta["summary"]["steps"] == 768
    suite = tiny_suite(tmp_path, "huit", 3)
    assert main(["bench", f"bot:{tmp_path / 'cleanrl.onnx'}", "--suite", str(suite)]) == 0
    assert f"bot:{tmp_path / 'cleanrl.onnx'} on suite tiny v1" in capsys.readouterr().out
    seated(tmp_path / "cleanrl.onnx", players=3)
