"""Numbers the docs quote in prose are the code's, or the one place that measured them: each test reads
both and fails when they drift apart."""

from __future__ import annotations

import json
import pathlib
import re

from cardlab.agents.bot_catalogue import SHIPPED_BOTS
from cardlab.envs import make_game
from cardlab.evaluation.request import EvalRequest
from cardlab.training.arena.vector import MAX_NUM_ENVS

ROOT = pathlib.Path(__file__).resolve().parents[1]


def read(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def one(pattern: str, text: str) -> re.Match[str]:
    found = list(re.finditer(pattern, text, re.DOTALL))
    assert len(found) == 1, (pattern, len(found))
    return found[0]


def test_the_main_job_s_duration_is_the_one_its_config_measured() -> None:
    config = read("configs/huit_ppo.yaml")
    measured = one(r"Measured \(seed 1, 2 idle cores, (\d+ min \d+ s) in all", config)[1]
    assert f"On 2 idle cores the main job takes\nabout {measured} after the install" in read("README.md")


def test_the_main_job_is_the_recipe_of_the_shipped_bot_it_is_compared_with() -> None:
    summary = json.loads((SHIPPED_BOTS / "huit-2p.json").read_text())["summary"]
    assert (summary["config"], summary["seed"]) == ("huit_ppo", 1)
    readme = read("README.md")
    assert "cardlab train configs/huit_ppo.yaml  # main job" in readme
    quoted = one(r"within a few hundredths of the table's (0\.\d{3})\nagainst the expert", readme)[1]
    assert quoted == f"{summary['shipped']['win_rate']:.3f}"
    assert f"| `bot:huit-2p` | Huit américain, 2 players, default rules | {quoted} [" in readme


def test_the_main_job_s_bot_has_one_figure_across_the_docs() -> None:
    """The config, the results page and the README give the shipped bot's figure as the recipe's; the runs'
    own smaller checks are named as such."""
    summary = json.loads((SHIPPED_BOTS / "huit-2p.json").read_text())["summary"]
    shipped = f"{summary['shipped']['win_rate']:.3f}"
    config = " ".join(line.lstrip("# ") for line in read("configs/huit_ppo.yaml").splitlines())
    assert f"bot:huit-2p, the run that made it, wins {shipped} of hands against the expert" in config
    results = " ".join(read("docs/results.md").split())
    assert f"The figure of the Huit recipe's bot is the shipped `bot:huit-2p`'s, {shipped} against" in results


def test_the_vector_env_s_size_bound_is_the_code_s() -> None:
    assert f"`num_envs` is 1 to {MAX_NUM_ENVS:,}" in read("docs/own-algorithm.md")


def test_the_example_s_action_counts_are_the_games() -> None:
    huit, switch = (make_game(g, {}).num_actions for g in ("huit", "switch"))
    assert f"most of the {huit} (Huit) or {switch} (Switch) actions" in read("examples/cleanrl_ppo.py")


def test_the_quick_sweep_takes_what_its_file_says() -> None:
    minutes = one(r"About (\d+) minutes on 2 cores", read("configs/sweeps/huit_quick_sweep.yaml"))[1]
    assert f"2 step sizes x 2 seeds, about {minutes} minutes on 2 cores" in read("docs/cluster.md")


def test_the_readme_s_sequential_test_figures_are_the_results_page_s() -> None:
    row = one(r"\| `expert` vs `greedy` \| 0\.50 vs 0\.52 \|[^\n]*", read("docs/results.md"))[0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    mean = one(r"mean (\d+)", cells[4])[1]
    wilson, paired = (c.strip() for c in cells[6].split("/"))
    assert (f"expert against greedy in {mean} hands on average where a fixed-size test needs\n"
            f"{paired} (paired intervals) or {wilson} (Wilson's).") in read("README.md")


def test_the_notebook_names_the_intervals_in_the_table_s_order() -> None:
    notebook = read("notebooks/quickstart.ipynb")
    assert "the first interval is the 95% one clustered by deal (paired), the second Wilson's" in notebook
    from cardlab.evaluation.evaluate import evaluate

    header = next(line for line in evaluate(EvalRequest("huit", ["random", "random"],
                                                        hands=2)).format_table().splitlines()
                  if line.startswith("slot"))
    assert header.index("(paired)") < header.index("Wilson")
