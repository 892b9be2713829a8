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
