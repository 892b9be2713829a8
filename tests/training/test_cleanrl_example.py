"""The CleanRL-style example trains on the Gymnasium id alone, in a fresh process."""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "cleanrl_ppo.py"


def test_cleanrl_ppo_runs_a_few_iterations_knowing_only_the_id() -> None:
    """Claim: the id 'cardlab:cardlab/Huit-v1' is enough (the file imports nothing of cardlab)."""
    assert "import cardlab" not in EXAMPLE.read_text()
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), "--num-envs", "16", "--num-steps", "16", "--total-timesteps", "768",
         "--env-kwargs", '{"num_players": 3, "opponents": ["random", "expert"]}'],
        capture_output=True, text=True, timeout=600, check=True,
    )
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert rows[-1]["steps"] == 768 and rows[-1]["SPS"] > 0 and rows[-1]["episodes"] > 0
    assert all(math.isfinite(r[k]) for r in rows for k in ("pg_loss", "v_loss", "entropy"))
