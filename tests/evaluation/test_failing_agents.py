"""`evaluate` and `cardlab eval` stop on a failing agent with an error that names it and the failure."""

from __future__ import annotations

import pathlib

import pytest

from cardlab.agents.failure import AgentFailure
from cardlab.cli import main
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest
from tests.agents.test_bot import unchecked_overflowing_bot
from tests.failing_agents import register_failing


@pytest.mark.parametrize(("spec", "words"), [
    ("fails-raise", "it raised KeyError"),
    ("fails-illegal", "it chose an illegal move"),
    ("fails-later", "it raised RuntimeError"),
])
def test_evaluate_names_the_failing_agent(spec: str, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    register_failing(monkeypatch)
    with pytest.raises(AgentFailure, match=rf"^{spec} \(slot 1, seat \d, deal 0\) failed: {words}"):
        evaluate(EvalRequest("huit", ["random", spec], hands=4, seed=0))


def test_cardlab_eval_with_an_overflowing_bot_says_which_and_why(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = unchecked_overflowing_bot(tmp_path, monkeypatch)
    code = main(["eval", "--game", "huit", "--agents", f"bot:{path}", "random", "--hands", "4"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "failed: its logits are not finite on this observation" in err[0]
    assert "illegal action 0" not in err[0]


def fail_in_a_worker(who: str) -> None:
    """Raised in a worker process: what a search's round raises when an agent fails there."""
    raise AgentFailure(who, "it raised KeyError", "'7H'")


def test_a_failure_in_a_worker_process_reaches_the_caller_as_itself() -> None:
    """Before: unpickling it failed in the pool's reader thread (`__init__` missing 'reason'), so a
    `search_strength --processes` run ended in BrokenProcessPool and the agent's failure was lost."""
    import concurrent.futures
    import multiprocessing
    import pickle

    err = AgentFailure("search (slot 1, seat 2, deal 7)", "it raised KeyError", "'7H'")
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.who, back.reason, back.detail, str(back)) == \
           (AgentFailure, err.who, err.reason, err.detail, str(err))
    with (concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool,
          pytest.raises(AgentFailure, match=r"^search failed: it raised KeyError \('7H'\)$")):
        pool.submit(fail_in_a_worker, "search").result()
